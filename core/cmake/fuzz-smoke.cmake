# Bounded libFuzzer run over the committed seed corpus. New inputs go to a
# scratch folder in the build tree, never into the source tree; a crashing
# input is kept in ARTIFACTS.
#   cmake -DFUZZER=<fuzz_parse> -DCORPUS=<seed dir> -DWORK=<scratch dir>
#         -DARTIFACTS=<dir> -DRUNS=<n> -P fuzz-smoke.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}" "${ARTIFACTS}")
execute_process(COMMAND "${FUZZER}" "${WORK}" "${CORPUS}" -runs=${RUNS} -seed=1 -max_len=1600
                        -print_final_stats=1 "-artifact_prefix=${ARTIFACTS}/"
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "fuzz_parse found a failure (${rc}); the crashing input is in ${ARTIFACTS}")
endif()
