# Bounded libFuzzer run over the committed seed corpus. New inputs go to a
# scratch folder in the build tree, never into the source tree; a crashing
# input is kept in ARTIFACTS.
#   cmake -DFUZZER=<fuzz_parse|fuzz_lpm|fuzz_build> -DCORPUS=<seed dir> -DWORK=<scratch dir>
#         -DARTIFACTS=<dir> -DRUNS=<n> [-DMAX_LEN=<bytes, default 1600>] -P fuzz-smoke.cmake
if(NOT MAX_LEN)
  set(MAX_LEN 1600)
endif()
get_filename_component(name "${FUZZER}" NAME)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}" "${ARTIFACTS}")
execute_process(COMMAND "${FUZZER}" "${WORK}" "${CORPUS}" -runs=${RUNS} -seed=1 -max_len=${MAX_LEN}
                        -print_final_stats=1 "-artifact_prefix=${ARTIFACTS}/"
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "${name} found a failure (${rc}); the crashing input is in ${ARTIFACTS}")
endif()
