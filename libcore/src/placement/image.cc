// Container image resolution from jenkins/current_image_tags.properties.
#include "placement/image.h"

#include <sys/stat.h>
#include <cctype>

#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

bool IsKeyChar(char c, bool first) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
         (!first && std::isdigit(static_cast<unsigned char>(c)));
}

std::string Strip(std::string_view text) {
  size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return std::string(text.substr(begin, end - begin));
}

// The longest value a line may expand to. An image reference is at most a few hundred
// bytes; without a cap, `A=${A}${A}` repeated doubles A on every line, and a 7 KB file
// expanded to gigabytes (found by fuzz_image_tags).
constexpr size_t kMaxExpandedValueBytes = 4096;

// Expands ${VAR} and $VAR from `values`. An unknown variable is an error naming it; so is
// a result longer than kMaxExpandedValueBytes.
Result<std::string> Interpolate(const std::string& value, const ImageTags& tags,
                                const std::string& where) {
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '$' || i + 1 >= value.size()) {
      out += value[i];
      continue;
    }
    std::string name;
    size_t next = i + 1;
    if (value[next] == '{') {
      size_t close = value.find('}', next);
      if (close == std::string::npos) {
        return Status::InvalidInput(where + ": unterminated ${ in '" + value + "'");
      }
      name = value.substr(next + 1, close - next - 1);
      next = close + 1;
    } else {
      while (next < value.size() && IsKeyChar(value[next], name.empty())) name += value[next++];
      if (name.empty()) {
        out += value[i];
        continue;
      }
    }
    auto found = tags.values.find(name);
    if (found == tags.values.end()) {
      return Status::InvalidInput(where + ": '" + value + "' uses ${" + name +
                                  "}, which is not defined above it");
    }
    if (out.size() + found->second.size() > kMaxExpandedValueBytes) {
      return Status::InvalidInput(where + ": the value expands to more than " +
                                      std::to_string(kMaxExpandedValueBytes) + " bytes",
                                  "an image tag line is KEY=\"registry/name:tag\", with "
                                  "${VAR} naming values defined above it");
    }
    out += found->second;
    i = next - 1;
  }
  return out;
}

std::string KeyList(const ImageTags& tags) {
  std::string list;
  for (const std::string& key : tags.keys) list += (list.empty() ? "" : ", ") + key;
  return list.empty() ? "(none)" : list;
}

}  // namespace

std::string ImageArch(std::string_view device_type, std::string_view arch) {
  if (device_type.size() >= 2) {
    char a = static_cast<char>(std::toupper(static_cast<unsigned char>(device_type[0])));
    char b = static_cast<char>(std::toupper(static_cast<unsigned char>(device_type[1])));
    if (a == 'G' && (b == 'B' || b == 'H')) return "aarch64";
  }
  if (arch == "aarch64" || arch == "arm64" || arch == "sbsa") return "aarch64";
  return "x86_64";
}

std::string ImageTagKey(std::string_view arch) {
  return arch == "aarch64" ? "LLM_SBSA_DOCKER_IMAGE" : "LLM_DOCKER_IMAGE";
}

Result<ImageTags> ParseImageTags(const std::string& text, const std::string& origin) {
  ImageTags tags;
  size_t start = 0;
  int line_number = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = Strip(std::string_view(text).substr(start, end - start));
    start = end + 1;
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    std::string where = origin + ":" + std::to_string(line_number);
    if (line.rfind("export ", 0) == 0) line = Strip(line.substr(7));
    size_t eq = line.find('=');
    std::string key = eq == std::string::npos ? line : line.substr(0, eq);
    bool valid_key = !key.empty();
    for (size_t i = 0; i < key.size(); ++i) valid_key = valid_key && IsKeyChar(key[i], i == 0);
    if (eq == std::string::npos || !valid_key) {
      return Status::InvalidInput(
          where + ": expected KEY=VALUE, got '" + line + "'",
          "the file must stay parseable by sh: KEY=VALUE lines, # comments");
    }
    std::string value = line.substr(eq + 1);
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front()) {
      bool single = value.front() == '\'';
      value = value.substr(1, value.size() - 2);
      if (single) {
        if (!tags.values.count(key)) tags.keys.push_back(key);
        tags.values[key] = value;
        continue;
      }
    }
    Result<std::string> expanded = Interpolate(value, tags, where);
    if (!expanded.ok()) return expanded.status();
    if (!tags.values.count(key)) tags.keys.push_back(key);
    tags.values[key] = expanded.value();
  }
  return tags;
}

Result<ImageResolution> ResolveContainerImage(const std::string& container_image,
                                              const std::string& repo_root,
                                              std::string_view device_type, std::string_view arch) {
  ImageResolution resolution;
  if (!container_image.empty()) {
    resolution.image = container_image;
    resolution.source = "container_image";
    resolution.note = "container_image " + container_image + ": given";
    return resolution;
  }
  const std::string path = repo_root + "/jenkins/current_image_tags.properties";
  const std::string target_arch = ImageArch(device_type, arch);
  const std::string key = ImageTagKey(target_arch);
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return Status::InvalidInput(
        "no container image: --container-image was not given and '" + path + "' does not exist",
        "give --container-image URI, or --repo-root of a TensorRT-LLM checkout (it has "
        "jenkins/current_image_tags.properties with " +
            key + ")");
  }
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  Result<ImageTags> tags = ParseImageTags(text.value(), path);
  if (!tags.ok()) return tags.status();
  auto found = tags->values.find(key);
  if (found == tags->values.end() || found->second.empty()) {
    return Status::InvalidInput(
        "'" + path + "' has no " + key + " (the image key for " + target_arch + ")",
        "keys in the file: " + KeyList(tags.value()) + "; give --container-image URI instead");
  }
  resolution.image = found->second;
  resolution.source = path + ":" + key;
  std::string why = !device_type.empty() && target_arch == "aarch64" && arch != "aarch64"
                        ? "device_type " + std::string(device_type)
                        : "arch " + std::string(arch.empty() ? "x86_64 (default)" : arch);
  resolution.note =
      "container_image " + resolution.image + ": " + key + " of " + path + " (" + why + ")";
  return resolution;
}

std::string EnrootImage(std::string_view image) {
  if (image.empty() || image.find('#') != std::string_view::npos) return std::string(image);
  if (image.front() == '/' || image.front() == '.') return std::string(image);
  size_t slash = image.find('/');
  if (slash == std::string_view::npos) return std::string(image);
  std::string_view host = image.substr(0, slash);
  bool registry = host == "localhost" || host.find('.') != std::string_view::npos ||
                  host.find(':') != std::string_view::npos;
  if (!registry) return std::string(image);
  std::string out(image);
  out[slash] = '#';
  return out;
}

}  // namespace trtllm_run
