# trtllm_run_add_plugin(<target> SOURCES <src>... [OUTPUT_DIRECTORY <dir>] [INSTALL_DESTINATION <dir>])
#
# Builds one trtllm-run plugin: a MODULE library named <target>.so (no "lib" prefix),
# hidden visibility, linked against the core library. The plugin must define its
# entry point with TRTLLM_RUN_DECLARE_EXECUTOR_PLUGIN or TRTLLM_RUN_DECLARE_WORKFLOW_PLUGIN
# (see <trtllm_run/sdk/plugin_api.h>).
# Drop the .so into a directory listed in TRTLLM_RUN_PLUGIN_PATH or --plugin-dir.
function(trtllm_run_add_plugin target)
  cmake_parse_arguments(ARG "" "OUTPUT_DIRECTORY;INSTALL_DESTINATION" "SOURCES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "trtllm_run_add_plugin(${target}): SOURCES is required")
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  if(TARGET trtllm_run_core)
    target_link_libraries(${target} PRIVATE trtllm_run_core)
  else()
    target_link_libraries(${target} PRIVATE TrtllmRun::core)
  endif()
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    CXX_STANDARD 17
    CXX_STANDARD_REQUIRED ON
    # Installed plugins live in <prefix>/lib/trtllm-run/plugins; libcore two levels up.
    INSTALL_RPATH "$ORIGIN/../..")
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}")
  endif()
  if(ARG_INSTALL_DESTINATION)
    install(TARGETS ${target} LIBRARY DESTINATION "${ARG_INSTALL_DESTINATION}")
  endif()
endfunction()
