# Configures and builds core/ on its own in a sub-build folder; run by the
# ctest fixtures that set up the cross and sanitizer tests.
#   cmake -DSRC=<core dir> -DBIN=<build dir> -DGEN=<generator>
#         [-DARGS=<|-separated cache arguments>] [-DTARGETS=<|-separated>] -P sub-build.cmake
# Lists use | because ; would split add_test arguments.
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${SRC}" -B "${BIN}" -G "${GEN}" ${args}
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configure of ${BIN} failed (${rc})")
endif()
set(target_args)
if(TARGETS)
  string(REPLACE "|" ";" targets "${TARGETS}")
  set(target_args --target ${targets})
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BIN}" -j 2 ${target_args} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "build of ${BIN} failed (${rc})")
endif()
