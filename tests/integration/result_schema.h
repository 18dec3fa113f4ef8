// A validator for result.json that reads its schema from the documentation
// (docs/result-schema.md: the key table and the status table), so that the document and
// the files trtllm-run writes cannot drift apart: a key added to one and not the other
// fails the tests that validate results.
#ifndef TRTLLM_RUN_TESTS_INTEGRATION_RESULT_SCHEMA_H_
#define TRTLLM_RUN_TESTS_INTEGRATION_RESULT_SCHEMA_H_

#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace trtllm_run_test {

struct DocumentedSchema {
  std::vector<std::pair<std::string, std::string>> keys;  // key -> documented type, in order
  std::map<std::string, int> status_exit_codes;           // PASSED -> 0, ...
  int user_interrupt_exit_code = -1;
};

inline std::string SchemaDocPath() {
  return (std::filesystem::path(TRTLLM_RUN_SOURCE_DIR) / "docs" / "result-schema.md").string();
}

// The cells of a markdown table row "| a | b | c |", trimmed.
inline std::vector<std::string> TableCells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '|') {
      std::size_t begin = cell.find_first_not_of(' ');
      std::size_t end = cell.find_last_not_of(' ');
      cells.push_back(begin == std::string::npos ? "" : cell.substr(begin, end - begin + 1));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

inline std::string Unquote(const std::string& cell) {
  if (cell.size() >= 2 && cell.front() == '`' && cell.back() == '`') {
    return cell.substr(1, cell.size() - 2);
  }
  return cell;
}

// Parses docs/result-schema.md. Empty `keys` when the file or its tables are missing.
inline DocumentedSchema LoadDocumentedSchema() {
  DocumentedSchema schema;
  std::ifstream in(SchemaDocPath());
  std::string line;
  enum { kNone, kKeys, kStatuses } table = kNone;
  bool keys_done = false;
  while (std::getline(in, line)) {
    if (line.rfind("| key | type | meaning |", 0) == 0 && !keys_done) {
      table = kKeys;
      continue;
    }
    if (line.rfind("| `status` | exit code |", 0) == 0) {
      table = kStatuses;
      continue;
    }
    if (line.empty() || line[0] != '|') {
      if (table == kKeys) keys_done = true;
      table = kNone;
      continue;
    }
    if (line.rfind("|---", 0) == 0) continue;
    std::vector<std::string> cells = TableCells(line);
    if (cells.size() < 2) continue;
    if (table == kKeys) {
      schema.keys.emplace_back(Unquote(cells[0]), cells[1]);
    } else if (table == kStatuses) {
      const std::string& name = cells[0];
      int code = std::atoi(cells[1].c_str());
      if (name.find("user_interrupt") != std::string::npos) {
        schema.user_interrupt_exit_code = code;
      } else if (name.size() > 2 && name.front() == '`') {
        schema.status_exit_codes[Unquote(name)] = code;
      }
    }
  }
  return schema;
}

inline bool StringArray(const rapidjson::Value& v) {
  if (!v.IsArray()) return false;
  for (const auto& item : v.GetArray()) {
    if (!item.IsString()) return false;
  }
  return true;
}

inline bool StringObject(const rapidjson::Value& v) {
  if (!v.IsObject()) return false;
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    if (!it->value.IsString()) return false;
  }
  return true;
}

inline bool MatchesType(const rapidjson::Value& v, const std::string& type) {
  if (type == "integer") return v.IsInt64();
  if (type == "integer or `null`") return v.IsInt64() || v.IsNull();
  if (type == "string") return v.IsString();
  if (type == "boolean") return v.IsBool();
  if (type == "number") return v.IsNumber();
  if (type == "array of strings") return StringArray(v);
  if (type == "object of strings") return StringObject(v);
  if (type == "object or `null`") return v.IsObject() || v.IsNull();
  if (type == "array of objects") {
    if (!v.IsArray()) return false;
    for (const auto& item : v.GetArray()) {
      if (!item.IsObject()) return false;
    }
    return true;
  }
  return false;  // a type the validator does not know: document it here first
}

// Every problem of `doc` against the documented schema; empty when it is valid. When
// `cli_exit_code` >= 0 it must be the documented exit code of the status.
inline std::vector<std::string> ValidateResult(const rapidjson::Value& doc,
                                               int cli_exit_code = -1) {
  std::vector<std::string> problems;
  DocumentedSchema schema = LoadDocumentedSchema();
  if (schema.keys.size() < 20 || schema.status_exit_codes.size() != 8) {
    problems.push_back("cannot read the schema tables of " + SchemaDocPath());
    return problems;
  }
  if (!doc.IsObject()) {
    problems.push_back("result is not a JSON object");
    return problems;
  }
  // Documented keys: present, typed, in the documented order (unknown keys may follow
  // anywhere: readers ignore them).
  std::vector<std::string> order;
  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it)
    order.push_back(it->name.GetString());
  std::size_t last_index = 0;
  for (const auto& [key, type] : schema.keys) {
    auto it = doc.FindMember(key.c_str());
    if (it == doc.MemberEnd()) {
      problems.push_back("missing key '" + key + "'");
      continue;
    }
    if (!MatchesType(it->value, type)) problems.push_back("key '" + key + "' is not " + type);
    std::size_t index = 0;
    while (index < order.size() && order[index] != key) ++index;
    if (index < last_index) problems.push_back("key '" + key + "' is out of the documented order");
    last_index = index;
  }
  if (!problems.empty()) return problems;
  if (doc["schema_version"].GetInt64() != 1) problems.push_back("schema_version is not 1");
  std::string status = doc["status"].GetString();
  auto code = schema.status_exit_codes.find(status);
  if (code == schema.status_exit_codes.end()) {
    problems.push_back("status '" + status + "' is not a documented status");
  } else if (cli_exit_code >= 0) {
    int expected = doc["user_interrupt"].GetBool() ? schema.user_interrupt_exit_code : code->second;
    if (cli_exit_code != expected) {
      problems.push_back("exit code " + std::to_string(cli_exit_code) + " for " + status +
                         " (documented: " + std::to_string(expected) + ")");
    }
  }
  if (doc["user_interrupt"].GetBool() && status != "CANCELLED") {
    problems.push_back("user_interrupt with status " + status);
  }
  static const std::regex iso(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)");
  for (const char* key : {"started_at", "finished_at"}) {
    std::string value = doc[key].GetString();
    if (!std::regex_match(value, iso))
      problems.push_back(std::string(key) + " '" + value + "' is not ISO 8601 UTC");
  }
  if (doc["duration_seconds"].GetDouble() < 0) problems.push_back("negative duration_seconds");
  if (!doc["exit_code"].IsNull() && !doc["signal"].IsNull()) {
    problems.push_back("both exit_code and signal are set");
  }
  return problems;
}

inline std::string Join(const std::vector<std::string>& lines) {
  std::ostringstream out;
  for (const std::string& line : lines) out << line << "\n";
  return out.str();
}

}  // namespace trtllm_run_test

#endif  // TRTLLM_RUN_TESTS_INTEGRATION_RESULT_SCHEMA_H_
