# Runs dp_golden (under an emulator for cross builds) and compares its
# transcript byte for byte with the committed expected.txt.
#   cmake -DCMD=<dp_golden> -DVECTORS=<dir> -DEXPECTED=<file> -DOUT=<file>
#         [-DEMULATOR=<|-separated command prefix>] -P golden-compare.cmake
string(REPLACE "|" ";" emulator "${EMULATOR}")
get_filename_component(out_dir "${OUT}" DIRECTORY)
file(MAKE_DIRECTORY "${out_dir}")
execute_process(COMMAND ${emulator} "${CMD}" "${VECTORS}"
                OUTPUT_FILE "${OUT}" ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "dp_golden failed (${rc}): ${err}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${OUT}" "${EXPECTED}" RESULT_VARIABLE same)
if(same)
  # Name the first differing line so a failure says where, not just that.
  file(STRINGS "${OUT}" got)
  file(STRINGS "${EXPECTED}" want)
  list(LENGTH got ngot)
  list(LENGTH want nwant)
  set(i 0)
  while(i LESS ngot AND i LESS nwant)
    list(GET got ${i} g)
    list(GET want ${i} w)
    if(NOT g STREQUAL w)
      math(EXPR line "${i} + 1")
      message(FATAL_ERROR "${OUT} differs from ${EXPECTED} at line ${line}:\n  got:  ${g}\n  want: ${w}")
    endif()
    math(EXPR i "${i} + 1")
  endwhile()
  message(FATAL_ERROR "${OUT} differs from ${EXPECTED}: ${ngot} lines vs ${nwant}")
endif()
