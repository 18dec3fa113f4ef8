// The trtllm-run command line as a function of the library: apps/trtllm-run/main.cc is
// main() calling it. The CLI's and the MCP server's code is compiled into
// libtrtllm_run_core and this is its only exported symbol, so that the CLI, the core it
// drives and the plugins it loads (which link libtrtllm_run_core) use one copy of the
// library's state (signal handlers, cancellation, the plugin registry).
#ifndef TRTLLM_RUN_CLI_MAIN_H_
#define TRTLLM_RUN_CLI_MAIN_H_

#include "trtllm_run/export.h"

extern "C" {

// Runs `trtllm-run argv[1] ...` as the installed binary does and returns its exit code
// (the ExitCode values of trtllm_run/result.h: 0 passed, 2 bad input, ...). argv[0] is
// the program name, argv[argc] is null. Process-wide effects, as a main() has them:
// SIGPIPE is ignored, glibc's malloc arenas are capped at 2 unless $MALLOC_ARENA_MAX is
// set, the signal handlers of a run are installed while it runs, and output goes to
// stdout/stderr.
// Call it once, from the program's main thread; it is not reentrant.
TRTLLM_RUN_API int trtllm_run_cli_main(int argc, char** argv);
}

#endif  // TRTLLM_RUN_CLI_MAIN_H_
