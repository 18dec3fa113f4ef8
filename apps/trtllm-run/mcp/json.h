// RapidJSON helpers of the MCP server: building values, one-line serialization, and
// text that is always valid UTF-8 (logs may hold any bytes; JSON text may not).
#ifndef TRTLLM_RUN_APPS_MCP_JSON_H_
#define TRTLLM_RUN_APPS_MCP_JSON_H_

#include <rapidjson/document.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trtllm_run::mcp {

using Value = rapidjson::Value;
using Document = rapidjson::Document;
using Allocator = rapidjson::Document::AllocatorType;

// `text` with every byte that is not part of valid UTF-8 replaced by U+FFFD.
std::string ValidUtf8(std::string_view text);

// A string value (copied, made valid UTF-8).
Value Str(std::string_view text, Allocator& alloc);

// An array of strings.
Value StrArray(const std::vector<std::string>& items, Allocator& alloc);

// Sets object[key] = value (replacing an existing member). Like RapidJSON's AddMember it
// takes `value` over: an lvalue is left null.
void Set(Value* object, std::string_view key, Value& value, Allocator& alloc);
inline void Set(Value* object, std::string_view key, Value&& value, Allocator& alloc) {
  Set(object, key, value, alloc);
}
void SetStr(Value* object, std::string_view key, std::string_view text, Allocator& alloc);

// `value` as one line of JSON (no newline: the writer escapes control characters).
std::string ToJson(const Value& value);

// The member `key` of an object, or null when absent or `object` is not an object.
const Value* Member(const Value& object, std::string_view key);

// Parses JSON text into *out, allocated from `alloc`; false (and *out null) when invalid.
bool ParseInto(const std::string& text, Allocator& alloc, Value* out);

}  // namespace trtllm_run::mcp

#endif  // TRTLLM_RUN_APPS_MCP_JSON_H_
