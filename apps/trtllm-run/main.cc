// trtllm-run: the CLI lives in libtrtllm_run_core (trtllm_run/cli_main.h), so that the
// CLI, the core it uses and the plugins it loads share one copy of the library.
#include "trtllm_run/cli_main.h"

int main(int argc, char** argv) { return trtllm_run_cli_main(argc, argv); }
