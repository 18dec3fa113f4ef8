// Private RapidJSON helpers shared by job_spec.cc and result.cc: writing strings as
// valid UTF-8, and typed reads whose errors name the file, the key and the expected type.
#ifndef TRTLLM_RUN_MODEL_JSON_UTIL_H_
#define TRTLLM_RUN_MODEL_JSON_UTIL_H_

#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trtllm_run/sdk/input_limits.h"
#include "trtllm_run/status.h"

namespace trtllm_run {
namespace json {

using Writer = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

// Returns `text` with every invalid UTF-8 sequence replaced by U+FFFD, so that log
// lines with stray bytes still make a valid JSON document.
std::string ValidUtf8(std::string_view text);

void WriteString(Writer* writer, std::string_view value);
void WriteKey(Writer* writer, std::string_view key);
void WriteStringArray(Writer* writer, const std::vector<std::string>& values);

// Parses `text` into `doc` with RapidJSON's iterative (non-recursive) parser, after
// checking that arrays and objects nest at most kMaxNestingDepth deep (so that recursive
// readers and writers of `doc` are bounded too) and that no number token is longer than
// kMaxJsonNumberChars. Errors are kInvalidInput naming `origin` and the byte offset: for
// syntax errors RapidJSON's reason, else the limit.
Status ParseDocument(const std::string& text, const std::string& origin, rapidjson::Document* doc);

// Parses `text` into `doc` as ParseDocument and checks that the top level is an object. Errors name
// `origin` and, for syntax errors, the byte offset and RapidJSON's reason.
Status ParseObject(const std::string& text, const std::string& origin, rapidjson::Document* doc);

// The JSON type of `value` in words ("a string", "a number", "null", ...).
const char* TypeName(const rapidjson::Value& value);

// Typed reads of object member `key`. An absent key leaves `*out` unchanged and is OK;
// a present key of the wrong type is kInvalidInput naming origin, key and the expected
// type.
class ObjectReader {
 public:
  ObjectReader(const rapidjson::Value& object, std::string origin)
      : object_(object), origin_(std::move(origin)) {}

  bool Has(const char* key) const { return object_.HasMember(key); }
  Status Require(const char* key) const;

  Status GetString(const char* key, std::string* out) const;
  Status GetInt(const char* key, int* out) const;
  Status GetOptionalInt(const char* key, std::optional<int>* out) const;  // null: absent
  Status GetBool(const char* key, bool* out) const;
  Status GetUint64(const char* key, std::uint64_t* out) const;
  Status GetDouble(const char* key, double* out) const;
  Status GetStringArray(const char* key, std::vector<std::string>* out) const;
  Status GetStringMap(const char* key, std::map<std::string, std::string>* out) const;

  Status WrongType(const char* key, const char* expected) const;
  const std::string& origin() const { return origin_; }

 private:
  const rapidjson::Value& object_;
  std::string origin_;
};

}  // namespace json
}  // namespace trtllm_run

#endif  // TRTLLM_RUN_MODEL_JSON_UTIL_H_
