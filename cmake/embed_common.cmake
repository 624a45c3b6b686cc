# Helpers shared by the build-time embedding scripts (models/embed_zoo.cmake, engine/embed_text.cmake), which run
# in script mode (cmake -P) and turn data files into C++ sources so the binaries read no files at run time.

# memplan_raw_string(<var> <file> <text>): sets <var> to <text> as a C++ raw string literal; fails the build when
# <text> (read from <file>) contains the literal's closing delimiter.
function(memplan_raw_string var file text)
  string(FIND "${text}" ")memplan_embed\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${file} contains the raw-string delimiter")
  endif()
  set(${var} "R\"memplan_embed(${text})memplan_embed\"" PARENT_SCOPE)
endfunction()

# memplan_write_if_changed(<path> <content>): writes only when the content differs, so dependants are not rebuilt.
function(memplan_write_if_changed path content)
  if(EXISTS "${path}")
    file(READ "${path}" old)
    if(old STREQUAL content)
      return()
    endif()
  endif()
  file(WRITE "${path}" "${content}")
endfunction()
