// The XML reader (xml_reader.h): one pass, an explicit stack (no recursion).
#include "stage/xml_reader.h"

#include <cstdint>
#include <string>

namespace trtllm_run {
namespace xml {
namespace {

bool IsNameStart(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || c >= 0x80;
}
bool IsNameChar(unsigned char c) {
  return IsNameStart(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

void AppendUtf8(std::uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Reader {
 public:
  Reader(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  Result<std::unique_ptr<Element>> Run() {
    std::vector<Element*> open;
    std::unique_ptr<Element> root;
    while (pos_ < text_.size()) {
      if (text_[pos_] != '<') {
        std::string chars;
        if (!ReadText(&chars)) return error_;
        if (open.empty()) {
          for (char c : chars) {
            if (!IsSpace(c)) return Error("text outside the root element");
          }
        } else {
          open.back()->text += chars;
        }
        continue;
      }
      if (Starts("<?")) {
        if (!SkipPast("?>", "processing instruction")) return error_;
      } else if (Starts("<!--")) {
        if (!SkipPast("-->", "comment")) return error_;
      } else if (Starts("<![CDATA[")) {
        if (open.empty()) return Error("CDATA outside the root element");
        std::size_t start = pos_ + 9;
        std::size_t end = text_.find("]]>", start);
        if (end == std::string_view::npos) return Error("unterminated CDATA section");
        open.back()->text.append(text_.substr(start, end - start));
        Advance(end + 3);
      } else if (Starts("<!")) {
        return Error("DOCTYPE and other declarations are not accepted");
      } else if (Starts("</")) {
        Advance(pos_ + 2);
        std::string name;
        if (!ReadName(&name)) return error_;
        SkipSpace();
        if (!Expect('>')) return error_;
        if (open.empty()) return Error("closing tag </" + name + "> without an open element");
        if (open.back()->name != name) {
          return Error("closing tag </" + name + "> does not match <" + open.back()->name + ">");
        }
        open.pop_back();
      } else {
        if (root && open.empty()) return Error("a second root element");
        Advance(pos_ + 1);
        auto element = std::make_unique<Element>();
        if (!ReadName(&element->name)) return error_;
        bool self_closing = false;
        if (!ReadAttributes(element.get(), &self_closing)) return error_;
        Element* raw = element.get();
        if (open.empty()) {
          root = std::move(element);
        } else {
          open.back()->children.push_back(std::move(element));
        }
        if (!self_closing) {
          if (static_cast<int>(open.size()) >= kMaxDepth) {
            return Error("elements nest deeper than " + std::to_string(kMaxDepth));
          }
          open.push_back(raw);
        }
      }
    }
    if (!open.empty()) {
      return Error("the document ends inside <" + open.back()->name +
                   "> (a truncated file: was the writer killed?)");
    }
    if (!root) return Error("no root element");
    return Result<std::unique_ptr<Element>>(std::move(root));
  }

 private:
  bool Starts(std::string_view s) const { return text_.substr(pos_, s.size()) == s; }

  void Advance(std::size_t to) {
    for (; pos_ < to && pos_ < text_.size(); ++pos_) {
      if (text_[pos_] == '\n') ++line_;
    }
  }

  Status Error(const std::string& what) {
    error_ = Status::InvalidInput(source_ + ": line " + std::to_string(line_) + ": " + what,
                                  "expected well-formed XML (a JUnit file pytest wrote)");
    return error_;
  }
  // Error() for the helpers that answer false.
  bool Fail(const std::string& what) {
    Error(what).IgnoreError();
    return false;
  }

  bool SkipPast(std::string_view end, const char* what) {
    std::size_t at = text_.find(end, pos_);
    if (at == std::string_view::npos) {
      Fail(std::string("unterminated ") + what);
      return false;
    }
    Advance(at + end.size());
    return true;
  }

  void SkipSpace() {
    while (pos_ < text_.size() && IsSpace(text_[pos_])) Advance(pos_ + 1);
  }

  bool Expect(char c) {
    if (pos_ >= text_.size() || text_[pos_] != c) {
      Fail(std::string("expected '") + c + "'");
      return false;
    }
    Advance(pos_ + 1);
    return true;
  }

  bool ReadName(std::string* name) {
    std::size_t start = pos_;
    if (pos_ >= text_.size() || !IsNameStart(static_cast<unsigned char>(text_[pos_]))) {
      Fail("expected a name");
      return false;
    }
    while (pos_ < text_.size() && IsNameChar(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    name->assign(text_.substr(start, pos_ - start));
    return true;
  }

  // Decodes the entity at pos_ ('&') into `out`.
  bool ReadEntity(std::string* out) {
    std::size_t end = text_.find(';', pos_);
    if (end == std::string_view::npos || end - pos_ > 12) {
      Fail("'&' that does not start an entity (write &amp;)");
      return false;
    }
    std::string_view entity = text_.substr(pos_ + 1, end - pos_ - 1);
    if (entity == "lt") {
      *out += '<';
    } else if (entity == "gt") {
      *out += '>';
    } else if (entity == "amp") {
      *out += '&';
    } else if (entity == "quot") {
      *out += '"';
    } else if (entity == "apos") {
      *out += '\'';
    } else if (entity.size() >= 2 && entity[0] == '#') {
      bool hex = entity[1] == 'x';
      std::string_view digits = entity.substr(hex ? 2 : 1);
      std::uint32_t cp = 0;
      if (digits.empty()) {
        Fail("empty character reference");
        return false;
      }
      for (char c : digits) {
        int value = -1;
        if (c >= '0' && c <= '9') value = c - '0';
        if (hex && c >= 'a' && c <= 'f') value = c - 'a' + 10;
        if (hex && c >= 'A' && c <= 'F') value = c - 'A' + 10;
        if (value < 0) {
          Fail("bad character reference &" + std::string(entity) + ";");
          return false;
        }
        cp = cp * (hex ? 16 : 10) + static_cast<std::uint32_t>(value);
        if (cp > 0x10FFFF) {
          Fail("character reference beyond U+10FFFF");
          return false;
        }
      }
      if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF)) {
        Fail("character reference to an invalid character");
        return false;
      }
      AppendUtf8(cp, out);
    } else {
      Fail("unknown entity &" + std::string(entity) + "; (no DTD entities are read)");
      return false;
    }
    Advance(end + 1);
    return true;
  }

  bool ReadText(std::string* out) {
    while (pos_ < text_.size() && text_[pos_] != '<') {
      if (text_[pos_] == '&') {
        if (!ReadEntity(out)) return false;
        continue;
      }
      std::size_t next = text_.find_first_of("<&", pos_);
      if (next == std::string_view::npos) next = text_.size();
      out->append(text_.substr(pos_, next - pos_));
      Advance(next);
    }
    return true;
  }

  bool ReadAttributes(Element* element, bool* self_closing) {
    for (;;) {
      SkipSpace();
      if (pos_ >= text_.size()) {
        Fail("the document ends inside the tag <" + element->name + ">");
        return false;
      }
      if (text_[pos_] == '>') {
        Advance(pos_ + 1);
        return true;
      }
      if (Starts("/>")) {
        Advance(pos_ + 2);
        *self_closing = true;
        return true;
      }
      std::string key;
      if (!ReadName(&key)) return false;
      SkipSpace();
      if (!Expect('=')) return false;
      SkipSpace();
      if (pos_ >= text_.size() || (text_[pos_] != '"' && text_[pos_] != '\'')) {
        Fail("attribute " + key + " of <" + element->name + "> has no quoted value");
        return false;
      }
      char quote = text_[pos_];
      Advance(pos_ + 1);
      std::string value;
      while (pos_ < text_.size() && text_[pos_] != quote) {
        char c = text_[pos_];
        if (c == '<') {
          Fail("'<' inside the value of attribute " + key);
          return false;
        }
        if (c == '&') {
          if (!ReadEntity(&value)) return false;
          continue;
        }
        // Attribute-value normalization: literal whitespace becomes a blank.
        value += (c == '\n' || c == '\t' || c == '\r') ? ' ' : c;
        Advance(pos_ + 1);
      }
      if (!Expect(quote)) return false;
      if (element->HasAttribute(key)) {
        Fail("attribute " + key + " repeated in <" + element->name + ">");
        return false;
      }
      element->attributes.emplace_back(std::move(key), std::move(value));
    }
  }

  std::string_view text_;
  const std::string& source_;
  std::size_t pos_ = 0;
  int line_ = 1;
  Status error_;
};

}  // namespace

const std::string& Element::Attribute(std::string_view key) const {
  static const std::string kEmpty;
  for (const auto& [k, v] : attributes) {
    if (k == key) return v;
  }
  return kEmpty;
}

bool Element::HasAttribute(std::string_view key) const {
  for (const auto& attribute : attributes) {
    if (attribute.first == key) return true;
  }
  return false;
}

const Element* Element::Child(std::string_view child_name) const {
  for (const auto& child : children) {
    if (child->name == child_name) return child.get();
  }
  return nullptr;
}

Result<std::unique_ptr<Element>> Parse(std::string_view text, const std::string& source) {
  return Reader(text, source).Run();
}

}  // namespace xml
}  // namespace trtllm_run
