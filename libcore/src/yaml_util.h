// Private helpers for messages about YAML input (request files, cases files, the cluster
// catalog): where a node is and what shape it has.
#ifndef TRTLLM_RUN_YAML_UTIL_H_
#define TRTLLM_RUN_YAML_UTIL_H_

#include <yaml-cpp/yaml.h>

#include <string>

namespace trtllm_run {

// "<origin>:<line>" for a node read from `origin`; `origin` alone when it has no position.
inline std::string YamlWhere(const std::string& origin, const YAML::Mark& mark) {
  return mark.is_null() ? origin : origin + ":" + std::to_string(mark.line + 1);
}

// The node's shape for "must be X, got Y" messages: "a list", "a mapping", ...
inline const char* YamlNodeKind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "nothing (null)";
    case YAML::NodeType::Scalar:
      return "a single value";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Undefined:
      break;
  }
  return "an undefined value";
}

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_YAML_UTIL_H_
