// Memory figures of this process from /proc (Linux), for the benchmarks
// that report resident memory beside their rates.
#ifndef ROUTERTWIN_BENCH_PROC_MEMORY_H
#define ROUTERTWIN_BENCH_PROC_MEMORY_H

#include <cstdio>
#include <cstdlib>
#include <cstring>

// A "Name:   N kB" field of a /proc file of this process in bytes, 0 when
// unknown (e.g. "/proc/self/status", "VmRSS:").
inline double
ProcBytes(const char* file, const char* name)
{
    FILE* f = std::fopen(file, "r");
    if (!f)
        return 0;
    char line[256];
    double kb = 0;
    size_t n = std::strlen(name);
    while (std::fgets(line, sizeof line, f))
        if (std::strncmp(line, name, n) == 0)
            kb = std::strtod(line + n, nullptr);
    std::fclose(f);
    return kb * 1024.0;
}

#endif
