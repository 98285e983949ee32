# Stands in for a test whose tool is missing, so the suite cannot pass
# without it: fails with the message given.
#   cmake -DMSG=<text> -P missing-tool.cmake
message(FATAL_ERROR "${MSG}")
