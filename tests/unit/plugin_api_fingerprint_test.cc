// The plugin API version is tied to the types plugins exchange with core: a fingerprint
// of the SDK headers (every header under trtllm_run/sdk/, the toolkit the built-in
// plugins use included, and every trtllm_run/ header they include, directly or not),
// with comments, whitespace and the version's own #define left out, is recorded per
// TRTLLM_RUN_PLUGIN_API_VERSION in tests/fixtures/plugin_api/fingerprints.txt. Changing
// a declaration there without bumping the version fails this test; the failure says
// which line to add.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "trtllm_run/sdk/plugin_api.h"

namespace fs = std::filesystem;

namespace {

const fs::path kRepoRoot = fs::path(TRTLLM_RUN_SOURCE_DIR);
const fs::path kIncludeDir = kRepoRoot / "libcore" / "include";
const fs::path kRecord = kRepoRoot / "tests" / "fixtures" / "plugin_api" / "fingerprints.txt";

std::string ReadWhole(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// `source` without comments; string and character literals are kept as they are.
std::string StripComments(const std::string& source) {
  std::string out;
  for (std::size_t i = 0; i < source.size(); ++i) {
    char c = source[i];
    if (c == '"' || c == '\'') {
      std::size_t end = i + 1;
      while (end < source.size() && source[end] != c) end += source[end] == '\\' ? 2 : 1;
      out.append(source, i, end + 1 - i);
      i = end;
    } else if (source.compare(i, 2, "//") == 0) {
      i = source.find('\n', i);
      if (i == std::string::npos) break;
      out += '\n';
    } else if (source.compare(i, 2, "/*") == 0) {
      i = source.find("*/", i + 2);
      if (i == std::string::npos) break;
      ++i;
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// The header's declarations: no comments, no version #define, every run of whitespace one
// space, one line per source line that has anything left.
std::string Declarations(const std::string& source) {
  std::istringstream lines(StripComments(source));
  std::string line, out;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string word, folded;
    while (words >> word) folded += (folded.empty() ? "" : " ") + word;
    if (folded.empty() || folded.rfind("#define TRTLLM_RUN_PLUGIN_API_VERSION ", 0) == 0) continue;
    out += folded + "\n";
  }
  return out;
}

// Every header under trtllm_run/sdk/ and the trtllm_run/ headers they reach through
// #include "trtllm_run/...".
std::set<std::string> SdkHeaders() {
  std::set<std::string> seen;
  std::vector<std::string> todo;
  for (const auto& entry : fs::recursive_directory_iterator(kIncludeDir / "trtllm_run" / "sdk")) {
    if (entry.is_regular_file() && entry.path().extension() == ".h") {
      todo.push_back(entry.path().lexically_relative(kIncludeDir).generic_string());
    }
  }
  while (!todo.empty()) {
    std::string header = todo.back();
    todo.pop_back();
    if (!seen.insert(header).second) continue;
    std::istringstream lines(ReadWhole(kIncludeDir / header));
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind("#include \"trtllm_run/", 0) != 0) continue;
      std::size_t open = line.find('"') + 1;
      todo.push_back(line.substr(open, line.find('"', open) - open));
    }
  }
  return seen;
}

// FNV-1a 64 over "<header>\n<declarations>" of every SDK header in name order, as 16 hex
// digits.
std::string Fingerprint(const std::set<std::string>& headers) {
  std::uint64_t hash = 14695981039346656037ull;
  for (const std::string& header : headers) {
    for (char c : header + "\n" + Declarations(ReadWhole(kIncludeDir / header))) {
      hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    }
  }
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

// version -> fingerprint, from the lines "<version> <fingerprint>" of the record.
std::map<int, std::string> Recorded() {
  std::map<int, std::string> recorded;
  std::istringstream lines(ReadWhole(kRecord));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    int version = 0;
    std::string fingerprint;
    if (fields >> version >> fingerprint) recorded[version] = fingerprint;
  }
  return recorded;
}

TEST_CASE("plugin API: the SDK headers' fingerprint is the one recorded for this version",
          "[plugins]") {
  REQUIRE(fs::exists(kRecord));
  const std::set<std::string> headers = SdkHeaders();
  REQUIRE(headers.count("trtllm_run/sdk/executor.h") == 1);  // the walk found the interfaces
  REQUIRE(headers.count("trtllm_run/sdk/workflow.h") == 1);
  // The toolkit the built-in plugins link is under the version too.
  REQUIRE(headers.count("trtllm_run/sdk/supervise/supervisor.h") == 1);
  REQUIRE(headers.count("trtllm_run/sdk/slurm/watch.h") == 1);
  std::string listed;
  for (const std::string& header : headers) listed += " " + header;

  const int version = TRTLLM_RUN_PLUGIN_API_VERSION;
  const std::string now = Fingerprint(headers);
  const std::map<int, std::string> recorded = Recorded();
  auto it = recorded.find(version);
  const std::string line = std::to_string(version) + " " + now;
  const std::string next_line = std::to_string(version + 1) + " " + now;
  if (it == recorded.end()) {
    FAIL("plugin API version " << version << " has no recorded fingerprint. If this version "
                               << "is new, add the line\n  " << line << "\nto " << kRecord
                               << "\n(SDK headers:" << listed << ")");
  }
  if (it->second != now) {
    FAIL("the declarations plugins compile against changed (fingerprint "
         << now << ", recorded for version " << version << ": " << it->second
         << "), but TRTLLM_RUN_PLUGIN_API_VERSION is still " << version
         << ". A plugin built for version " << version
         << " would load and misbehave. Bump the version in "
         << "libcore/include/trtllm_run/sdk/plugin_api.h (note why in its comment) and add the "
         << "line\n  " << next_line << "\nto " << kRecord
         << ". If only formatting or comments changed, this test would not fail."
         << "\n(SDK headers:" << listed << ")");
  }
  SUCCEED("fingerprint " << now << " matches version " << version);
}

TEST_CASE("plugin API fingerprint: comments and whitespace do not count, declarations do",
          "[plugins]") {
  const std::string base = "struct A {\n  int x;  // a count\n};\n";
  CHECK(Declarations(base) == Declarations("/* doc */ struct A {\n\n int   x;\n};\n"));
  CHECK(Declarations(base) != Declarations("struct A {\n  long x;\n};\n"));
  CHECK(Declarations("const char* s = \"a // b\";\n") == "const char* s = \"a // b\";\n");
  CHECK(Declarations("#define TRTLLM_RUN_PLUGIN_API_VERSION 9\nint y;\n") == "int y;\n");
}

}  // namespace
