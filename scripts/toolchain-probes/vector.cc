// Compiled by clang++ with AddressSanitizer, as the core's sanitizer build
// compiles its GoogleTest tests: needs the C++ standard library headers.
#include <cstdio>
#include <vector>

int main()
{
    std::vector<int> v{1, 2, 3};
    std::printf("%d\n", v[0] + v[1] + v[2]);
    return 0;
}
