// Container image resolution (spec 000 Step 3, spec 001/002 Step 1): the caller's image,
// else the repo's jenkins/current_image_tags.properties by CPU arch. The canonical form
// (registry host followed by '/') is what job_spec.json stores; the enroot form
// (host#path) is applied only where pyxis/enroot consumes it.
#ifndef TRTLLM_RUN_PLACEMENT_IMAGE_H_
#define TRTLLM_RUN_PLACEMENT_IMAGE_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "trtllm_run/status.h"

namespace trtllm_run {

// "aarch64" when `device_type` starts with GB or GH (Grace systems, case-insensitive) or
// `arch` is aarch64/arm64; otherwise "x86_64".
std::string ImageArch(std::string_view device_type, std::string_view arch);

// The properties key for an arch: LLM_SBSA_DOCKER_IMAGE (aarch64) or LLM_DOCKER_IMAGE.
std::string ImageTagKey(std::string_view arch);

// Parses an image tags file: `#` comment lines, blank lines, KEY=VALUE lines (optional
// `export `, optional matching quotes around the value), `${VAR}` / `$VAR` expanded from
// keys defined above. Keys keep file order. `origin` is named in errors (line numbers).
struct ImageTags {
  std::vector<std::string> keys;  // file order, each once
  std::map<std::string, std::string> values;
};
Result<ImageTags> ParseImageTags(const std::string& text, const std::string& origin);

struct ImageResolution {
  std::string image;   // canonical URI
  std::string source;  // "container_image" or "<file>:<KEY>"
  std::string note;    // one line for the plan summary
};

// container_image if given (verbatim); else <repo_root>/jenkins/current_image_tags.properties
// at the EXACT key for the arch (ImageArch). kInvalidInput naming the file and the keys it
// has when the file or the key is missing.
Result<ImageResolution> ResolveContainerImage(const std::string& container_image,
                                              const std::string& repo_root,
                                              std::string_view device_type, std::string_view arch);

// The enroot/pyxis form of an image URI: `host/path:tag` -> `host#path:tag` when the first
// component is a registry host (contains '.' or ':' or is "localhost"). Local files
// (absolute or relative paths), images without a registry and URIs that already have
// a '#' are returned unchanged.
std::string EnrootImage(std::string_view image);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_PLACEMENT_IMAGE_H_
