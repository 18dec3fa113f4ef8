// Starting a supervisor that outlives the MCP server: its own session (setsid: no
// controlling terminal, not in the server's process group, so neither the host's
// SIGHUP/SIGTERM to the server's group nor the server's end reaches it) and not the
// server's child (double fork: init adopts it, the server never has to reap it).
#ifndef TRTLLM_RUN_APPS_MCP_SPAWN_H_
#define TRTLLM_RUN_APPS_MCP_SPAWN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "trtllm_run/status.h"

namespace trtllm_run::mcp {

struct DetachedProcess {
  int pid = 0;
  std::uint64_t start_time = 0;  // /proc/<pid>/stat field 22; 0 when it already ended
};

// Runs argv[0] (a path) with argv, stdin from /dev/null, stdout to `stdout_path` and
// stderr to `stderr_path` (created or appended; "/dev/null" is fine), every other
// descriptor closed, default signal dispositions, an empty signal mask and this
// environment without trtllm-run's secrets (process.h ChildEnvironment): what the server
// starts authenticates with keys or a control master, never a password. Returns once
// the program was executed; kExecutionError naming it and the OS error when it could
// not be (nothing is left running then).
Result<DetachedProcess> SpawnDetached(const std::vector<std::string>& argv,
                                      const std::string& stdout_path,
                                      const std::string& stderr_path);

}  // namespace trtllm_run::mcp

#endif  // TRTLLM_RUN_APPS_MCP_SPAWN_H_
