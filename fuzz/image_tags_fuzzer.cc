// jenkins/current_image_tags.properties of the TensorRT-LLM checkout (image.h):
// ParseImageTags.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "placement/image.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(trtllm_run_fuzz::AsText(data, size));
  trtllm_run::Result<trtllm_run::ImageTags> tags =
      trtllm_run::ParseImageTags(text, "fuzz_tags.properties");
  if (!tags.ok()) {
    FUZZ_CHECK(tags.status().message().find("fuzz_tags.properties") != std::string::npos);
    return 0;
  }
  // Every key is listed once, in file order, with its value.
  FUZZ_CHECK(tags.value().keys.size() == tags.value().values.size());
  for (const std::string& key : tags.value().keys) FUZZ_CHECK(tags.value().values.count(key) == 1);
  return 0;
}
