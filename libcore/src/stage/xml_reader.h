// A small, strict reader for the XML that tools write (pytest's JUnit files): elements,
// attributes, text, CDATA, comments, processing instructions and the five named and the
// numeric character references. No DTDs (a <!DOCTYPE> is refused, so no entity expansion),
// no namespaces (a prefix stays part of the name).
#ifndef TRTLLM_RUN_STAGE_XML_READER_H_
#define TRTLLM_RUN_STAGE_XML_READER_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trtllm_run/status.h"

namespace trtllm_run {
namespace xml {

struct Element {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;  // in document order
  std::vector<std::unique_ptr<Element>> children;
  std::string text;  // the character data directly inside, concatenated (entities decoded)

  // The attribute's value, or "" when absent.
  const std::string& Attribute(std::string_view key) const;
  bool HasAttribute(std::string_view key) const;
  // The first child with this name, or nullptr.
  const Element* Child(std::string_view child_name) const;
};

// Elements may nest this deep; deeper documents are refused (no stack exhaustion).
inline constexpr int kMaxDepth = 64;

// Parses a whole document. kInvalidInput "<source>: line N: <what>" when it is not
// well-formed: unclosed or mismatched tags, a bad attribute, an unknown entity, a DOCTYPE,
// text after the root, no root.
Result<std::unique_ptr<Element>> Parse(std::string_view text, const std::string& source);

}  // namespace xml
}  // namespace trtllm_run

#endif  // TRTLLM_RUN_STAGE_XML_READER_H_
