# ctest entries of the main build tree that exercise the core beyond its
# unit tests: golden vectors on the host and, under qemu-user, on mips64
# (big-endian) and aarch64; an ASan+UBSan build of the unit tests; a bounded
# libFuzzer run. Each sub-build is a fixture setup test that configures and
# builds core/ standalone into ${RT_CORE_SUB}/<name>, so the main build does
# not depend on cross compilers. A missing tool (cross gcc, qemu-user,
# clang; scripts/setup.sh installs them all) does not silently drop its
# tests: they are registered as failing tests that name the tool, unless
# -DRT_ALLOW_MISSING_TOOLS=ON says the machine knowingly lacks it.
# All paths derive from the source and build trees (works from any clone).
option(RT_ALLOW_MISSING_TOOLS
       "Skip (instead of failing) the cross/qemu golden and clang sanitizer/fuzz tests when their tools are missing" OFF)
set(RT_CORE_SUB ${CMAKE_BINARY_DIR}/core-sub)

# Registers tests that fail, naming what is missing, in place of tests that
# cannot run here; with RT_ALLOW_MISSING_TOOLS only a configure message.
function(rt_core_missing what)
  set(msg "${what} not found: install with scripts/setup.sh, or configure with -DRT_ALLOW_MISSING_TOOLS=ON to skip this test knowingly")
  list(JOIN ARGN ", " tests)
  if(RT_ALLOW_MISSING_TOOLS)
    message(STATUS "core: ${what} not found; skipping ${tests} (RT_ALLOW_MISSING_TOOLS=ON)")
    return()
  endif()
  message(WARNING "core: ${what} not found; ${tests} will fail until installed")
  foreach(t ${ARGN})
    add_test(NAME ${t} COMMAND ${CMAKE_COMMAND} "-DMSG=${t}: ${msg}"
                                -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/missing-tool.cmake)
  endforeach()
endfunction()
set(rt_golden_vectors ${CMAKE_CURRENT_SOURCE_DIR}/golden/vectors)
set(rt_golden_expected ${CMAKE_CURRENT_SOURCE_DIR}/golden/expected.txt)

add_test(NAME core_golden_host
  COMMAND ${CMAKE_COMMAND} -DCMD=$<TARGET_FILE:dp_golden> -DVECTORS=${rt_golden_vectors}
          -DEXPECTED=${rt_golden_expected} -DOUT=${RT_CORE_SUB}/golden-host.txt
          -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/golden-compare.cmake)

# The committed transcript itself is checked against Python
# re-implementations (parser verdicts and fields, checksums, LPM by linear
# scan, flow hash), so it is more than "what the host printed once".
if(Python_EXECUTABLE)
  add_test(NAME core_golden_expected_independent
    COMMAND ${Python_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/golden/check_expected.py
            ${rt_golden_vectors} ${rt_golden_expected})
endif()

# Sub-builds share one lock: each already uses both cores.
function(rt_core_sub_build name)
  cmake_parse_arguments(PARSE_ARGV 1 a "" "" "ARGS;TARGETS")
  list(JOIN a_ARGS "|" args)
  list(JOIN a_TARGETS "|" targets)
  add_test(NAME core_${name}_build
    COMMAND ${CMAKE_COMMAND} -DSRC=${CMAKE_CURRENT_SOURCE_DIR} -DBIN=${RT_CORE_SUB}/${name}
            -DGEN=${CMAKE_GENERATOR} "-DARGS=${args}" "-DTARGETS=${targets}"
            -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/sub-build.cmake)
  set_tests_properties(core_${name}_build PROPERTIES
    FIXTURES_SETUP core_${name} RESOURCE_LOCK core_sub_build TIMEOUT 300)
endfunction()

function(rt_core_cross arch triple)
  find_program(RT_CC_${arch} ${triple}-gcc)
  find_program(RT_QEMU_${arch} qemu-${arch})
  if(NOT RT_CC_${arch} OR NOT RT_QEMU_${arch})
    set(missing)
    if(NOT RT_CC_${arch})
      list(APPEND missing ${triple}-gcc)
    endif()
    if(NOT RT_QEMU_${arch})
      list(APPEND missing qemu-${arch})
    endif()
    list(JOIN missing " and " missing)
    set(tests core_golden_${arch})
    if(arch STREQUAL "mips64" AND NOT RT_CC_${arch})
      list(APPEND tests core_octeon2_compiles)
    endif()
    rt_core_missing("${missing}" ${tests})
    return()
  endif()
  rt_core_sub_build(${arch}
    ARGS -DCMAKE_TOOLCHAIN_FILE=${CMAKE_SOURCE_DIR}/cmake/toolchains/${triple}.cmake
         -DCMAKE_BUILD_TYPE=Release
    TARGETS dp_golden dp_cost)
  list(JOIN ARGN "|" emulator)
  add_test(NAME core_golden_${arch}
    COMMAND ${CMAKE_COMMAND} "-DEMULATOR=${RT_QEMU_${arch}}|${emulator}"
            -DCMD=${RT_CORE_SUB}/${arch}/dp_golden -DVECTORS=${rt_golden_vectors}
            -DEXPECTED=${rt_golden_expected} -DOUT=${RT_CORE_SUB}/golden-${arch}.txt
            -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/golden-compare.cmake)
  set_tests_properties(core_golden_${arch} PROPERTIES FIXTURES_REQUIRED core_${arch} TIMEOUT 120)
endfunction()

rt_core_cross(mips64 mips64-linux-gnuabi64 -cpu MIPS64R2-generic -L /usr/mips64-linux-gnuabi64)
rt_core_cross(aarch64 aarch64-linux-gnu -L /usr/aarch64-linux-gnu)

# The instruction-count table (core/cost/insn_counts.csv) cannot drift from
# the code: a few operations are recounted on all three ISAs (callgrind on
# the host, qemu-user with the tree's TCG plugin for mips64 and aarch64)
# and compared with it. The host binary is a standalone Release sub-build,
# as core/cost/count_insns.py builds it.
find_program(RT_VALGRIND valgrind)
if(RT_VALGRIND AND RT_CC_mips64 AND RT_CC_aarch64 AND RT_QEMU_mips64 AND RT_QEMU_aarch64 AND Python_EXECUTABLE)
  rt_core_sub_build(cost_host ARGS -DCMAKE_BUILD_TYPE=Release TARGETS dp_cost)
  add_test(NAME core_cost_insn_table
    COMMAND ${Python_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cost/count_insns.py --check
            --only parse,ttl,lpm_lookup_small,session_lookup,sched_maglev,path_l4_nat
            --bin x86_64=${RT_CORE_SUB}/cost_host/dp_cost --bin mips64=${RT_CORE_SUB}/mips64/dp_cost
            --bin aarch64=${RT_CORE_SUB}/aarch64/dp_cost --build-dir ${RT_CORE_SUB}/cost-plugin)
  set_tests_properties(core_cost_insn_table PROPERTIES
    FIXTURES_REQUIRED "core_cost_host;core_mips64;core_aarch64" TIMEOUT 180)
elseif(NOT RT_VALGRIND)
  rt_core_missing(valgrind core_cost_insn_table)
endif()

# The core must also compile for the Octeon ISA proper (Octeon extensions
# cannot run under qemu-user here; see the mips64 toolchain file).
if(RT_CC_mips64)
  add_test(NAME core_octeon2_compiles
    COMMAND ${CMAKE_COMMAND} -DSRC=${CMAKE_CURRENT_SOURCE_DIR} -DBIN=${RT_CORE_SUB}/octeon2
            -DGEN=${CMAKE_GENERATOR}
            "-DARGS=-DCMAKE_TOOLCHAIN_FILE=${CMAKE_SOURCE_DIR}/cmake/toolchains/mips64-linux-gnuabi64.cmake|-DRT_MIPS64_MARCH=octeon2"
            "-DTARGETS=dp_golden|dp_cost" -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/sub-build.cmake)
  set_tests_properties(core_octeon2_compiles PROPERTIES RESOURCE_LOCK core_sub_build TIMEOUT 300)
endif()

# One bounded libFuzzer smoke run per harness fuzz/fuzz_<name>.c over its seed
# corpus fuzz/corpus-<name>: name:runs:max_len, sized to about 5 s each under
# ASan (runs are fewer where one input costs more: table fills and
# delete-all per LPM input, up to 64 KiB frames per build input, a pool
# clone and table rebuilds per sched input, a parse, rewrite and re-parse
# per NAT input, one to three SipHash calls per SYN-cookie input, a model
# check of every connection after each session operation, two answers, an
# outcome model and a decode per DNS input; three parses, one of them byte
# by byte, per HTTP input; a model step per health report and stick-table
# operation).
set(rt_fuzz_smokes parse:200000:1600 lpm:3000:256 build:10000:1600 nat:100000:1600
    syncookie:250000:1600 sched:3000:512 session:20000:512 dns:80000:1600
    http:25000:600 tls:100000:1600 splice:20000:1600 health:150000:512 persist:60000:512)
set(rt_fuzz_targets)
set(rt_fuzz_tests)
foreach(h ${rt_fuzz_smokes})
  string(REGEX REPLACE ":.*" "" name "${h}")
  list(APPEND rt_fuzz_targets fuzz_${name})
  list(APPEND rt_fuzz_tests core_fuzz_${name}_smoke)
endforeach()
file(GLOB rt_fuzz_sources RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}/fuzz ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_*.c)
foreach(source ${rt_fuzz_sources})
  string(REGEX REPLACE "\\.c$" "" target "${source}")
  if(NOT target IN_LIST rt_fuzz_targets)
    message(FATAL_ERROR "core/fuzz/${source} has no smoke run: add it to rt_fuzz_smokes in ${CMAKE_CURRENT_LIST_FILE}")
  endif()
endforeach()

# Sanitizers and libFuzzer need clang (libFuzzer ships with clang's runtime).
find_program(RT_CLANG NAMES clang-14 clang)
find_program(RT_CLANGXX NAMES clang++-14 clang++)
if(RT_CLANG AND RT_CLANGXX)
  rt_core_sub_build(asan
    ARGS -DCMAKE_C_COMPILER=${RT_CLANG} -DCMAKE_CXX_COMPILER=${RT_CLANGXX}
         -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRT_CORE_TESTS=ON -DRT_CORE_SANITIZE=ON -DRT_CORE_FUZZ=ON
    TARGETS core_tests ${rt_fuzz_targets})
  # The largest sub-build (every unit-test source and harness under ASan):
  # measured here from scratch at ~4 min of 2 busy cores with the L7 areas
  # added, so it gets twice the other sub-builds' cap.
  set_tests_properties(core_asan_build PROPERTIES TIMEOUT 600)
  # The 1M-route fill and the 8M-session fill are left to the host run:
  # under ASan they cost ~20 s each and their tables are one allocation, so
  # ASan would see nothing the small random tables do not already show.
  add_test(NAME core_asan_ubsan_tests
    COMMAND ${RT_CORE_SUB}/asan/tests/core_tests
            --gtest_filter=-Lpm.HoldsAMillionRoutes:SessionTable.HoldsEightMillionSessionsInOneShard)
  set_tests_properties(core_asan_ubsan_tests PROPERTIES FIXTURES_REQUIRED core_asan TIMEOUT 300
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1")
  foreach(h ${rt_fuzz_smokes})
    string(REPLACE ":" ";" h "${h}")
    list(GET h 0 name)
    list(GET h 1 runs)
    list(GET h 2 max_len)
    add_test(NAME core_fuzz_${name}_smoke
      COMMAND ${CMAKE_COMMAND} -DFUZZER=${RT_CORE_SUB}/asan/fuzz_${name}
              -DCORPUS=${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus-${name} -DWORK=${RT_CORE_SUB}/fuzz-work-${name}
              -DARTIFACTS=${RT_CORE_SUB}/fuzz-artifacts -DRUNS=${runs} -DMAX_LEN=${max_len}
              -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/fuzz-smoke.cmake)
    set_tests_properties(core_fuzz_${name}_smoke PROPERTIES FIXTURES_REQUIRED core_asan TIMEOUT 120)
  endforeach()
else()
  rt_core_missing("clang-14 (or clang) and clang++" core_asan_ubsan_tests ${rt_fuzz_tests})
endif()
