// Private helpers for messages about YAML input (request files, cases files, the cluster
// catalog): where a node is and what shape it has.
#ifndef TRTLLM_RUN_MODEL_YAML_UTIL_H_
#define TRTLLM_RUN_MODEL_YAML_UTIL_H_

#include <yaml-cpp/yaml.h>

#include <string>

#include "trtllm_run/status.h"

namespace trtllm_run {

// Ok when `root` nests lists and mappings at most kMaxNestingDepth deep and has at most
// kMaxYamlNodes nodes, each use of an alias counted as a copy of what it names (cycles
// included); else kInvalidInput naming `origin` and the line. Walks iteratively, visiting
// at most kMaxYamlNodes nodes, so call it on every document before converting it
// (input_limits.cc).
Status CheckYamlNodeLimits(const YAML::Node& root, const std::string& origin);

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

#endif  // TRTLLM_RUN_MODEL_YAML_UTIL_H_
