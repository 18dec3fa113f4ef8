// CaseRequest checks: which command a request runs, and that every value is safe to render.
#include <string>
#include <string_view>
#include <vector>

#include "model/request_field_table.h"
#include "model/utf8.h"
#include "trtllm_run/request.h"
#include "trtllm_run/sdk/input_limits.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

bool IsBlankCommand(const std::string& text) {
  return text.find_first_not_of(" \t\r\n") == std::string::npos;
}

}  // namespace

Result<CommandKind> ClassifyCommand(const CaseRequest& request) {
  struct Candidate {
    const char* field;
    const std::optional<std::string>& value;
    CommandKind kind;
  };
  // Registry order: custom, bench, eval, test_cmd. custom_script outranks custom_cmd.
  const Candidate candidates[] = {
      {"custom_script", request.custom_script, CommandKind::kCustom},
      {"custom_cmd", request.custom_cmd, CommandKind::kCustom},
      {"bench_cmd", request.bench_cmd, CommandKind::kBench},
      {"eval_cmd", request.eval_cmd, CommandKind::kEval},
      {"test_cmd", request.test_cmd, CommandKind::kTest},
  };
  std::vector<const Candidate*> given;
  for (const Candidate& c : candidates) {
    if (!c.value.has_value()) continue;
    if (IsBlankCommand(*c.value)) {
      return Status::InvalidInput(
          std::string(c.field) + " is empty",
          "give the command to run, or leave " + std::string(c.field) + " out");
    }
    if (!given.empty() && given.back()->kind == c.kind) continue;  // custom_script + custom_cmd
    given.push_back(&c);
  }
  if (given.empty()) return CommandKind::kNone;
  if (given.size() > 1) {
    std::string names;
    for (size_t i = 0; i < given.size(); ++i) {
      if (i > 0) names += i + 1 == given.size() ? " and " : ", ";
      names += given[i]->field;
    }
    return Status::InvalidInput("conflicting commands: " + names +
                                " given; give exactly one of test_cmd, bench_cmd, eval_cmd, "
                                "custom_cmd/custom_script");
  }
  if (request.custom_env && given.front()->kind != CommandKind::kCustom) {
    const std::string field = given.front()->field;
    return Status::InvalidInput(
        "custom_env (--custom-env) applies only to the custom workflow (custom_cmd, "
        "custom_script); the " +
            field + " would run without it",
        "prefix the command with the assignments instead, e.g. --" + ToKebab(field) + " " +
            ShellQuote(*request.custom_env + " " + *given.front()->value));
  }
  return given.front()->kind;
}

namespace {

// Offset of the first byte that is not part of valid UTF-8, or npos.
std::size_t InvalidUtf8At(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    std::size_t length = Utf8SequenceLength(text, i);
    if (length == 0) return i;
    i += length;
  }
  return std::string_view::npos;
}

// The fields that hold a command or a script (many lines, tabs allowed).
bool IsCommandField(const std::string& name) {
  return name == "test_cmd" || name == "bench_cmd" || name == "eval_cmd" || name == "custom_cmd";
}

// The fields that become an ssh destination or an option value of ssh.
bool IsSshField(const std::string& name) {
  return name == "ssh_host" || name == "slurm_user" || name == "user_name" ||
         name == "slurm_cluster" || name == "identity" || name == "ssh_option";
}

Status CheckValue(const std::string& field, const std::string& value) {
  const std::string flag = "--" + ToKebab(field);
  if (value.find('\0') != std::string::npos) {
    return Status::InvalidInput(
        field + " holds a NUL byte (at byte " + std::to_string(value.find('\0')) + ")",
        "a command or value cannot carry NUL bytes; remove it from " + flag +
            " or the request file");
  }
  std::size_t bad = InvalidUtf8At(value);
  if (bad != std::string::npos) {
    return Status::InvalidInput(
        field + " is not valid UTF-8 (byte " + std::to_string(bad) + ": " +
            EscapeControl(value.substr(bad, 1)) + ")",
        "give " + flag + " as UTF-8 text (job files keep it byte for byte)");
  }
  if (IsCommandField(field)) {
    if (value.size() > kMaxCommandBytes) {
      return Status::InvalidInput(field + " is " + std::to_string(value.size()) +
                                      " bytes; the limit is " + std::to_string(kMaxCommandBytes) +
                                      " (a process argument holds at most 131072 bytes on Linux)",
                                  "put the command in a file and give --custom-script FILE");
    }
    return Status::Ok();
  }
  for (char c : value) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) {
      return Status::InvalidInput(
          field + " '" + EscapeControl(value) + "' holds a control character",
          "values are rendered into job scripts (#SBATCH lines, exports, docker arguments) "
          "and cannot carry newlines or other control characters; fix " +
              flag);
    }
  }
  if (IsSshField(field) && !value.empty() && value[0] == '-') {
    return Status::InvalidInput(field + " '" + value + "' starts with '-'",
                                "ssh would read it as an option; give the login node as "
                                "[user@]host with " +
                                    flag);
  }
  return Status::Ok();
}

}  // namespace

Status ValidateRequestValues(const CaseRequest& request) {
  for (const FieldDef& def : FieldTable()) {
    if (def.str && (request.*def.str)) {
      TRTLLM_RUN_RETURN_IF_ERROR(CheckValue(def.name, *(request.*def.str)));
    } else if (def.list) {
      for (const std::string& value : request.*def.list) {
        TRTLLM_RUN_RETURN_IF_ERROR(CheckValue(def.name, value));
      }
    }
  }
  for (const auto& [key, value] : request.executor_options.value_or(ExecutorOptions())) {
    // Named by its key only: the value is never repeated in a message.
    if (!CheckValue("executor_option", key + "=" + value).ok()) {
      return Status::InvalidInput("executor option '" + EscapeControl(key) +
                                      "' holds a NUL byte, invalid UTF-8 or a control character",
                                  "executor option values are one line of UTF-8 text");
    }
  }
  if (request.model_name && request.model_name->size() > kMaxModelNameBytes) {
    return Status::InvalidInput("model_name is " + std::to_string(request.model_name->size()) +
                                    " characters; the limit is " +
                                    std::to_string(kMaxModelNameBytes),
                                "it names the work dir, the job and the container: give a shorter "
                                "--model-name");
  }
  return Status::Ok();
}

}  // namespace trtllm_run
