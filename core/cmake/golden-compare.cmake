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
  # Show where: the first lines of a unified diff when diff is available.
  find_program(DIFF diff)
  if(DIFF)
    execute_process(COMMAND "${DIFF}" -u "${EXPECTED}" "${OUT}" OUTPUT_VARIABLE d)
    string(SUBSTRING "${d}" 0 3000 d)
  endif()
  message(FATAL_ERROR "${OUT} differs from ${EXPECTED}:\n${d}")
endif()
