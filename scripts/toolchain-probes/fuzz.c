/* Links clang's libFuzzer with AddressSanitizer and UBSan, as the core's
 * fuzz and sanitizer tests do; run for one input. */
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)data;
    (void)size;
    return 0;
}
