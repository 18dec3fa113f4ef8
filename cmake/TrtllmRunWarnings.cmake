# Warnings for every target of this project: -Wall -Wextra must stay clean.
set(TRTLLM_RUN_WARNING_FLAGS -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor)
option(TRTLLM_RUN_WERROR "Treat warnings as errors" OFF)
if(TRTLLM_RUN_WERROR)
  list(APPEND TRTLLM_RUN_WARNING_FLAGS -Werror)
endif()
function(trtllm_run_warnings target)
  target_compile_options(${target} PRIVATE ${TRTLLM_RUN_WARNING_FLAGS})
endfunction()
