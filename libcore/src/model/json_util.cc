#include "model/json_util.h"

#include <rapidjson/error/en.h>

namespace trtllm_run {
namespace json {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is invalid
// (truncated, overlong, a surrogate or above U+10FFFF).
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  auto cont = [&](size_t k) { return k < s.size() && (byte(k) & 0xC0) == 0x80; };
  unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (!cont(i + 1) || !cont(i + 2)) return 0;
    unsigned char b1 = byte(i + 1);
    if (b0 == 0xE0 && b1 < 0xA0) return 0;   // overlong
    if (b0 == 0xED && b1 >= 0xA0) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (!cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
    unsigned char b1 = byte(i + 1);
    if (b0 == 0xF0 && b1 < 0x90) return 0;   // overlong
    if (b0 == 0xF4 && b1 >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

// The offset of the first '[' or '{' (outside strings) that opens a level deeper than
// `max_depth`, or npos. Exact for valid JSON; for invalid JSON the parser's error stands.
size_t TooDeepAt(const std::string& text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string::npos;
}

// The offset of the first number token (outside strings) longer than `max_chars`, or
// npos. A run of number characters is counted, so for invalid JSON the parser's error
// may be the one that should have come; either way the text is refused.
size_t OverlongNumberAt(const std::string& text, size_t max_chars) {
  bool in_string = false;
  size_t run_start = std::string::npos;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    const bool number_char =
        (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
    if (!number_char) {
      run_start = std::string::npos;
      in_string = c == '"';
      continue;
    }
    if (run_start == std::string::npos) run_start = i;
    if (i - run_start + 1 > max_chars) return run_start;
  }
  return std::string::npos;
}

}  // namespace

std::string ValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    size_t n = Utf8SequenceLength(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

void WriteString(Writer* writer, std::string_view value) {
  std::string valid = ValidUtf8(value);
  writer->String(valid.data(), static_cast<rapidjson::SizeType>(valid.size()));
}

void WriteKey(Writer* writer, std::string_view key) {
  std::string valid = ValidUtf8(key);
  writer->Key(valid.data(), static_cast<rapidjson::SizeType>(valid.size()));
}

void WriteStringArray(Writer* writer, const std::vector<std::string>& values) {
  writer->StartArray();
  for (const std::string& value : values) WriteString(writer, value);
  writer->EndArray();
}

Status ParseDocument(const std::string& text, const std::string& origin, rapidjson::Document* doc) {
  const size_t deep = TooDeepAt(text, kMaxNestingDepth);
  if (deep != std::string::npos) {
    doc->SetNull();
    return Status::InvalidInput(origin + ": arrays and objects nest deeper than " +
                                    std::to_string(kMaxNestingDepth) + " levels at byte " +
                                    std::to_string(deep) + "; refused before parsing",
                                "no input of trtllm-run needs that (the input limits are in "
                                "docs/security.md)");
  }
  const size_t overlong = OverlongNumberAt(text, kMaxJsonNumberChars);
  if (overlong != std::string::npos) {
    doc->SetNull();
    return Status::InvalidInput(origin + ": a number at byte " + std::to_string(overlong) +
                                    " is longer than " + std::to_string(kMaxJsonNumberChars) +
                                    " characters; refused before parsing",
                                "no input of trtllm-run needs that (the input limits are in "
                                "docs/security.md)");
  }
  doc->Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseFullPrecisionFlag>(text.data(),
                                                                                  text.size());
  if (doc->HasParseError()) {
    return Status::InvalidInput(origin + ": not valid JSON at byte " +
                                std::to_string(doc->GetErrorOffset()) + ": " +
                                rapidjson::GetParseError_En(doc->GetParseError()));
  }
  return Status::Ok();
}

Status ParseObject(const std::string& text, const std::string& origin, rapidjson::Document* doc) {
  TRTLLM_RUN_RETURN_IF_ERROR(ParseDocument(text, origin, doc));
  if (!doc->IsObject()) {
    return Status::InvalidInput(origin + ": expected a JSON object at the top level, got " +
                                TypeName(*doc));
  }
  return Status::Ok();
}

const char* TypeName(const rapidjson::Value& value) {
  switch (value.GetType()) {
    case rapidjson::kNullType:
      return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return "a boolean";
    case rapidjson::kObjectType:
      return "an object";
    case rapidjson::kArrayType:
      return "an array";
    case rapidjson::kStringType:
      return "a string";
    case rapidjson::kNumberType:
      if (value.IsUint64()) return "an integer";
      return value.IsInt64() ? "a negative integer" : "a number";
  }
  return "an unknown type";
}

Status ObjectReader::WrongType(const char* key, const char* expected) const {
  return Status::InvalidInput(origin_ + ": key '" + key + "' must be " + expected + ", got " +
                              TypeName(object_[key]));
}

Status ObjectReader::Require(const char* key) const {
  if (!object_.HasMember(key)) {
    return Status::InvalidInput(origin_ + ": required key '" + key + "' is missing");
  }
  return Status::Ok();
}

Status ObjectReader::GetString(const char* key, std::string* out) const {
  if (!Has(key)) return Status::Ok();
  const rapidjson::Value& v = object_[key];
  if (!v.IsString()) return WrongType(key, "a string");
  out->assign(v.GetString(), v.GetStringLength());
  return Status::Ok();
}

Status ObjectReader::GetInt(const char* key, int* out) const {
  if (!Has(key)) return Status::Ok();
  const rapidjson::Value& v = object_[key];
  if (!v.IsInt()) {
    if (v.IsInt64() || v.IsUint64()) {
      return Status::InvalidInput(origin_ + ": key '" + key + "' is out of range for an integer");
    }
    return WrongType(key, "an integer");
  }
  *out = v.GetInt();
  return Status::Ok();
}

Status ObjectReader::GetOptionalInt(const char* key, std::optional<int>* out) const {
  if (!Has(key)) return Status::Ok();
  const rapidjson::Value& v = object_[key];
  if (v.IsNull()) {
    out->reset();
    return Status::Ok();
  }
  if (!v.IsInt()) return WrongType(key, "an integer or null");
  *out = v.GetInt();
  return Status::Ok();
}

Status ObjectReader::GetBool(const char* key, bool* out) const {
  if (!Has(key)) return Status::Ok();
  const rapidjson::Value& v = object_[key];
  if (!v.IsBool()) return WrongType(key, "a boolean (true or false)");
  *out = v.GetBool();
  return Status::Ok();
}

Status ObjectReader::GetUint64(const char* key, std::uint64_t* out) const {
  if (!Has(key)) return Status::Ok();
  const rapidjson::Value& v = object_[key];
  if (!v.IsUint64()) return WrongType(key, "a non-negative integer");
  *out = v.GetUint64();
  return Status::Ok();
}

Status ObjectReader::GetDouble(const char* key, double* out) const {
  if (!Has(key)) return Status::Ok();
  const rapidjson::Value& v = object_[key];
  if (!v.IsNumber()) return WrongType(key, "a number");
  *out = v.GetDouble();
  return Status::Ok();
}

Status ObjectReader::GetStringArray(const char* key, std::vector<std::string>* out) const {
  if (!Has(key)) return Status::Ok();
  const rapidjson::Value& v = object_[key];
  if (!v.IsArray()) return WrongType(key, "an array of strings");
  std::vector<std::string> values;
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    if (!v[i].IsString()) {
      return Status::InvalidInput(origin_ + ": key '" + key + "' must be an array of strings, " +
                                  "but element " + std::to_string(i) + " is " + TypeName(v[i]));
    }
    values.emplace_back(v[i].GetString(), v[i].GetStringLength());
  }
  *out = std::move(values);
  return Status::Ok();
}

Status ObjectReader::GetStringMap(const char* key, std::map<std::string, std::string>* out) const {
  if (!Has(key)) return Status::Ok();
  const rapidjson::Value& v = object_[key];
  if (!v.IsObject()) return WrongType(key, "an object of strings");
  std::map<std::string, std::string> values;
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    std::string name(it->name.GetString(), it->name.GetStringLength());
    if (!it->value.IsString()) {
      return Status::InvalidInput(origin_ + ": key '" + key + "." + name + "' must be a string, " +
                                  "got " + TypeName(it->value));
    }
    values[name] = std::string(it->value.GetString(), it->value.GetStringLength());
  }
  *out = std::move(values);
  return Status::Ok();
}

}  // namespace json
}  // namespace trtllm_run
