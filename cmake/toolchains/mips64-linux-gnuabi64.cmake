# Cross build for 64-bit big-endian MIPS (Cavium/Marvell Octeon), n64 ABI,
# with Debian's gcc-mips64-linux-gnuabi64. Statically linked so the binaries
# run under qemu-user without a sysroot:
#   qemu-mips64 -cpu MIPS64R2-generic -L /usr/mips64-linux-gnuabi64 ./dp_golden
#
# RT_MIPS64_MARCH picks the ISA. The default, mips64r2 tuned for Octeon II,
# is the base ISA every Octeon implements and runs under qemu-user. Set it
# to octeon2 (or octeon3) for hardware builds: qemu's Octeon68XX model has no
# FPU, so glibc's start-up code (which saves FP registers) cannot run on it
# and Octeon-extension binaries cannot be tested under emulation here.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR mips64)
set(CMAKE_C_COMPILER mips64-linux-gnuabi64-gcc)
set(RT_MIPS64_MARCH "mips64r2" CACHE STRING "-march for the mips64 cross build (mips64r2, octeon2, octeon3)")
set(CMAKE_C_FLAGS_INIT "-march=${RT_MIPS64_MARCH} -mtune=octeon2 -mabi=64 -EB")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_FIND_ROOT_PATH /usr/mips64-linux-gnuabi64)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-mips64 -cpu MIPS64R2-generic -L /usr/mips64-linux-gnuabi64)
