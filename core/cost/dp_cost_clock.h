/* Per-ISA counters for the cost harness (dp_cost.c): a cycle or timer
 * register read from user space, and Linux perf events where the kernel
 * offers them. Everything here is optional: what a target cannot count is
 * reported as null, never guessed.
 *
 *   x86-64   rdtsc: the time-stamp counter (constant rate, the nominal clock
 *            on modern parts, not core cycles under turbo or throttling).
 *   aarch64  CNTVCT_EL0: the generic timer, CNTFRQ_EL0 ticks per second
 *            (typically 24-100 MHz, not the core clock). PMCCNTR_EL0 traps
 *            unless the kernel enabled user access, so core cycles come from
 *            perf (PERF_COUNT_HW_CPU_CYCLES), which reads the same counter.
 *   mips64   rdhwr $2: the CP0 Count register (32 bits, one increment per
 *            CCRes cycles, rdhwr $3), readable when the kernel set HWREna
 *            (Linux does). On Octeon (-march=octeon*, __OCTEON__) rdhwr $31
 *            reads CvmCount, the 64-bit count of core cycles (Cavium
 *            Hardware Reference Manual, "CvmCount Register").
 */
#ifndef DP_COST_CLOCK_H
#define DP_COST_CLOCK_H

#include <stdint.h>

#if defined(__linux__)
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#define DP_COST_HAVE_PERF 1
#endif

/* Name of the register cost_ticks() reads. */
static const char *cost_tick_name(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return "tsc";
#elif defined(__aarch64__)
    return "cntvct_el0";
#elif defined(__mips__) && defined(__OCTEON__)
    return "cvmcount";
#elif defined(__mips__)
    return "cp0_count";
#else
    return "none";
#endif
}

/* 1 when cost_ticks() reads a real register on this target. */
static int cost_have_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__mips__)
    return 1;
#else
    return 0;
#endif
}

static inline uint64_t cost_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    uint32_t lo, hi;
    __asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
    return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v)::"memory");
    return v;
#elif defined(__mips__) && defined(__OCTEON__)
    uint64_t v;
    __asm__ __volatile__("rdhwr %0, $31" : "=r"(v)::"memory");
    return v;
#elif defined(__mips__)
    unsigned long v;
    __asm__ __volatile__(".set push\n\t.set mips32r2\n\trdhwr %0, $2\n\t.set pop" : "=r"(v)::"memory");
    return (uint32_t)v; /* 32-bit register: deltas are taken modulo 2^32 */
#else
    return 0;
#endif
}

/* Bits of the tick register (deltas wrap modulo 2^bits). */
static unsigned cost_tick_bits(void)
{
#if defined(__mips__) && !defined(__OCTEON__)
    return 32;
#else
    return 64;
#endif
}

/* Core cycles per tick when known from the hardware (MIPS CCRes, Octeon 1),
 * else 0: x86 TSC and the Arm timer tick at a rate unrelated to the core
 * clock (see cost_tick_hz). */
static uint64_t cost_cycles_per_tick(void)
{
#if defined(__mips__) && defined(__OCTEON__)
    return 1;
#elif defined(__mips__)
    unsigned long v;
    __asm__ __volatile__(".set push\n\t.set mips32r2\n\trdhwr %0, $3\n\t.set pop" : "=r"(v));
    return v;
#else
    return 0;
#endif
}

/* Ticks per second when the hardware says so (Arm CNTFRQ_EL0), else 0. */
static uint64_t cost_tick_hz(void)
{
#if defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(v));
    return v;
#else
    return 0;
#endif
}

/* Linux perf events (user-space instructions and core cycles of this
 * thread); fd -1 when the kernel refuses (perf_event_paranoid, no PMU,
 * qemu-user). */
typedef struct cost_perf {
    int fd_insns;
    int fd_cycles;
} cost_perf_t;

#if defined(DP_COST_HAVE_PERF)
static int cost_perf_open1(uint64_t config)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.type = PERF_TYPE_HARDWARE;
    a.size = sizeof a;
    a.config = config;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return (int)syscall(__NR_perf_event_open, &a, 0, -1, -1, 0);
}
#endif

static void cost_perf_open(cost_perf_t *p)
{
    p->fd_insns = -1;
    p->fd_cycles = -1;
#if defined(DP_COST_HAVE_PERF)
    p->fd_insns = cost_perf_open1(PERF_COUNT_HW_INSTRUCTIONS);
    p->fd_cycles = cost_perf_open1(PERF_COUNT_HW_CPU_CYCLES);
#endif
}

/* Current value of a perf counter, or 0 when it is not open. */
static inline uint64_t cost_perf_read(int fd)
{
    uint64_t v = 0;
#if defined(DP_COST_HAVE_PERF)
    if (fd >= 0 && read(fd, &v, sizeof v) != (ssize_t)sizeof v)
        v = 0;
#else
    (void)fd;
#endif
    return v;
}

#endif
