// Private pieces shared by the probe scripts (slurm/probe/slurm_probe.cc,
// placement/env_check.cc): the bash prelude that runs queries in the background and prints
// their outputs as sections, the parser of those sections, and the runner that sends a
// script through a Scenario and parses the sections.
#ifndef TRTLLM_RUN_OS_PROBE_SCRIPT_H_
#define TRTLLM_RUN_OS_PROBE_SCRIPT_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// The raw outputs of one probe run, as the script printed them.
struct ProbeSection {
  int exit_code = 0;
  std::string out;
  std::string err;
};

struct ProbeOutput {
  std::map<std::string, ProbeSection> sections;  // "user", "sinfo", "access=batch", ...
  const ProbeSection* Find(const std::string& name) const;
};

// Splits the script's stdout into sections. kInvalidInput when a section is truncated
// or the stream holds no section at all (e.g. the remote shell printed something else).
Result<ProbeOutput> ParseProbeStream(std::string_view stream, const std::string& marker);

namespace probe {

// Defines, for the script that follows: $M (the marker), $D (a private temp dir,
// removed by a background `rm` when the script exits, so that the caller need not wait
// for it), `q NAME CMD...` (runs CMD under `timeout`, stdin from /dev/null,
// keeping stdout, stderr and the exit status as section NAME), `put NAME TEXT` (a
// section computed by the script) and `emit_all` (prints every section:
// "<marker> <name> <status> <stdout bytes> <stderr bytes>\n" then the bytes, with one
// `wc` and one `cat` for all sections; needs bash >= 4 for an associative array).
std::string Prelude(const std::string& marker, int command_timeout_seconds);

// "@@trtllm-run-<16 random hex digits>@@".
std::string RandomMarker();

// Runs `script` with `bash -s` through `scenario` and parses its sections. `what`
// names the probe in errors ("the Slurm probe").
Result<ProbeOutput> Run(Scenario& scenario, const std::string& script, const std::string& marker,
                        const std::string& what);

// Helpers for reading sections.
std::vector<std::string> NonEmptyLines(std::string_view text);
bool Contains(const std::vector<std::string>& items, const std::string& value);
std::string FirstLine(std::string_view text);  // trimmed; "" when none

// "sinfo failed (exit 1): <first stderr line>", "sinfo timed out after 60 s", ...
std::string DescribeFailure(const std::string& command, const ProbeSection& section);

}  // namespace probe
}  // namespace trtllm_run

#endif  // TRTLLM_RUN_OS_PROBE_SCRIPT_H_
