/* Linked statically with the cross C library (crt1.o, libc.a), then run
 * under qemu-user: prints the byte order it sees, which the caller checks. */
#include <stdio.h>

int main(void)
{
    volatile unsigned int word = 0x01020304u;
    printf("%s-endian\n", *(volatile unsigned char *)&word == 1 ? "big" : "little");
    return 0;
}
