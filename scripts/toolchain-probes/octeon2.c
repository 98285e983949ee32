/* Octeon II code run under qemu-user's Octeon68XX CPU. That CPU model has no
 * FPU, and glibc's start-up code saves FP registers, so this program has no
 * C library: its own entry point and raw n64 system calls. Built with
 * -march=octeon2, __builtin_popcountll becomes the Octeon-only DPOP
 * instruction, so a run proves the compiler emits Octeon code and the
 * emulator executes it (a generic MIPS64R2 CPU stops with SIGILL). */
#define SYS_WRITE 5001      /* n64 ABI: __NR_Linux (5000) + 1 */
#define SYS_EXIT_GROUP 5205 /* n64 ABI: __NR_Linux + 205 */

static long syscall3(long number, long a, long b, long c)
{
    register long v0 __asm__("$2") = number;
    register long a0 __asm__("$4") = a;
    register long a1 __asm__("$5") = b;
    register long a2 __asm__("$6") = c;
    register long a3 __asm__("$7");
    __asm__ volatile("syscall"
                     : "+r"(v0), "=r"(a3)
                     : "r"(a0), "r"(a1), "r"(a2)
                     : "$1", "$3", "$8", "$9", "$10", "$11", "$12", "$13", "$14", "$15", "$24",
                       "$25", "hi", "lo", "memory");
    return a3 ? -v0 : v0;
}

static volatile unsigned long long word = 0xF0F0F0F0F0F0F0F1ull; /* 33 bits set */

void __start(void)
{
    int bits = __builtin_popcountll(word);
    char msg[] = "octeon2 popcount=00\n";
    msg[17] = (char)('0' + bits / 10);
    msg[18] = (char)('0' + bits % 10);
    syscall3(SYS_WRITE, 1, (long)msg, (long)(sizeof msg - 1));
    syscall3(SYS_EXIT_GROUP, bits == 33 ? 0 : 1, 0, 0);
    for (;;) {
    }
}
