// Container image resolution from the repo's image tags file (spec 000 Step 3): the real
// file, a release where `_12_9` keys come first, interpolation, errors, and the enroot
// form.
#include "placement/image.h"
#include "plan_test_support.h"

using namespace plan_test;

namespace {

const char kX86[] =
    "urm.nvidia.com/sw-tensorrt-docker/tensorrt-llm-staging/tritondevel:"
    "x86_64-tritondevel-torch_skip-cca75fa-github-pr-9225-1249";
const char kSbsa[] =
    "urm.nvidia.com/sw-tensorrt-docker/tensorrt-llm-staging/tritondevel:"
    "sbsa-tritondevel-torch_skip-cca75fa-github-pr-9225-1249";

std::string Resolve(const std::string& repo, const std::string& device_type,
                    const std::string& arch) {
  Result<ImageResolution> image = ResolveContainerImage("", repo, device_type, arch);
  INFO(image.status().ToString());
  REQUIRE(image.ok());
  return image->image;
}

}  // namespace

TEST_CASE("the real image tags file resolves by arch and device type", "[image]") {
  const std::string repo = FakeRepo();
  CHECK(Resolve(repo, "", "x86_64") == kX86);
  CHECK(Resolve(repo, "", "") == kX86);
  CHECK(Resolve(repo, "H100", "x86_64") == kX86);
  CHECK(Resolve(repo, "B200", "") == kX86);
  CHECK(Resolve(repo, "", "aarch64") == kSbsa);
  CHECK(Resolve(repo, "GB200", "") == kSbsa);
  CHECK(Resolve(repo, "GH200", "x86_64") == kSbsa);  // the device type names a Grace system
  CHECK(Resolve(repo, "gb300", "") == kSbsa);

  Result<ImageResolution> image = ResolveContainerImage("", repo, "GB200", "");
  REQUIRE(image.ok());
  CHECK(image->source == repo + "/jenkins/current_image_tags.properties:LLM_SBSA_DOCKER_IMAGE");
  CHECK_THAT(image->note, Catch::Contains("device_type GB200"));
}

TEST_CASE("a file with _12_9 keys first still yields the plain key", "[image]") {
  const std::string repo = FixturePath("image_tags_12_9");
  const std::string base = "urm.nvidia.com/sw-tensorrt-docker/tensorrt-llm";
  CHECK(Resolve(repo, "", "x86_64") == base + ":x86_64-tritondevel-2507-pr-7777");
  CHECK(Resolve(repo, "GB200", "") == base + ":sbsa-tritondevel-2507-pr-7777");
}

TEST_CASE("the caller's image is used verbatim", "[image]") {
  Result<ImageResolution> image =
      ResolveContainerImage("nvcr.io/nvidia/pytorch:25.01-py3", "/nonexistent", "GB200", "");
  REQUIRE(image.ok());
  CHECK(image->image == "nvcr.io/nvidia/pytorch:25.01-py3");
  CHECK(image->source == "container_image");
}

TEST_CASE("image tags parsing: comments, quotes, export, interpolation, errors", "[image]") {
  Result<ImageTags> tags = ParseImageTags(
      "# a comment with # and = signs\n"
      "\n"
      "export A=one\n"
      "B=\"two ${A}\"\n"
      "C='${A} stays'\n"
      "D=$A-$B\n",
      "tags.properties");
  REQUIRE(tags.ok());
  CHECK(tags->keys == std::vector<std::string>{"A", "B", "C", "D"});
  CHECK(tags->values["B"] == "two one");
  CHECK(tags->values["C"] == "${A} stays");
  CHECK(tags->values["D"] == "one-two one");

  Result<ImageTags> bad = ParseImageTags("A=1\nnot a pair\n", "f.properties");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("f.properties:2"));
  Result<ImageTags> undefined = ParseImageTags("A=${NOPE}/x\n", "f.properties");
  REQUIRE_FALSE(undefined.ok());
  CHECK_THAT(undefined.status().message(), Catch::Contains("${NOPE}"));
}

TEST_CASE("image tags parsing: a value doubling itself line by line is refused at 4 KiB",
          "[image]") {
  // 40 lines of A=${A}${A} would make A 2^40 bytes (the fuzzer's timeout).
  std::string text = "A=\"nvcr.io/nvidia/x:1\"\n";
  for (int i = 0; i < 40; ++i) text += "A=\"${A}${A}\"\n";
  Result<ImageTags> doubled = ParseImageTags(text, "tags.properties");
  REQUIRE_FALSE(doubled.ok());
  CHECK(doubled.status().code() == StatusCode::kInvalidInput);
  // nvcr.io/nvidia/x:1 is 18 bytes: 18 * 2^8 = 4608 > 4096 on the 8th doubling, line 9.
  CHECK_THAT(doubled.status().message(),
             Catch::Contains("tags.properties:9") && Catch::Contains("4096 bytes"));
  // Up to the cap a value may still reuse others.
  Result<ImageTags> fine = ParseImageTags(
      "BASE=nvcr.io/nvidia\nIMAGE=${BASE}/pytorch:25.01\nSBSA=${BASE}/pytorch:25.01-sbsa\n",
      "tags.properties");
  REQUIRE(fine.ok());
  CHECK(fine->values["SBSA"] == "nvcr.io/nvidia/pytorch:25.01-sbsa");
}

TEST_CASE("missing tags file or key: errors name the file and the keys present", "[image]") {
  TempDir repo;
  Result<ImageResolution> missing = ResolveContainerImage("", repo.path(), "", "x86_64");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kInvalidInput);
  CHECK_THAT(missing.status().message(),
             Catch::Contains(repo.path() + "/jenkins/current_image_tags.properties"));
  CHECK_THAT(missing.status().hint(), Catch::Contains("--container-image"));

  WriteText(repo / "jenkins/current_image_tags.properties",
            "LLM_DOCKER_IMAGE_12_9=a/b:1\nLLM_DOCKER_IMAGE=a/b:2\n");
  Result<ImageResolution> no_key = ResolveContainerImage("", repo.path(), "GH200", "");
  REQUIRE_FALSE(no_key.ok());
  CHECK_THAT(no_key.status().message(), Catch::Contains("has no LLM_SBSA_DOCKER_IMAGE"));
  CHECK_THAT(no_key.status().hint(), Catch::Contains("LLM_DOCKER_IMAGE_12_9, LLM_DOCKER_IMAGE"));
}

TEST_CASE("only the exact key: LLM_DOCKER_IMAGE_12_9 alone is not LLM_DOCKER_IMAGE", "[image]") {
  // The suffixed keys sort after the plain ones: a lookup that took the next key in order
  // would pick the CUDA 12.9 image for a run that asked for the default one.
  TempDir repo;
  WriteText(repo / "jenkins/current_image_tags.properties",
            "LLM_DOCKER_IMAGE_12_9=a/b:x86-12.9\nLLM_SBSA_DOCKER_IMAGE_12_9=a/b:sbsa-12.9\n");
  for (const char* device_type : {"", "GB200"}) {
    INFO("device_type '" << device_type << "'");
    Result<ImageResolution> image = ResolveContainerImage("", repo.path(), device_type, "");
    REQUIRE_FALSE(image.ok());
    CHECK(image.status().code() == StatusCode::kInvalidInput);
    CHECK_THAT(image.status().message(),
               Catch::Contains(std::string("has no ") +
                               (*device_type ? "LLM_SBSA_DOCKER_IMAGE" : "LLM_DOCKER_IMAGE") +
                               " (the image key for"));
    CHECK_THAT(image.status().hint(),
               Catch::Contains("LLM_DOCKER_IMAGE_12_9, LLM_SBSA_DOCKER_IMAGE_12_9"));
  }
}

TEST_CASE("EnrootImage rewrites the registry host separator only", "[image]") {
  CHECK(EnrootImage("urm.nvidia.com/sw/tensorrt-llm:tag") == "urm.nvidia.com#sw/tensorrt-llm:tag");
  CHECK(EnrootImage("localhost:5000/img:1") == "localhost:5000#img:1");
  CHECK(EnrootImage("localhost/img") == "localhost#img");
  CHECK(EnrootImage("nvcr.io#nvidia/pytorch:1") == "nvcr.io#nvidia/pytorch:1");
  CHECK(EnrootImage("library/ubuntu:22.04") == "library/ubuntu:22.04");
  CHECK(EnrootImage("ubuntu") == "ubuntu");
  CHECK(EnrootImage("/images/trtllm.sqsh") == "/images/trtllm.sqsh");
  CHECK(ImageArch("", "arm64") == "aarch64");
  CHECK(ImageTagKey("aarch64") == "LLM_SBSA_DOCKER_IMAGE");
  CHECK(ImageTagKey("x86_64") == "LLM_DOCKER_IMAGE");
}
