#include "trtllm_run/sdk/job_spec.h"

#include <rapidjson/document.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace trtllm_run {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    char name[] = "/tmp/c_job_spec_test_XXXXXX";
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

JobSpec SampleSpec() {
  JobSpec spec;
  spec.scenario = "local_slurm";
  spec.workflow_type = "custom";
  spec.model_name = "llama_3_1_8b";
  spec.work_dir = "/repo/work_dirs/llama_3_1_8b_20260101_120000";
  spec.log_file = spec.work_dir + "/llama_3_1_8b_custom_%j.out";
  spec.repo_root = "/repo";
  spec.direct_cmd = "python3 -c 'print(\"hi\\n\")' && echo $HOME \u00e9";
  spec.custom_env = {{"A", "1"}, {"MSG", "x=y z"}, {"EMPTY", ""}};
  spec.monitor_timeout_seconds = 5400;
  spec.success_patterns = {"passed", "token/s"};
  spec.failure_patterns = {"Error", "Traceback"};
  spec.required_devices = 8;
  spec.total_required_devices = 16;
  spec.required_devices_per_node = 4;
  spec.node_count = 4;
  spec.job_name = "acct.custom";
  spec.container_image = "nvcr.io/nvidia/pytorch:25.01-py3";
  spec.build_project = false;
  spec.skip_install = true;
  spec.script_path = spec.work_dir + "/llama_3_1_8b_custom.slurm";
  spec.extra = {{"slurm_job_id", "1234"}, {"my_executor_state", "/home/u/work"}};
  spec.script_name = "llama_3_1_8b_custom.slurm";
  spec.log_file_pattern = "llama_3_1_8b_custom_%j.out";
  spec.extra_files = {"/repo/slurm_run_custom.sh"};
  SlurmParams params;
  params.partition = "batch";
  params.account = "research";
  params.time_limit = "02:00:00";
  params.nodes = 2;
  params.ntasks = 8;
  params.ntasks_per_node = 4;
  params.gpus_per_node = 4;
  params.gres = "gpu:4";
  params.mpi_plugin = "pmix_v4";
  spec.slurm_params = params;
  spec.slurm_env_json = R"({"user":"u","accounts":["research"],"pmix":{"preferred":"pmix_v4"}})";
  spec.container_name = "llama_3_1_8b_custom";
  spec.container_mounts = "/home/u:/home/u,/repo:/repo";
  spec.container_runtime = "pyxis";
  spec.persistent_mode = true;
  spec.partition = "batch";
  spec.remote_work_dir = "/home/u/TensorRT-LLM/work_dirs/x";
  spec.repo_branch = "main";
  return spec;
}

void CheckEqual(const JobSpec& a, const JobSpec& b) {
  CHECK(a.scenario == b.scenario);
  CHECK(a.workflow_type == b.workflow_type);
  CHECK(a.model_name == b.model_name);
  CHECK(a.work_dir == b.work_dir);
  CHECK(a.log_file == b.log_file);
  CHECK(a.repo_root == b.repo_root);
  CHECK(a.direct_cmd == b.direct_cmd);
  CHECK(a.custom_env == b.custom_env);
  CHECK(a.monitor_timeout_seconds == b.monitor_timeout_seconds);
  CHECK(a.success_patterns == b.success_patterns);
  CHECK(a.failure_patterns == b.failure_patterns);
  CHECK(a.required_devices == b.required_devices);
  CHECK(a.total_required_devices == b.total_required_devices);
  CHECK(a.required_devices_per_node == b.required_devices_per_node);
  CHECK(a.node_count == b.node_count);
  CHECK(a.job_name == b.job_name);
  CHECK(a.container_image == b.container_image);
  CHECK(a.build_project == b.build_project);
  CHECK(a.skip_install == b.skip_install);
  CHECK(a.script_path == b.script_path);
  CHECK(a.extra == b.extra);
  CHECK(a.script_name == b.script_name);
  CHECK(a.log_file_pattern == b.log_file_pattern);
  CHECK(a.extra_files == b.extra_files);
  CHECK(a.slurm_params == b.slurm_params);
  CHECK(a.slurm_env_json == b.slurm_env_json);
  CHECK(a.container_name == b.container_name);
  CHECK(a.container_mounts == b.container_mounts);
  CHECK(a.container_runtime == b.container_runtime);
  CHECK(a.persistent_mode == b.persistent_mode);
  CHECK(a.partition == b.partition);
  CHECK(a.remote_work_dir == b.remote_work_dir);
  CHECK(a.repo_branch == b.repo_branch);
}

std::vector<std::string> TopLevelKeys(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag>(json.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  std::vector<std::string> keys;
  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it)
    keys.push_back(it->name.GetString());
  return keys;
}

TEST_CASE("JobSpec round-trips through JSON", "[job_spec]") {
  JobSpec spec = SampleSpec();
  std::string json = JobSpecToJson(spec);
  Result<JobSpec> back = JobSpecFromJson(json, "job_spec.json");
  INFO(json);
  REQUIRE(back.ok());
  CheckEqual(back.value(), spec);

  JobSpec defaults;
  defaults.scenario = "local_direct";
  defaults.work_dir = "/w";
  Result<JobSpec> back_defaults = JobSpecFromJson(JobSpecToJson(defaults), "x");
  REQUIRE(back_defaults.ok());
  CheckEqual(back_defaults.value(), defaults);
}

TEST_CASE("JobSpec JSON uses the field names in struct order, extras last", "[job_spec]") {
  std::string json = JobSpecToJson(SampleSpec());
  std::vector<std::string> expected = {"scenario",
                                       "workflow_type",
                                       "model_name",
                                       "work_dir",
                                       "log_file",
                                       "repo_root",
                                       "direct_cmd",
                                       "working_dir",
                                       "custom_env",
                                       "monitor_timeout_seconds",
                                       "success_patterns",
                                       "failure_patterns",
                                       "required_devices",
                                       "total_required_devices",
                                       "required_devices_per_node",
                                       "node_count",
                                       "job_name",
                                       "container_image",
                                       "build_project",
                                       "skip_install",
                                       "script_path",
                                       "script_name",
                                       "log_file_pattern",
                                       "extra_files",
                                       "slurm_params",
                                       "slurm_env",
                                       "docker_cmd",
                                       "container_name",
                                       "container_mounts",
                                       "container_runtime",
                                       "persistent_mode",
                                       "device_type",
                                       "llm_models_root",
                                       "partition",
                                       "account",
                                       "time_limit",
                                       "slurm_cluster",
                                       "ssh_host",
                                       "slurm_user",
                                       "remote_cwd",
                                       "remote_repo_path",
                                       "remote_work_dir",
                                       "repo_url",
                                       "repo_branch",
                                       "my_executor_state",
                                       "slurm_job_id"};
  CHECK(TopLevelKeys(json) == expected);
  CHECK_THAT(json, Catch::Contains("\"custom_env\": [\n    \"A=1\",\n    \"MSG=x=y z\",\n    "
                                   "\"EMPTY=\"\n  ]"));
  CHECK_THAT(json, Catch::Contains("\n  \"node_count\": 4,\n"));
  CHECK_THAT(json, Catch::Contains("\"build_project\": false"));
  CHECK(json.back() == '\n');
}

TEST_CASE("JobSpec JSON is valid UTF-8 even when a command is not", "[job_spec]") {
  JobSpec spec = SampleSpec();
  spec.direct_cmd = std::string("echo \xff\xfe bad \xc3 end");
  std::string json = JobSpecToJson(spec);
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag>(json.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(std::string(doc["direct_cmd"].GetString()) ==
        "echo \xEF\xBF\xBD\xEF\xBF\xBD bad \xEF\xBF\xBD end");
}

TEST_CASE("JobSpecFromJson errors name the file, the key and the expected type", "[job_spec]") {
  const std::string origin = "/w/job_spec.json";
  auto error = [&](const std::string& text) {
    Result<JobSpec> r = JobSpecFromJson(text, origin);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidInput);
    return r.status().message();
  };
  CHECK_THAT(error("{\"scenario\": "), Catch::StartsWith(origin + ": not valid JSON at byte"));
  CHECK(error("[1, 2]") == origin + ": expected a JSON object at the top level, got an array");
  CHECK(error("{\"work_dir\": \"/w\"}") == origin + ": required key 'scenario' is missing");
  CHECK(error("{\"scenario\": \"local_direct\"}") ==
        origin + ": required key 'work_dir' is missing");
  const std::string base = "{\"scenario\": \"local_direct\", \"work_dir\": \"/w\", ";
  CHECK(error(base + "\"node_count\": \"2\"}") ==
        origin + ": key 'node_count' must be an integer, got a string");
  CHECK(error(base + "\"skip_install\": 1}") ==
        origin + ": key 'skip_install' must be a boolean (true or false), got an integer");
  CHECK(error(base + "\"success_patterns\": \"passed\"}") ==
        origin + ": key 'success_patterns' must be an array of strings, got a string");
  CHECK(error(base + "\"failure_patterns\": [\"a\", 3]}") ==
        origin +
            ": key 'failure_patterns' must be an array of strings, but element 1 is an "
            "integer");
  CHECK(error(base + "\"required_devices\": 1.5}") ==
        origin + ": key 'required_devices' must be an integer, got a number");
  CHECK(error(base + "\"node_count\": 99999999999}") ==
        origin + ": key 'node_count' is out of range for an integer");
  CHECK(error(base + "\"custom_env\": [\"NOEQUALS\"]}") ==
        origin + ": key 'custom_env' must hold \"KEY=VALUE\" strings, got 'NOEQUALS'");
  CHECK(error(base + "\"my_state\": {\"user\": \"u\"}}") ==
        origin + ": key 'my_state' must be a string, got an object");
  CHECK(error(base + "\"slurm_env\": \"text\"}") ==
        origin + ": key 'slurm_env' must be an object or null, got a string");
  CHECK(error("{\"scenario\": \"\", \"work_dir\": \"/w\"}") ==
        origin + ": key 'scenario' is empty; it names the executor");
}

TEST_CASE("JobSpecFromJson keeps unknown string keys as extras and defaults the rest",
          "[job_spec]") {
  Result<JobSpec> r = JobSpecFromJson(
      R"({"scenario": "my_exec", "work_dir": "/w", "my_exec_state": "ready", "z": ""})", "x");
  REQUIRE(r.ok());
  CHECK(r->extra == std::map<std::string, std::string>{{"my_exec_state", "ready"}, {"z", ""}});
  CHECK(r->monitor_timeout_seconds == 3600);
  CHECK(r->build_project == true);
  CHECK(r->node_count == 1);
  CHECK(r->custom_env.empty());
}

TEST_CASE("WriteJobSpec and ReadJobSpec use <work_dir>/job_spec.json", "[job_spec]") {
  TempDir dir;
  JobSpec spec = SampleSpec();
  spec.work_dir = dir.path();
  REQUIRE(WriteJobSpec(spec).ok());
  std::ifstream in(dir.path() + "/job_spec.json");
  std::string on_disk((std::istreambuf_iterator<char>(in)), {});
  CHECK(on_disk == JobSpecToJson(spec));

  Result<JobSpec> back = ReadJobSpec(dir.path());
  REQUIRE(back.ok());
  CheckEqual(back.value(), spec);
  Result<JobSpec> slash = ReadJobSpec(dir.path() + "/");
  REQUIRE(slash.ok());

  Result<JobSpec> missing = ReadJobSpec(dir.path() + "/nope");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kIoError);
  CHECK_THAT(missing.status().message(), Catch::Contains(dir.path() + "/nope/job_spec.json"));

  std::ofstream(dir.path() + "/job_spec.json") << "{\"scenario\": 3}";
  Result<JobSpec> corrupt = ReadJobSpec(dir.path());
  REQUIRE_FALSE(corrupt.ok());
  CHECK_THAT(corrupt.status().message(), Catch::StartsWith(dir.path() + "/job_spec.json: "));
}

TEST_CASE("WriteJobSpec refuses extras that collide with fields", "[job_spec]") {
  TempDir dir;
  JobSpec spec = SampleSpec();
  spec.work_dir = dir.path();
  spec.extra["node_count"] = "9";
  Status s = WriteJobSpec(spec);
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == StatusCode::kInvalidInput);
  CHECK_THAT(s.message(), Catch::Contains("'node_count'"));
  CHECK_FALSE(fs::exists(dir.path() + "/job_spec.json"));
  // The serializer alone keeps the field and drops the colliding extra.
  CHECK(JobSpecFromJson(JobSpecToJson(spec), "x")->node_count == 4);
}

}  // namespace
}  // namespace trtllm_run
