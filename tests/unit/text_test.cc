#include "trtllm_run/sdk/text.h"

#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace trtllm_run {
namespace {

namespace fs = std::filesystem;

// A fresh directory under /tmp, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir() {
    char name[] = "/tmp/c_text_test_XXXXXX";
    REQUIRE(mkdtemp(name) != nullptr);
    path_ = name;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs `shell` -c `script` and returns its stdout, byte for byte.
std::string RunShell(const std::string& shell, const std::string& script) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    execlp(shell.c_str(), shell.c_str(), "-c", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fds[0], buffer, sizeof(buffer))) > 0) out.append(buffer, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return out;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> HiddenEntries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (!name.empty() && name[0] == '.') names.push_back(name);
  }
  return names;
}

const std::vector<std::string>& NastyStrings() {
  static const std::vector<std::string> strings = {
      "",
      "plain",
      "two words",
      "it's",
      "say \"hi\"",
      "both ' and \"",
      "$HOME",
      "${PATH}",
      "$(echo pwned)",
      "`echo pwned`",
      "a;b",
      "a && b || c",
      "line1\nline2\n",
      "tab\there",
      "back\\slash\\",
      "glob * ? [a-z]",
      "~user",
      "!bang !!",
      "#not a comment",
      "'",
      "''",
      "\\'",
      "日本語 модель ü",
      "-n",
      "a=b c",
      "{a,b}",
      "<in >out 2>&1 |pipe",
  };
  return strings;
}

TEST_CASE("AsciiLower and AsciiUpper change ASCII letters only, whatever the locale", "[text]") {
  CHECK(AsciiLower("H100 PCIe-80GB _x") == "h100 pcie-80gb _x");
  CHECK(AsciiUpper("pending(Reason) ok") == "PENDING(REASON) OK");
  // UTF-8 and other high bytes stay as they are (std::tolower under a Latin-1 locale
  // would change 0xC4).
  const std::string utf8 = "\xC3\x84rger \xC4";
  CHECK(AsciiLower(utf8) == "\xC3\x84rger \xC4");
  CHECK(AsciiUpper(utf8) == "\xC3\x84RGER \xC4");
  CHECK(AsciiLower("") == "");
  CHECK(AsciiUpper(std::string_view("aBc\0d", 5)) == std::string("ABC\0D", 5));
}

TEST_CASE("IsBlank: space, tab, newline and carriage return only", "[text]") {
  for (char c : {' ', '\t', '\n', '\r'}) CHECK(IsBlank(c));
  for (char c : {'\v', '\f', 'x', '\0', '_'}) CHECK_FALSE(IsBlank(c));
  CHECK(IsBlank(""));
  CHECK(IsBlank(" \t\r\n "));
  CHECK_FALSE(IsBlank(" \t x"));
  CHECK_FALSE(IsBlank("\v"));
  CHECK_FALSE(IsBlank(std::string_view(" \0", 2)));
}

TEST_CASE("ShellQuote leaves safe words alone and quotes everything else", "[text]") {
  CHECK(ShellQuote("") == "''");
  CHECK(ShellQuote("abc_XYZ-0.9/path:1,2+3=4@5%6") == "abc_XYZ-0.9/path:1,2+3=4@5%6");
  CHECK(ShellQuote("two words") == "'two words'");
  CHECK(ShellQuote("it's") == "'it'\\''s'");
  CHECK(ShellQuote("$HOME") == "'$HOME'");
  CHECK(ShellQuote("~") == "'~'");
  CHECK(ShellQuote("a*") == "'a*'");
}

TEST_CASE("ShellQuote round-trips nasty strings through real bash and sh byte for byte", "[text]") {
  for (const std::string& shell : {std::string("bash"), std::string("sh")}) {
    for (const std::string& word : NastyStrings()) {
      INFO(shell << " word: [" << word << "]");
      CHECK(RunShell(shell, "printf %s " + ShellQuote(word)) == word);
    }
  }
  // All quoted words in one command line stay separate words.
  std::string line = "printf '%s\\0'";
  std::string expected;
  for (const std::string& word : NastyStrings()) {
    line += " " + ShellQuote(word);
    expected += word + '\0';
  }
  CHECK(RunShell("bash", line) == expected);
}

TEST_CASE("SplitShellWords inverts ShellQuote", "[text]") {
  std::string line;
  for (const std::string& word : NastyStrings()) line += ShellQuote(word) + " \t";
  Result<std::vector<std::string>> words = SplitShellWords(line);
  REQUIRE(words.ok());
  CHECK(words.value() == NastyStrings());
}

TEST_CASE("SplitShellWords splits like bash for expansion-free input", "[text]") {
  const std::vector<std::string> inputs = {
      "a b   c",
      "  leading and trailing  ",
      "A=1 B='x y' C=\"p q\"",
      "mixed'single'\"double\"bare",
      "esc\\ aped back\\\\slash \\'q\\\"",
      "\"in \\\"dq\\\" \\\\ \\$HOME \\` \\n kept\"",
      "'single \\ stays' \"\" ''",
      "cont\\\ninued next\\\n  word",
      "\"dq \\\ncontinued\"",
      "tab\tseparated\t\twords",
  };
  for (const std::string& input : inputs) {
    INFO("input: [" << input << "]");
    Result<std::vector<std::string>> words = SplitShellWords(input);
    REQUIRE(words.ok());
    std::string ours;
    for (const std::string& w : words.value()) ours += w + '\0';
    CHECK(ours == RunShell("bash", "printf '%s\\0' " + input + " ; true"));
  }
}

TEST_CASE("SplitShellWords handles empty input and quoted empty words", "[text]") {
  CHECK(SplitShellWords("").value().empty());
  CHECK(SplitShellWords("  \t\n ").value().empty());
  CHECK(SplitShellWords("'' \"\"").value() == std::vector<std::string>{"", ""});
  CHECK(SplitShellWords("a\\").value() == std::vector<std::string>{"a\\"});
}

TEST_CASE("SplitShellWords rejects unterminated quotes with their position", "[text]") {
  Result<std::vector<std::string>> single = SplitShellWords("A=1 B='oops");
  REQUIRE_FALSE(single.ok());
  CHECK(single.status().code() == StatusCode::kInvalidInput);
  CHECK(single.status().message() ==
        "unterminated single quote starting at character 7 of: A=1 B='oops");

  Result<std::vector<std::string>> dbl = SplitShellWords("\"a\\\"");
  REQUIRE_FALSE(dbl.ok());
  CHECK_THAT(dbl.status().message(), Catch::Contains("unterminated double quote starting at "
                                                     "character 1"));
}

TEST_CASE("ParseEnvAssignments reads KEY=VALUE pairs with quoted values", "[text]") {
  Result<std::vector<EnvVar>> vars =
      ParseEnvAssignments("BATCH_SIZE=32 _X2='a b' MSG=\"it's\" EMPTY= EQ=a=b", "custom_env");
  REQUIRE(vars.ok());
  std::vector<EnvVar> expected = {
      {"BATCH_SIZE", "32"}, {"_X2", "a b"}, {"MSG", "it's"}, {"EMPTY", ""}, {"EQ", "a=b"}};
  CHECK(vars.value() == expected);
  CHECK(ParseEnvAssignments("", "custom_env").value().empty());
}

TEST_CASE("ParseEnvAssignments names the bad word and the field", "[text]") {
  Result<std::vector<EnvVar>> no_eq = ParseEnvAssignments("A=1 oops", "custom_env");
  REQUIRE_FALSE(no_eq.ok());
  CHECK(no_eq.status().code() == StatusCode::kInvalidInput);
  CHECK(no_eq.status().message() == "invalid custom_env: 'oops' is not a KEY=VALUE assignment");
  CHECK_THAT(no_eq.status().hint(), Catch::Contains("KEY=VALUE"));

  Result<std::vector<EnvVar>> bad_name = ParseEnvAssignments("1X=2", "--custom-env");
  REQUIRE_FALSE(bad_name.ok());
  CHECK(bad_name.status().message() ==
        "invalid --custom-env: '1X=2': '1X' is not a valid variable name");
  CHECK_THAT(bad_name.status().hint(), Catch::Contains("[A-Za-z_][A-Za-z0-9_]*"));

  CHECK_FALSE(ParseEnvAssignments("=value", "custom_env").ok());
  CHECK_FALSE(ParseEnvAssignments("A-B=1", "custom_env").ok());

  Result<std::vector<EnvVar>> unterminated = ParseEnvAssignments("A='x", "custom_env");
  REQUIRE_FALSE(unterminated.ok());
  CHECK_THAT(unterminated.status().message(),
             Catch::StartsWith("invalid custom_env: unterminated single quote"));
}

TEST_CASE("ParseDurationSeconds accepts the documented forms", "[text]") {
  struct Case {
    const char* text;
    int seconds;
  };
  const Case cases[] = {
      {"1h", 3600},       {"2h", 7200},      {"30m", 1800},   {"3600s", 3600},      {"90", 90},
      {"01:00:00", 3600}, {"1:30:00", 5400}, {"00:00:05", 5}, {"48:00:00", 172800}, {" 45m ", 2700},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    Result<int> parsed = ParseDurationSeconds(c.text, "monitor_timeout");
    REQUIRE(parsed.ok());
    CHECK(parsed.value() == c.seconds);
  }
}

TEST_CASE("ParseDurationSeconds rejects bad durations naming the field and value", "[text]") {
  for (const char* bad :
       {"", "0", "0s", "00:00:00", "-5", "-1h", "1x", "1h30", "25:61:00", "01:00:60", "1:2:3",
        "30:00", "1.5h", "h", "1 h", "99999999999", "999999999h", "1:00:00:00"}) {
    INFO("value: [" << bad << "]");
    Result<int> parsed = ParseDurationSeconds(bad, "monitor_timeout");
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().code() == StatusCode::kInvalidInput);
    CHECK(parsed.status().message() ==
          "invalid monitor_timeout '" + std::string(bad) +
              "': expected a duration like 1h, 30m, 3600s, 01:00:00 or a number of seconds");
  }
  CHECK_THAT(ParseDurationSeconds("25:61:00", "x").status().hint(), Catch::Contains("below 60"));
  CHECK_THAT(ParseDurationSeconds("0", "x").status().hint(), Catch::Contains("greater than zero"));
}

TEST_CASE("SanitizeModelName makes job-name-safe model names", "[text]") {
  CHECK(SanitizeModelName("Llama-3.1-8B-Instruct") == "llama_3_1_8b_instruct");
  CHECK(SanitizeModelName("/models/meta-llama/Llama-3.1-8B/") == "llama_3_1_8b");
  CHECK(SanitizeModelName("meta-llama/Llama-3.1-8B-Instruct") == "llama_3_1_8b_instruct");
  CHECK(SanitizeModelName("__Qwen2.5--7B__") == "qwen2_5_7b");
  CHECK(SanitizeModelName("gpt_oss") == "gpt_oss");
  CHECK(SanitizeModelName("модель-7B") == "7b");
  CHECK(SanitizeModelName("") == "");
  CHECK(SanitizeModelName("///") == "");
  CHECK(SanitizeModelName("--") == "");
}

TEST_CASE("WriteFileAtomic creates and replaces files", "[text]") {
  TempDir dir;
  std::string path = dir.path() + "/out.json";
  REQUIRE(WriteFileAtomic(path, "first").ok());
  CHECK(Slurp(path) == "first");
  std::string binary("a\0b\xff", 4);
  REQUIRE(WriteFileAtomic(path, binary).ok());
  CHECK(Slurp(path) == binary);
  REQUIRE(WriteFileAtomic(path, "").ok());
  CHECK(Slurp(path).empty());
  CHECK(HiddenEntries(dir.path()).empty());

  // Not the 0600 of mkstemp: the mode a plain file would get under the current umask.
  mode_t mask = umask(022);
  umask(mask);
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == (0666 & ~mask));
}

TEST_CASE("WriteFileAtomic fails cleanly when the directory does not exist", "[text]") {
  TempDir dir;
  std::string path = dir.path() + "/missing/result.json";
  Status status = WriteFileAtomic(path, "x");
  REQUIRE_FALSE(status.ok());
  CHECK(status.code() == StatusCode::kIoError);
  CHECK_THAT(status.message(), Catch::Contains(path));
  CHECK_THAT(status.message(), Catch::Contains("No such file or directory"));
}

TEST_CASE("WriteFileAtomic leaves the target and no temp file when rename fails", "[text]") {
  TempDir dir;
  std::string target = dir.path() + "/result.json";
  REQUIRE(fs::create_directory(target));
  std::ofstream(target + "/keep") << "old";
  Status status = WriteFileAtomic(target, "new contents");
  REQUIRE_FALSE(status.ok());
  CHECK(status.code() == StatusCode::kIoError);
  CHECK_THAT(status.message(), Catch::Contains(target));
  CHECK_THAT(status.message(), Catch::Contains("Is a directory"));
  CHECK(fs::is_directory(target));
  CHECK(Slurp(target + "/keep") == "old");
  CHECK(HiddenEntries(dir.path()).empty());
}

TEST_CASE("WriteFileAtomic keeps the old file when a write fails midway", "[text]") {
  // RLIMIT_FSIZE makes write(2) fail with EFBIG part-way through, like a full disk.
  TempDir dir;
  std::string target = dir.path() + "/job_spec.json";
  REQUIRE(WriteFileAtomic(target, "old contents").ok());
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {4096, 4096};
    setrlimit(RLIMIT_FSIZE, &limit);
    Status status = WriteFileAtomic(target, std::string(1 << 20, 'x'));
    bool expected = !status.ok() && status.code() == StatusCode::kIoError &&
                    status.message().find(target) != std::string::npos &&
                    status.message().find("File too large") != std::string::npos;
    _exit(expected ? 0 : 1);
  }
  int wstatus = 0;
  REQUIRE(waitpid(pid, &wstatus, 0) == pid);
  CHECK(WIFEXITED(wstatus));
  CHECK(WEXITSTATUS(wstatus) == 0);
  CHECK(Slurp(target) == "old contents");
  CHECK(HiddenEntries(dir.path()).empty());
}

TEST_CASE("ReadFile reads whole files and names the path on failure", "[text]") {
  TempDir dir;
  std::string path = dir.path() + "/big.txt";
  std::string contents(200000, 'z');
  contents += "end";
  REQUIRE(WriteFileAtomic(path, contents).ok());
  Result<std::string> read = ReadFile(path);
  REQUIRE(read.ok());
  CHECK(read.value() == contents);

  Result<std::string> missing = ReadFile(dir.path() + "/nope.yaml");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kIoError);
  CHECK(missing.status().message() ==
        "cannot read " + dir.path() + "/nope.yaml: No such file or directory");

  Result<std::string> directory = ReadFile(dir.path());
  REQUIRE_FALSE(directory.ok());
  CHECK_THAT(directory.status().message(), Catch::Contains("Is a directory"));
}

TEST_CASE("NowIso8601 is the current UTC time in ISO 8601", "[text]") {
  std::time_t before = std::time(nullptr);
  std::string now = NowIso8601();
  std::time_t after = std::time(nullptr);
  REQUIRE(std::regex_match(now, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  std::tm tm{};
  REQUIRE(strptime(now.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) != nullptr);
  std::time_t parsed = timegm(&tm);
  CHECK(parsed >= before);
  CHECK(parsed <= after);
}

}  // namespace
}  // namespace trtllm_run
