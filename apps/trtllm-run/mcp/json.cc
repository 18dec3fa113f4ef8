#include "json.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace trtllm_run::mcp {

std::string ValidUtf8(std::string_view text) {
  static const char kReplacement[] = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    std::size_t length = c < 0x80           ? 1
                         : (c >> 5) == 0x6  ? 2
                         : (c >> 4) == 0xE  ? 3
                         : (c >> 3) == 0x1E ? 4
                                            : 0;
    bool ok = length > 0 && i + length <= text.size();
    for (std::size_t k = 1; ok && k < length; ++k) {
      ok = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    }
    if (ok && length == 2) ok = c >= 0xC2;
    if (ok && length == 3) {
      unsigned char c1 = static_cast<unsigned char>(text[i + 1]);
      ok = !((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0));
    }
    if (ok && length == 4) {
      unsigned char c1 = static_cast<unsigned char>(text[i + 1]);
      ok = !((c == 0xF0 && c1 < 0x90) || c > 0xF4 || (c == 0xF4 && c1 >= 0x90));
    }
    if (!ok) {
      out += kReplacement;
      ++i;
      continue;
    }
    out.append(text.data() + i, length);
    i += length;
  }
  return out;
}

Value Str(std::string_view text, Allocator& alloc) {
  std::string valid = ValidUtf8(text);
  Value value;
  value.SetString(valid.data(), static_cast<rapidjson::SizeType>(valid.size()), alloc);
  return value;
}

Value StrArray(const std::vector<std::string>& items, Allocator& alloc) {
  Value array(rapidjson::kArrayType);
  for (const std::string& item : items) array.PushBack(Str(item, alloc), alloc);
  return array;
}

void Set(Value* object, std::string_view key, Value& value, Allocator& alloc) {
  Value name(key.data(), static_cast<rapidjson::SizeType>(key.size()), alloc);
  auto it = object->FindMember(name);
  if (it != object->MemberEnd()) {
    it->value = value;  // rapidjson's assignment moves
  } else {
    object->AddMember(name, value, alloc);
  }
}

void SetStr(Value* object, std::string_view key, std::string_view text, Allocator& alloc) {
  Set(object, key, Str(text, alloc), alloc);
}

std::string ToJson(const Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

const Value* Member(const Value& object, std::string_view key) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(Value(key.data(), static_cast<rapidjson::SizeType>(key.size())));
  return it == object.MemberEnd() ? nullptr : &it->value;
}

bool ParseInto(const std::string& text, Allocator& alloc, Value* out) {
  Document doc(&alloc);
  doc.Parse<rapidjson::kParseIterativeFlag>(text.c_str(), text.size());
  out->SetNull();
  if (doc.HasParseError()) return false;
  out->CopyFrom(doc, alloc);
  return true;
}

}  // namespace trtllm_run::mcp
