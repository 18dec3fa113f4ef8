# Sanitizer and fuzzing builds (included from the top CMakeLists.txt before any target).
#
#   -DTRTLLM_RUN_SANITIZE=address,undefined
#       Instruments every target of the build (library, plugins, CLI, tests, fuzzers) with
#       the listed sanitizers: address (AddressSanitizer + LeakSanitizer), undefined
#       (UBSan), leak (LeakSanitizer alone) or thread. UBSan findings abort the process
#       (-fno-sanitize-recover=all), so a test that hits undefined behaviour fails. Works
#       with g++ and clang++ (CI: clang++, see tests/run.sh). Plugins are instrumented too; they are dlopen'ed by
#       instrumented executables, which carry the sanitizer runtime.
#   -DTRTLLM_RUN_BUILD_FUZZERS=ON  (clang++ only)
#       Builds the libFuzzer targets in fuzz/ and instruments the core library for
#       coverage (-fsanitize=fuzzer-no-link). Combine with TRTLLM_RUN_SANITIZE=address,...
#       so that memory errors are found, not only crashes. The fuzz targets' replay
#       programs (corpus + regression inputs run as ordinary tests) are built in every
#       build, with any compiler.
set(TRTLLM_RUN_SANITIZE "" CACHE STRING
    "Comma-separated sanitizers for every target: address, undefined, leak, thread")
option(TRTLLM_RUN_BUILD_FUZZERS "Build the libFuzzer targets in fuzz/ (needs clang++)" OFF)

set(TRTLLM_RUN_SANITIZER_FLAGS "")
if(TRTLLM_RUN_SANITIZE)
  string(REPLACE "," ";" _trtllm_run_sanitizers "${TRTLLM_RUN_SANITIZE}")
  foreach(sanitizer IN LISTS _trtllm_run_sanitizers)
    if(NOT sanitizer MATCHES "^(address|undefined|leak|thread)$")
      message(FATAL_ERROR "TRTLLM_RUN_SANITIZE: unknown sanitizer '${sanitizer}' in "
                          "'${TRTLLM_RUN_SANITIZE}'; valid: address, undefined, leak, thread "
                          "(comma-separated, e.g. address,undefined)")
    endif()
  endforeach()
  if("thread" IN_LIST _trtllm_run_sanitizers AND
     ("address" IN_LIST _trtllm_run_sanitizers OR "leak" IN_LIST _trtllm_run_sanitizers))
    message(FATAL_ERROR "TRTLLM_RUN_SANITIZE: thread cannot be combined with address or leak")
  endif()
  list(JOIN _trtllm_run_sanitizers "," _trtllm_run_sanitizer_list)
  set(TRTLLM_RUN_SANITIZER_FLAGS -fsanitize=${_trtllm_run_sanitizer_list}
      -fno-omit-frame-pointer)
  if("undefined" IN_LIST _trtllm_run_sanitizers)
    list(APPEND TRTLLM_RUN_SANITIZER_FLAGS -fno-sanitize-recover=all)
    # Known UB in RapidJSON 1.1.0's headers (see the file). clang skips exactly those
    # headers; g++ has no ignore lists, so it drops the three checks involved everywhere.
    if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
      list(APPEND TRTLLM_RUN_SANITIZER_FLAGS
           -fsanitize-ignorelist=${CMAKE_CURRENT_LIST_DIR}/ubsan_ignorelist.txt)
    else()
      list(APPEND TRTLLM_RUN_SANITIZER_FLAGS -fno-sanitize=shift,builtin,pointer-overflow)
    endif()
  endif()
  if("address" IN_LIST _trtllm_run_sanitizers AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # g++ 12 with ASan reports false -Wmaybe-uninitialized in libstdc++ (std::regex).
    list(APPEND TRTLLM_RUN_SANITIZER_FLAGS -Wno-maybe-uninitialized)
  endif()
  add_compile_options(${TRTLLM_RUN_SANITIZER_FLAGS})
  add_link_options(${TRTLLM_RUN_SANITIZER_FLAGS})
  message(STATUS "trtllm-run: sanitizers ${_trtllm_run_sanitizer_list} on every target")
endif()

if(TRTLLM_RUN_BUILD_FUZZERS AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "TRTLLM_RUN_BUILD_FUZZERS needs clang++ (libFuzzer); configure with "
                      "-DCMAKE_CXX_COMPILER=clang++ (Debian: apt-get install clang libclang-rt-dev)")
endif()
