# Writes OUT, a header defining ABYSS_GIT_REV as the source tree's commit
# (with "-dirty" when tracked files differ from it), at every build rather
# than at configure time; the file is rewritten only when the value changes,
# so an unchanged revision rebuilds nothing.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
if(failed OR NOT rev)
  set(rev "unknown")
else()
  execute_process(COMMAND git diff --quiet HEAD -- WORKING_DIRECTORY ${SRC} RESULT_VARIABLE dirty)
  if(dirty)
    string(APPEND rev "-dirty")
  endif()
endif()
set(text "#define ABYSS_GIT_REV \"${rev}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUT} "${text}")
endif()
