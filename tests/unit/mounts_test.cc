// Container mounts (spec 001 Step 2): home, project, the four models rules in order, and
// the custom script's directory.
#include "placement/mounts.h"
#include "plan_test_support.h"

using namespace plan_test;

namespace {

MountInputs Base() {
  MountInputs in;
  in.home = "/home/u";
  in.project = "/work/TensorRT-LLM/";
  in.llm_models_root = "/llm-models";
  in.default_models_repo = "/data/models";
  return in;
}

std::string Joined(const MountInputs& in) {
  Result<MountResolution> out = ResolveMounts(in);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return out->Joined();
}

}  // namespace

TEST_CASE("models mount: the first rule that applies wins", "[mounts]") {
  MountInputs in = Base();
  in.cluster_mounts = std::vector<std::string>{"/lustre/models:/llm-models", "/lustre/ds:/ds"};
  in.models_path = "/srv/models/";
  in.checkpoint_path = "/ckpt/llama/Llama-3.1-8B";

  CHECK(Joined(in) ==
        "/home/u:/home/u,/work/TensorRT-LLM:/work/TensorRT-LLM,/ckpt/llama:/llm-models");
  in.checkpoint_path.reset();
  CHECK(Joined(in) ==
        "/home/u:/home/u,/work/TensorRT-LLM:/work/TensorRT-LLM,/srv/models:/llm-models");
  in.models_path.reset();
  CHECK(Joined(in) ==
        "/home/u:/home/u,/work/TensorRT-LLM:/work/TensorRT-LLM,/lustre/models:/llm-models,"
        "/lustre/ds:/ds");
  in.cluster_mounts.reset();
  CHECK(Joined(in) ==
        "/home/u:/home/u,/work/TensorRT-LLM:/work/TensorRT-LLM,/data/models:/llm-models");

  Result<MountResolution> out = ResolveMounts(in);
  REQUIRE(out.ok());
  CHECK(out->models_host_path == "/data/models");
  CHECK_THAT(out->notes.back(), Catch::Contains("rule 4"));
}

TEST_CASE("models mount: nothing to use, or no llm_models_root, is an error", "[mounts]") {
  MountInputs in = Base();
  in.default_models_repo.clear();
  Result<MountResolution> none = ResolveMounts(in);
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().code() == StatusCode::kInvalidInput);
  CHECK_THAT(none.status().hint(), Catch::Contains("--models-path"));

  in = Base();
  in.llm_models_root.clear();
  Result<MountResolution> no_root = ResolveMounts(in);
  REQUIRE_FALSE(no_root.ok());
  CHECK_THAT(no_root.status().message(), Catch::Contains("llm_models_root is not set"));
  CHECK_THAT(no_root.status().hint(), Catch::Contains("--llm-models-root"));

  // The cluster's mounts need no llm_models_root.
  in.cluster_mounts = std::vector<std::string>{"/lustre/models:/models"};
  CHECK(ResolveMounts(in).ok());
}

TEST_CASE("the custom script's directory is added unless already covered", "[mounts]") {
  MountInputs in = Base();
  in.extra_dir = "/work/TensorRT-LLM/scripts";
  CHECK(Joined(in) ==
        "/home/u:/home/u,/work/TensorRT-LLM:/work/TensorRT-LLM,/data/models:/llm-models");
  in.extra_dir = "/opt/my scripts/";
  CHECK(Joined(in) ==
        "/home/u:/home/u,/work/TensorRT-LLM:/work/TensorRT-LLM,/data/models:/llm-models,"
        "/opt/my scripts:/opt/my scripts");
  in.extra_dir = "/home/u2";  // a prefix of a name is not a parent directory
  CHECK_THAT(Joined(in), Catch::Contains("/home/u2:/home/u2"));
}

TEST_CASE("no home (remote home unknown): left out with a note", "[mounts]") {
  MountInputs in = Base();
  in.home.clear();
  Result<MountResolution> out = ResolveMounts(in);
  REQUIRE(out.ok());
  CHECK(out->Joined() == "/work/TensorRT-LLM:/work/TensorRT-LLM,/data/models:/llm-models");
  CHECK_THAT(out->notes.front(), Catch::Contains("no home directory mounted"));
  CHECK(MountsCover({"/a/b:/x"}, "/a/b/c"));
  CHECK_FALSE(MountsCover({"/a/b:/x"}, "/a/bc"));
}
