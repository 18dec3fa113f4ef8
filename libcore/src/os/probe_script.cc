// The probe scripts' prelude, stream parser and runner (probe_script.h).
#include "os/probe_script.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <random>

#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

const ProbeSection* ProbeOutput::Find(const std::string& name) const {
  auto it = sections.find(name);
  return it == sections.end() ? nullptr : &it->second;
}

Result<ProbeOutput> ParseProbeStream(std::string_view stream, const std::string& marker) {
  ProbeOutput output;
  const std::string prefix = marker + " ";
  size_t pos = 0;
  while (true) {
    // Section bodies are skipped by their length, so the marker is only searched for
    // where a header can start (and in whatever a login shell printed before).
    size_t at = stream.find(prefix, pos);
    if (at == std::string_view::npos) break;
    size_t eol = stream.find('\n', at);
    if (eol == std::string_view::npos) {
      return Status::InvalidInput("probe output ends inside a section header");
    }
    std::vector<std::string> fields = SplitWhitespace(stream.substr(at, eol - at));
    if (fields.size() != 5) {
      return Status::InvalidInput("malformed probe section header: '" +
                                  std::string(stream.substr(at, eol - at)) + "'");
    }
    ProbeSection section;
    std::optional<long long> exit_code =
        fields[2].empty() ? -1 : ParseInteger(fields[2], INT_MIN, INT_MAX);
    std::optional<long long> out_size = ParseInteger(fields[3], 0, LLONG_MAX);
    std::optional<long long> err_size = ParseInteger(fields[4], 0, LLONG_MAX);
    if (!exit_code || !out_size || !err_size) {
      return Status::InvalidInput("malformed probe section header: '" +
                                  std::string(stream.substr(at, eol - at)) + "'");
    }
    section.exit_code = static_cast<int>(*exit_code);
    const auto out_bytes = static_cast<size_t>(*out_size);
    const auto err_bytes = static_cast<size_t>(*err_size);
    size_t body = eol + 1;
    if (body > stream.size() || out_bytes > stream.size() - body ||
        err_bytes > stream.size() - body - out_bytes) {  // no overflow, unlike a sum
      return Status::InvalidInput("probe output is truncated in section '" + fields[1] + "'");
    }
    section.out = std::string(stream.substr(body, out_bytes));
    section.err = std::string(stream.substr(body + out_bytes, err_bytes));
    output.sections[fields[1]] = std::move(section);
    pos = body + out_bytes + err_bytes;
  }
  if (output.sections.empty()) {
    std::string head(Trim(stream.substr(0, 200)));
    return Status::InvalidInput(
        "the probe printed no sections" +
        (head.empty() ? std::string(" (no output)") : ": output starts with '" + head + "'"));
  }
  return output;
}

namespace probe {

std::string Prelude(const std::string& marker, int command_timeout_seconds) {
  std::string timeout = std::to_string(std::max(1, command_timeout_seconds));
  return "M=" + ShellQuote(marker) +
         "\n"
         "D=$(mktemp -d \"${TMPDIR:-/tmp}/trtllm-run-probe.XXXXXX\") || exit 97\n"
         "trap 'rm -rf \"$D\" </dev/null >/dev/null 2>&1 &' EXIT\n"
         "T=\n"
         "if command -v timeout >/dev/null 2>&1; then T=\"timeout -k 5 " +
         timeout +
         "\"; fi\n"
         "q() {\n"
         "  local n=$1\n"
         "  shift\n"
         "  $T \"$@\" >\"$D/$n.out\" 2>\"$D/$n.err\" </dev/null\n"
         "  echo $? >\"$D/$n.rc\"\n"
         "}\n"
         "put() {\n"
         "  printf '%s' \"$2\" >\"$D/$1.out\"\n"
         "  : >\"$D/$1.err\"\n"
         "  echo 0 >\"$D/$1.rc\"\n"
         "}\n"
         "emit_all() {\n"
         "  local f n rc size path\n"
         "  local -a parts=()\n"
         "  local -A bytes=()\n"
         "  cd \"$D\" || return\n"
         "  while read -r size path; do bytes[$path]=$size; done < <(LC_ALL=C wc -c -- *.out "
         "*.err 2>/dev/null)\n"
         "  for f in *.rc; do\n"
         "    [ -e \"$f\" ] || continue\n"
         "    n=${f%.rc}\n"
         "    read -r rc <\"$f\"\n"
         "    printf '%s %s %s %s %s\\n' \"$M\" \"$n\" \"$rc\" \"${bytes[$n.out]:-0}\" "
         "\"${bytes[$n.err]:-0}\" >\"$n.hdr\"\n"
         "    parts+=(\"$n.hdr\" \"$n.out\" \"$n.err\")\n"
         "  done\n"
         "  [ ${#parts[@]} -eq 0 ] || cat -- \"${parts[@]}\"\n"
         "}\n";
}

std::string RandomMarker() {
  std::random_device device;
  std::mt19937_64 generator((static_cast<unsigned long long>(device()) << 32) ^ device());
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(generator()));
  return std::string("@@trtllm-run-") + hex + "@@";
}

Result<ProbeOutput> Run(Scenario& scenario, const std::string& script, const std::string& marker,
                        const std::string& what) {
  // In braces, bash reads the whole script before running any of it: background
  // subshells then cannot disturb its reading (they do when stdin is a regular file:
  // each forked bash may seek the shared offset).
  Result<CommandOutput> run = scenario.Run({"bash", "-s"}, "{\n" + script + "\n}\n");
  if (!run.ok()) return run.status().WithContext(what + " on " + scenario.Name());
  const CommandOutput& output = run.value();
  Result<ProbeOutput> parsed = ParseProbeStream(output.stdout_text, marker);
  if (!parsed.ok()) {
    std::string detail = output.signal != 0 ? "killed by " + SignalName(output.signal)
                                            : "exit status " + std::to_string(output.exit_code);
    std::string err = FirstLine(output.stderr_text);
    return Status::ExecutionError(what + " on " + scenario.Name() + " did not run (" + detail +
                                      ")" + (err.empty() ? "" : ": " + err),
                                  parsed.status().message());
  }
  return parsed;
}

std::vector<std::string> NonEmptyLines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(Trim(text.substr(start, end - start)));
    if (!line.empty()) lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

std::string FirstLine(std::string_view text) {
  std::vector<std::string> lines = NonEmptyLines(text);
  return lines.empty() ? "" : lines.front();
}

std::string DescribeFailure(const std::string& command, const ProbeSection& section) {
  if (section.exit_code == 124 || section.exit_code == 137) return "'" + command + "' timed out";
  std::string err = FirstLine(section.err);
  if (err.empty()) err = FirstLine(section.out);
  return "'" + command + "' failed (exit " + std::to_string(section.exit_code) + ")" +
         (err.empty() ? "" : ": " + err);
}

bool Contains(const std::vector<std::string>& items, const std::string& value) {
  return std::find(items.begin(), items.end(), value) != items.end();
}

}  // namespace probe

}  // namespace trtllm_run
