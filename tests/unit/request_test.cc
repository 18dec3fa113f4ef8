#include "trtllm_run/request.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    char name[] = "/tmp/c_request_test_XXXXXX";
    REQUIRE(mkdtemp(name) != nullptr);
    path_ = name;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string Write(const std::string& name, const std::string& contents) const {
    std::string path = path_ + "/" + name;
    std::ofstream(path) << contents;
    return path;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Every CaseRequest member, by its field name, rendered as text ("" when not given).
// Written independently of request.cc so the field table is checked against the struct.
const std::map<std::string, std::function<std::string(const CaseRequest&)>>& Members() {
  auto s = [](std::optional<std::string> CaseRequest::*m) {
    return [m](const CaseRequest& r) { return (r.*m).has_value() ? "s:" + *(r.*m) : ""; };
  };
  auto i = [](std::optional<int> CaseRequest::*m) {
    return [m](const CaseRequest& r) {
      return (r.*m).has_value() ? "i:" + std::to_string(*(r.*m)) : "";
    };
  };
  auto b = [](std::optional<bool> CaseRequest::*m) {
    return [m](const CaseRequest& r) {
      return (r.*m).has_value() ? std::string(*(r.*m) ? "b:true" : "b:false") : "";
    };
  };
  using R = CaseRequest;
  static const std::map<std::string, std::function<std::string(const CaseRequest&)>> members = {
      {"test_cmd", s(&R::test_cmd)},
      {"bench_cmd", s(&R::bench_cmd)},
      {"eval_cmd", s(&R::eval_cmd)},
      {"custom_cmd", s(&R::custom_cmd)},
      {"custom_script", s(&R::custom_script)},
      {"custom_env", s(&R::custom_env)},
      {"perf_config_yaml", s(&R::perf_config_yaml)},
      {"model_name", s(&R::model_name)},
      {"required_devices", i(&R::required_devices)},
      {"total_required_devices", i(&R::total_required_devices)},
      {"required_devices_per_node", i(&R::required_devices_per_node)},
      {"test_db_gpu_count", i(&R::test_db_gpu_count)},
      {"skip_install", b(&R::skip_install)},
      {"build_project", b(&R::build_project)},
      {"container_image", s(&R::container_image)},
      {"monitor_timeout", s(&R::monitor_timeout)},
      {"max_pending", s(&R::max_pending)},
      {"silence_timeout", s(&R::silence_timeout)},
      {"node_count", i(&R::node_count)},
      {"partition", s(&R::partition)},
      {"account", s(&R::account)},
      {"time_limit", s(&R::time_limit)},
      {"device_type", s(&R::device_type)},
      {"checkpoint_path", s(&R::checkpoint_path)},
      {"models_path", s(&R::models_path)},
      {"llm_models_root", s(&R::llm_models_root)},
      {"container_runtime", s(&R::container_runtime)},
      {"persistent_mode", b(&R::persistent_mode)},
      {"docker_pull", s(&R::docker_pull)},
      {"docker_memory", s(&R::docker_memory)},
      {"eval_perf_fallback", b(&R::eval_perf_fallback)},
      {"slurm_cluster", s(&R::slurm_cluster)},
      {"ssh_host", s(&R::ssh_host)},
      {"ssh_config_file", s(&R::ssh_config_file)},
      {"ssh_port", i(&R::ssh_port)},
      {"identity", s(&R::identity)},
      {"ssh_option",
       [](const CaseRequest& r) {
         std::string out;
         for (const std::string& o : r.ssh_option) out += "l:" + o + ";";
         return out;
       }},
      {"user_name", s(&R::user_name)},
      {"slurm_user", s(&R::slurm_user)},
      {"remote_cwd", s(&R::remote_cwd)},
      {"remote_repo_path", s(&R::remote_repo_path)},
      {"repo_url", s(&R::repo_url)},
      {"repo_branch", s(&R::repo_branch)},
      {"extra_files",
       [](const CaseRequest& r) {
         std::string out;
         for (const std::string& f : r.extra_files) out += "l:" + f + ";";
         return out;
       }},
      {"release_allocation", b(&R::release_allocation)},
      {"alloc_time_limit", s(&R::alloc_time_limit)},
      {"repo_root", s(&R::repo_root)},
      {"scenario", s(&R::scenario)},
      {"slurm_env_file", s(&R::slurm_env_file)},
      {"slurm_password", s(&R::slurm_password)},
  };
  return members;
}

std::map<std::string, std::string> Given(const CaseRequest& request) {
  std::map<std::string, std::string> given;
  for (const auto& [name, render] : Members()) {
    std::string value = render(request);
    if (!value.empty()) given[name] = value;
  }
  return given;
}

std::string SampleValue(const RequestField& field) {
  // The Slurm time limits take durations or Slurm times only (slurm_time.h).
  if (field.name == "time_limit" || field.name == "alloc_time_limit") return "45";
  switch (field.type) {
    case FieldType::kInt:
      return "7";
    case FieldType::kBool:
      return "true";
    default:
      return "some value";
  }
}

TEST_CASE("RequestFields lists every settable field once, in declaration order", "[request]") {
  const std::vector<RequestField>& fields = RequestFields();
  REQUIRE(fields.size() == Members().size() - 1);  // all but slurm_password
  CHECK(fields.front().name == "test_cmd");
  CHECK(fields[3].name == "custom_cmd");
  CHECK(fields[8].name == "required_devices");
  CHECK(fields.back().name == "slurm_env_file");
  std::set<std::string> seen;
  for (const RequestField& field : fields) {
    INFO(field.name);
    CHECK(seen.insert(field.name).second);
    CHECK(Members().count(field.name) == 1);
    CHECK(field.name != "slurm_password");
    std::string kebab = field.name;
    std::replace(kebab.begin(), kebab.end(), '_', '-');
    CHECK(field.flag == kebab);
    CHECK_FALSE(field.help.empty());
    CHECK(field.help.find('\n') == std::string::npos);
  }
  auto type_of = [&](const std::string& name) {
    for (const RequestField& f : fields) {
      if (f.name == name) return f.type;
    }
    FAIL("no field " << name);
    return FieldType::kString;
  };
  CHECK(type_of("required_devices") == FieldType::kInt);
  CHECK(type_of("node_count") == FieldType::kInt);
  CHECK(type_of("skip_install") == FieldType::kBool);
  CHECK(type_of("build_project") == FieldType::kBool);
  CHECK(type_of("extra_files") == FieldType::kStringList);
  CHECK(type_of("monitor_timeout") == FieldType::kString);
}

TEST_CASE("Each field sets exactly its own member, by flag, by name and from a file", "[request]") {
  TempDir dir;
  for (const RequestField& field : RequestFields()) {
    INFO(field.name);
    std::string value = SampleValue(field);
    CaseRequest by_flag;
    REQUIRE(SetRequestField(&by_flag, field.flag, value, "--" + field.flag).ok());
    std::map<std::string, std::string> given = Given(by_flag);
    REQUIRE(given.size() == 1);
    CHECK(given.begin()->first == field.name);

    CaseRequest by_name;
    REQUIRE(SetRequestField(&by_name, field.name, value, "code").ok());
    CHECK(Given(by_name) == given);

    CaseRequest from_file;
    std::string path = dir.Write("one.yaml", field.name + ": " + value + "\n");
    Status loaded = LoadRequestFile(path, &from_file);
    INFO(loaded.ToString());
    REQUIRE(loaded.ok());
    CHECK(Given(from_file) == given);
  }
}

TEST_CASE("SetRequestField parses ints, bools and lists", "[request]") {
  CaseRequest r;
  REQUIRE(SetRequestField(&r, "required-devices", "8", "--required-devices").ok());
  CHECK(r.required_devices == 8);
  for (const char* yes : {"true", "yes", "1", "on", "TRUE", "Yes"}) {
    REQUIRE(SetRequestField(&r, "skip_install", yes, "x").ok());
    CHECK(r.skip_install == true);
  }
  for (const char* no : {"false", "no", "0", "off", "False"}) {
    REQUIRE(SetRequestField(&r, "skip_install", no, "x").ok());
    CHECK(r.skip_install == false);
  }
  REQUIRE(SetRequestField(&r, "extra_files", "/a", "x").ok());
  REQUIRE(SetRequestField(&r, "extra-files", "/b c", "x").ok());
  CHECK(r.extra_files == std::vector<std::string>{"/a", "/b c"});
  REQUIRE(SetRequestField(&r, "custom_cmd", "", "x").ok());  // ClassifyCommand judges commands
  CHECK(r.custom_cmd == std::string());
}

TEST_CASE("SetRequestField rejects bad ints and bools naming the field and origin", "[request]") {
  CaseRequest r;
  for (const char* bad : {"x", "0", "-1", "1.5", "", "8 GPUs", "99999999999"}) {
    INFO(bad);
    Status s = SetRequestField(&r, "total_required_devices", bad, "--total-required-devices");
    REQUIRE_FALSE(s.ok());
    CHECK(s.code() == StatusCode::kInvalidInput);
    CHECK(s.message() == "total_required_devices must be a positive integer, got '" +
                             std::string(bad) + "' (from --total-required-devices)");
  }
  CHECK_FALSE(r.total_required_devices.has_value());

  Status s = SetRequestField(&r, "build-project", "maybe", "--build-project");
  REQUIRE_FALSE(s.ok());
  CHECK(s.message() == "build_project must be true or false, got 'maybe' (from --build-project)");
  CHECK_THAT(s.hint(), Catch::Contains("yes/no"));
}

TEST_CASE("SetRequestField suggests the closest name for an unknown field", "[request]") {
  CaseRequest r;
  Status kebab = SetRequestField(&r, "custom-cmdd", "x", "--custom-cmdd");
  REQUIRE_FALSE(kebab.ok());
  CHECK(kebab.code() == StatusCode::kInvalidInput);
  CHECK_THAT(kebab.message(), Catch::Contains("'custom-cmdd'"));
  CHECK_THAT(kebab.hint(), Catch::StartsWith("did you mean 'custom-cmd'?"));

  Status snake = SetRequestField(&r, "reqired_devices", "2", "case.yaml:3");
  REQUIRE_FALSE(snake.ok());
  CHECK_THAT(snake.message(), Catch::Contains("case.yaml:3"));
  CHECK_THAT(snake.hint(), Catch::StartsWith("did you mean 'required_devices'?"));

  Status swapped = SetRequestField(&r, "parititon", "batch", "x");
  CHECK_THAT(swapped.hint(), Catch::StartsWith("did you mean 'partition'?"));

  Status far = SetRequestField(&r, "tp", "4", "--tp");
  REQUIRE_FALSE(far.ok());
  CHECK_THAT(far.hint(), !Catch::Contains("did you mean"));
  CHECK_THAT(far.hint(), Catch::Contains("required_devices"));
}

TEST_CASE("SetRequestField refuses slurm_password", "[request]") {
  CaseRequest r;
  Status s = SetRequestField(&r, "slurm-password", "hunter2", "--slurm-password");
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == StatusCode::kInvalidInput);
  CHECK_THAT(s.hint(), Catch::Contains("TRTLLM_RUN_SLURM_PASSWORD"));
  CHECK(s.ToString().find("hunter2") == std::string::npos);
  CHECK_FALSE(r.slurm_password.has_value());
}

constexpr const char* kYamlRequest = R"(# a custom case
custom_cmd: "python3 run.py --n 2"
custom_env:
  BATCH_SIZE: 32
  MSG: it's "quoted" $HOME
  EMPTY: ""
model_name: Llama-3.1-8B
required_devices: 8
required_devices_per_node: 4
skip_install: yes
build_project: false
monitor_timeout: 01:30:00
time_limit: "02:00:00"
extra_files:
  - /a/b.sh
  - /c d/e.txt
partition: batch
)";

constexpr const char* kJsonRequest = R"({
  "custom_cmd": "python3 run.py --n 2",
  "custom_env": {"BATCH_SIZE": 32, "MSG": "it's \"quoted\" $HOME", "EMPTY": ""},
  "model_name": "Llama-3.1-8B",
  "required_devices": 8,
  "required_devices_per_node": "4",
  "skip_install": true,
  "build_project": false,
  "monitor_timeout": "01:30:00",
  "time_limit": "02:00:00",
  "extra_files": ["/a/b.sh", "/c d/e.txt"],
  "partition": "batch"
})";

TEST_CASE("LoadRequestFile reads the same request from YAML and JSON", "[request]") {
  TempDir dir;
  CaseRequest from_yaml;
  Status y = LoadRequestFile(dir.Write("case.yaml", kYamlRequest), &from_yaml);
  INFO(y.ToString());
  REQUIRE(y.ok());
  CHECK(from_yaml.custom_cmd == std::string("python3 run.py --n 2"));
  CHECK(from_yaml.model_name == std::string("Llama-3.1-8B"));
  CHECK(from_yaml.required_devices == 8);
  CHECK(from_yaml.required_devices_per_node == 4);
  CHECK(from_yaml.skip_install == true);
  CHECK(from_yaml.build_project == false);
  CHECK(from_yaml.monitor_timeout == std::string("01:30:00"));
  CHECK(from_yaml.time_limit == std::string("02:00:00"));
  CHECK(from_yaml.extra_files == std::vector<std::string>{"/a/b.sh", "/c d/e.txt"});
  CHECK(from_yaml.partition == std::string("batch"));
  CHECK_FALSE(from_yaml.test_cmd.has_value());

  // custom_env as a mapping becomes KEY=VALUE pairs that parse back exactly.
  REQUIRE(from_yaml.custom_env.has_value());
  Result<std::vector<EnvVar>> env = ParseEnvAssignments(*from_yaml.custom_env, "custom_env");
  REQUIRE(env.ok());
  std::vector<EnvVar> expected = {
      {"BATCH_SIZE", "32"}, {"MSG", "it's \"quoted\" $HOME"}, {"EMPTY", ""}};
  CHECK(env.value() == expected);

  CaseRequest from_json;
  Status j = LoadRequestFile(dir.Write("case.json", kJsonRequest), &from_json);
  INFO(j.ToString());
  REQUIRE(j.ok());
  CHECK(Given(from_json) == Given(from_yaml));
}

TEST_CASE("LoadRequestFile accepts custom_env as a string or a list", "[request]") {
  TempDir dir;
  CaseRequest r;
  REQUIRE(LoadRequestFile(dir.Write("s.yaml", "custom_env: A=1 B='x y'\n"), &r).ok());
  CHECK(r.custom_env == std::string("A=1 B='x y'"));
  REQUIRE(LoadRequestFile(dir.Write("l.yaml", "custom_env: [A=1, \"B=x y\"]\n"), &r).ok());
  Result<std::vector<EnvVar>> env = ParseEnvAssignments(*r.custom_env, "custom_env");
  REQUIRE(env.ok());
  CHECK(env.value() == std::vector<EnvVar>{{"A", "1"}, {"B", "x y"}});

  Status bad = LoadRequestFile(dir.Write("b.yaml", "custom_env:\n  1BAD: x\n"), &r);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.message(), Catch::Contains("b.yaml:2"));
  CHECK_THAT(bad.message(), Catch::Contains("'1BAD' is not a valid variable name"));
}

TEST_CASE("LoadRequestFile overwrites only the fields the file names", "[request]") {
  TempDir dir;
  CaseRequest r;
  r.partition = "debug";
  r.account = "acct";
  r.extra_files = {"/old"};
  REQUIRE(LoadRequestFile(dir.Write("c.yaml", "partition: batch\nextra_files: /new\n"), &r).ok());
  CHECK(r.partition == std::string("batch"));
  CHECK(r.account == std::string("acct"));
  CHECK(r.extra_files == std::vector<std::string>{"/new"});
}

TEST_CASE("LoadRequestFile errors name the file, line, key and valid choices", "[request]") {
  TempDir dir;
  CaseRequest r;
  r.partition = "untouched";

  SECTION("unknown key with a suggestion") {
    std::string path = dir.Write("u.yaml", "custom_cmd: ls\nparttion: batch\n");
    Status s = LoadRequestFile(path, &r);
    REQUIRE_FALSE(s.ok());
    CHECK(s.code() == StatusCode::kInvalidInput);
    CHECK(s.message() == "unknown key 'parttion' (from " + path + ":2)");
    CHECK_THAT(s.hint(), Catch::StartsWith("did you mean 'partition'? valid keys: test_cmd, "));
  }
  SECTION("wrong shape for a scalar field") {
    std::string path = dir.Write("w.yaml", "partition:\n  - a\n  - b\n");
    Status s = LoadRequestFile(path, &r);
    REQUIRE_FALSE(s.ok());
    CHECK(s.message() == path + ":1: key 'partition' must be a string, got a list");
  }
  SECTION("bad integer") {
    std::string path = dir.Write("i.json", "{\n  \"node_count\": \"two\"\n}\n");
    Status s = LoadRequestFile(path, &r);
    REQUIRE_FALSE(s.ok());
    CHECK(s.message() == "node_count must be a positive integer, got 'two' (from " + path + ":2)");
  }
  SECTION("null value") {
    std::string path = dir.Write("n.yaml", "account:\n");
    Status s = LoadRequestFile(path, &r);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Contains("key 'account' must be a string, got nothing"));
  }
  SECTION("slurm_password is refused") {
    std::string path = dir.Write("p.yaml", "ssh_host: login\nslurm_password: hunter2\n");
    Status s = LoadRequestFile(path, &r);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Contains(path + ":2"));
    CHECK(s.hint() ==
          "never put a password in a request file; use $TRTLLM_RUN_SLURM_PASSWORD or "
          "--password-file");
    CHECK(s.ToString().find("hunter2") == std::string::npos);
    CHECK_FALSE(r.slurm_password.has_value());
  }
  SECTION("top level is not a mapping") {
    std::string path = dir.Write("l.yaml", "- custom_cmd: ls\n");
    Status s = LoadRequestFile(path, &r);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::StartsWith(path + ": a request file must be a mapping"));
  }
  SECTION("empty file") {
    Status s = LoadRequestFile(dir.Write("e.yaml", ""), &r);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Contains("must be a mapping"));
  }
  SECTION("YAML syntax error") {
    std::string path = dir.Write("s.yaml", "custom_cmd: ls\npartition: [batch\n");
    Status s = LoadRequestFile(path, &r);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::StartsWith(path + ":"));
    CHECK_THAT(s.message(), Catch::Contains("not valid YAML or JSON"));
  }
  SECTION("unterminated quote (yaml-cpp alone would swallow the rest of the file)") {
    std::string path = dir.Write("q.yaml", "partition: batch\ncustom_cmd: 'ls\nssh_host: h\n");
    Status s = LoadRequestFile(path, &r);
    REQUIRE_FALSE(s.ok());
    CHECK(s.message() == path + ":2: unterminated single-quoted string");
    std::string path2 = dir.Write("q2.yaml", "ssh_host: h\ncustom_cmd: \"ls \\\"x\\\"\n");
    Status s2 = LoadRequestFile(path2, &r);
    REQUIRE_FALSE(s2.ok());
    CHECK(s2.message() == path2 + ":2: unterminated double-quoted string");
  }
  SECTION("duplicate key") {
    std::string path = dir.Write("d.yaml", "partition: a\naccount: x\npartition: b\n");
    Status s = LoadRequestFile(path, &r);
    REQUIRE_FALSE(s.ok());
    CHECK(s.message() == path + ":3: key 'partition' is given twice (first on line 1)");
  }
  SECTION("missing file") {
    std::string path = dir.path() + "/missing.yaml";
    Status s = LoadRequestFile(path, &r);
    REQUIRE_FALSE(s.ok());
    CHECK(s.code() == StatusCode::kInvalidInput);
    CHECK_THAT(s.message(), Catch::Contains(path));
    CHECK_THAT(s.message(), Catch::Contains("No such file or directory"));
  }
  // A failed load changes nothing.
  CHECK(r.partition == std::string("untouched"));
  CHECK_FALSE(r.custom_cmd.has_value());
  CHECK_FALSE(r.ssh_host.has_value());
}

TEST_CASE("ClassifyCommand picks the one command kind given", "[request]") {
  CaseRequest none;
  CHECK(ClassifyCommand(none).value() == CommandKind::kNone);

  CaseRequest r;
  r.test_cmd = "pytest a.py";
  CHECK(ClassifyCommand(r).value() == CommandKind::kTest);
  r = CaseRequest();
  r.bench_cmd = "trtllm-bench throughput";
  CHECK(ClassifyCommand(r).value() == CommandKind::kBench);
  r = CaseRequest();
  r.eval_cmd = "trtllm-eval gsm8k";
  CHECK(ClassifyCommand(r).value() == CommandKind::kEval);
  r = CaseRequest();
  r.custom_cmd = "ls";
  CHECK(ClassifyCommand(r).value() == CommandKind::kCustom);
  r.custom_script = "/x.sh";  // same kind: the script takes precedence downstream
  CHECK(ClassifyCommand(r).value() == CommandKind::kCustom);
  r = CaseRequest();
  r.custom_script = "/x.sh";
  CHECK(ClassifyCommand(r).value() == CommandKind::kCustom);
}

TEST_CASE("ClassifyCommand rejects conflicting and empty commands", "[request]") {
  CaseRequest r;
  r.custom_cmd = "ls";
  r.test_cmd = "pytest";
  Result<CommandKind> conflict = ClassifyCommand(r);
  REQUIRE_FALSE(conflict.ok());
  CHECK(conflict.status().code() == StatusCode::kInvalidInput);
  CHECK(conflict.status().message() ==
        "conflicting commands: custom_cmd and test_cmd given; give exactly one of test_cmd, "
        "bench_cmd, eval_cmd, custom_cmd/custom_script");

  r.bench_cmd = "trtllm-bench";
  CHECK_THAT(ClassifyCommand(r).status().message(),
             Catch::StartsWith("conflicting commands: custom_cmd, bench_cmd and test_cmd given"));

  CaseRequest empty;
  empty.eval_cmd = " \t\n";
  Result<CommandKind> blank = ClassifyCommand(empty);
  REQUIRE_FALSE(blank.ok());
  CHECK(blank.status().message() == "eval_cmd is empty");
  empty.eval_cmd = "";
  CHECK(ClassifyCommand(empty).status().message() == "eval_cmd is empty");
}

// GCC 12 at -O2 reports std::optional<std::string> members of a default-constructed
// CaseRequest as maybe-uninitialized here (a known false positive of its inliner).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
TEST_CASE("MergeRequest copies exactly the given fields", "[request]") {
  CaseRequest base;
  base.partition = "debug";
  base.account = "a";
  base.required_devices = 2;
  base.skip_install = true;
  base.extra_files = {"/keep"};
  base.custom_cmd = "ls";

  CaseRequest overrides;
  overrides.partition = "batch";
  overrides.skip_install = false;
  overrides.node_count = 3;
  overrides.slurm_password = "pw";
  MergeRequest(overrides, &base);
  CHECK(base.partition == std::string("batch"));
  CHECK(base.account == std::string("a"));
  CHECK(base.required_devices == 2);
  CHECK(base.skip_install == false);
  CHECK(base.node_count == 3);
  CHECK(base.extra_files == std::vector<std::string>{"/keep"});
  CHECK(base.custom_cmd == std::string("ls"));
  CHECK(base.slurm_password == std::string("pw"));

  overrides = CaseRequest();
  overrides.extra_files = {"/new1", "/new2"};
  MergeRequest(overrides, &base);
  CHECK(base.extra_files == std::vector<std::string>{"/new1", "/new2"});

  // Every settable field is merged.
  CaseRequest all;
  for (const RequestField& field : RequestFields()) {
    REQUIRE(SetRequestField(&all, field.name, SampleValue(field), "x").ok());
  }
  CaseRequest target;
  MergeRequest(all, &target);
  CHECK(Given(target) == Given(all));
}

}  // namespace
}  // namespace trtllm_run
#pragma GCC diagnostic pop
