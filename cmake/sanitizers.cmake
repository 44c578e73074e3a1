# SIDECORE_SANITIZE: builds every target of the project (library, plugins, tests, examples,
# benchmarks, Fortran bindings) with the named sanitizers. See docs/testing.md.
set(SIDECORE_SANITIZE "" CACHE STRING
  "Sanitizers to build with: empty (none), 'address,undefined', 'address', 'undefined' or 'thread'")
set_property(CACHE SIDECORE_SANITIZE PROPERTY STRINGS "" "address,undefined" "address"
  "undefined" "thread")

if(SIDECORE_SANITIZE)
  string(REPLACE "," ";" _sidecore_sanitizers "${SIDECORE_SANITIZE}")
  foreach(_sanitizer IN LISTS _sidecore_sanitizers)
    if(NOT _sanitizer MATCHES "^(address|undefined|thread)$")
      message(FATAL_ERROR "SIDECORE_SANITIZE='${SIDECORE_SANITIZE}': unknown sanitizer "
        "'${_sanitizer}'; valid: address,undefined | address | undefined | thread")
    endif()
  endforeach()
  if("thread" IN_LIST _sidecore_sanitizers AND "address" IN_LIST _sidecore_sanitizers)
    message(FATAL_ERROR "SIDECORE_SANITIZE='${SIDECORE_SANITIZE}': thread and address cannot "
      "be combined; build them in separate build directories")
  endif()
  # Frame pointers give whole stacks in reports; -fno-sanitize-recover makes the first
  # undefined-behaviour report abort the program, so that the test running it fails.
  set(_sidecore_sanitize_flags -fsanitize=${SIDECORE_SANITIZE} -fno-omit-frame-pointer)
  if("undefined" IN_LIST _sidecore_sanitizers)
    list(APPEND _sidecore_sanitize_flags -fno-sanitize-recover=all)
  endif()
  # -O1 and line tables only (-g1), after the build type's flags so that they win: the
  # optimization the sanitizers' documentation recommends, and file:line in every report, in
  # half the compile time of -O2 -g (docs/testing.md).
  # GCC's uninitialized-use analysis gives false reports under the sanitizers' instrumentation
  # (in libstdc++'s std::regex at -O1); the normal build keeps the warning.
  list(APPEND _sidecore_sanitize_flags -O1 -g1)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    list(APPEND _sidecore_sanitize_flags -Wno-maybe-uninitialized)
  endif()
  add_compile_options(${_sidecore_sanitize_flags})
  add_link_options(-fsanitize=${SIDECORE_SANITIZE})
  message(STATUS "Sidecore: sanitizers ${SIDECORE_SANITIZE} (${_sidecore_sanitize_flags})")
endif()
