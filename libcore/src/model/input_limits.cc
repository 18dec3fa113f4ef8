// Input limits (input_limits.h): bounded file reads, and the nesting and alias expansion
// a YAML document may have, checked by walking it iteratively before anything converts it.
#include "trtllm_run/sdk/input_limits.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "model/yaml_util.h"

namespace trtllm_run {
namespace {

// "52428800 bytes (50.0 MiB)".
std::string Bytes(std::size_t bytes) {
  char text[64];
  if (bytes >= (std::size_t{1} << 20)) {
    std::snprintf(text, sizeof text, "%zu bytes (%.1f MiB)", bytes,
                  static_cast<double>(bytes) / (1 << 20));
  } else {
    std::snprintf(text, sizeof text, "%zu bytes", bytes);
  }
  return text;
}

Status Refusal(std::string_view what, const std::string& origin, const std::string& size_text,
               std::size_t max_bytes) {
  return Status::InvalidInput(std::string(what) + " '" + origin + "' is " + size_text +
                                  ", over the limit of " + Bytes(max_bytes) +
                                  "; nothing of it was parsed",
                              "give a smaller file (the input limits are in docs/security.md)");
}

}  // namespace

Status TooLarge(std::string_view what, const std::string& origin, std::size_t size,
                std::size_t max_bytes) {
  return Refusal(what, origin, Bytes(size), max_bytes);
}

Result<std::string> ReadFileLimited(const std::string& path, std::size_t max_bytes,
                                    std::string_view what) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return Status::IoError("cannot read " + path + ": " + std::strerror(err));
  }
  struct stat info {};
  if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) &&
      static_cast<std::size_t>(info.st_size) > max_bytes) {
    close(fd);
    return TooLarge(what, path, static_cast<std::size_t>(info.st_size), max_bytes);
  }
  std::string contents;
  char buffer[65536];
  while (true) {
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      return Status::IoError("cannot read " + path + ": " + std::strerror(err));
    }
    if (n == 0) break;
    contents.append(buffer, static_cast<std::size_t>(n));
    if (contents.size() > max_bytes) {
      close(fd);
      return Refusal(what, path, "more than " + Bytes(max_bytes), max_bytes);  // rest unread
    }
  }
  close(fd);
  return contents;
}

Status CheckYamlNodeLimits(const YAML::Node& root, const std::string& origin) {
  struct Pending {
    YAML::Node node;
    int depth;  // of the collection that holds it; 0 for the root
  };
  // Nodes are counted when they are queued, so the queue itself stays within the budget;
  // an alias is queued (and counted) at every place it is used, a cycle ends at the depth.
  std::vector<Pending> pending;
  pending.push_back({root, 0});
  std::size_t queued = 1;
  while (!pending.empty()) {
    Pending next = std::move(pending.back());
    pending.pop_back();
    const YAML::Node& node = next.node;
    if (!node.IsSequence() && !node.IsMap()) continue;
    const int depth = next.depth + 1;
    if (depth > kMaxNestingDepth) {
      return Status::InvalidInput(YamlWhere(origin, node.Mark()) + ": lists and mappings nest " +
                                      "deeper than " + std::to_string(kMaxNestingDepth) +
                                      " levels; refused before reading any value",
                                  "no input of trtllm-run needs that (the input limits are in "
                                  "docs/security.md)");
    }
    const std::size_t children = node.size() * (node.IsMap() ? 2 : 1);
    if (queued + children > kMaxYamlNodes) {
      return Status::InvalidInput(
          YamlWhere(origin, node.Mark()) + ": the document has more than " +
              std::to_string(kMaxYamlNodes) +
              " nodes, counting each use of an alias (*name) as a copy of what it names; "
              "refused before reading any value",
          "repeat less through aliases (the input limits are in docs/security.md)");
    }
    queued += children;
    if (node.IsSequence()) {
      for (const auto& item : node) pending.push_back({item, depth});
    } else {
      for (const auto& entry : node) {
        pending.push_back({entry.first, depth});
        pending.push_back({entry.second, depth});
      }
    }
  }
  return Status::Ok();
}

Status CheckYamlLimits(const std::string& text, const std::string& origin) {
  try {
    return CheckYamlNodeLimits(YAML::Load(text), origin);
  } catch (const YAML::Exception&) {
    return Status::Ok();  // not YAML: the caller's own parse says where
  }
}

}  // namespace trtllm_run
