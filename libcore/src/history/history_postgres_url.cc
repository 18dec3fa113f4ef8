// PostgreSQL URLs of the history store (history_store.h): which locations are URLs, how a
// URL is shown without its password, and which URLs a user may give.
#include <cctype>
#include <memory>

#include "history/history_postgres_url.h"
#include "history/history_store.h"
#include "history/libpq.h"

namespace trtllm_run::history {
namespace {

constexpr char kRedacted[] = "***";

std::size_t SchemeLength(const std::string& url) {
  for (const char* scheme : {"postgresql://", "postgres://"}) {
    const std::string prefix = scheme;
    if (url.size() >= prefix.size()) {
      bool same = true;
      for (std::size_t i = 0; i < prefix.size() && same; ++i) {
        same = std::tolower(static_cast<unsigned char>(url[i])) == prefix[i];
      }
      if (same) return prefix.size();
    }
  }
  return 0;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX decoded (a malformed escape is kept as it is).
std::string PercentDecoded(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      const int high = HexValue(text[i + 1]);
      const int low = HexValue(text[i + 2]);
      if (high >= 0 && low >= 0) {
        out += static_cast<char>(high * 16 + low);
        i += 2;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

// Where the password of `url` is, as libpq reads it: the user info's part after ':' (the
// user info ends at the first '@' before any '/'), and each password= parameter's value.
std::vector<std::pair<std::size_t, std::size_t>> PasswordSpans(const std::string& url) {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  const std::size_t start = SchemeLength(url);
  if (start == 0) return spans;
  const std::size_t stop = url.find_first_of("@/", start);
  if (stop != std::string::npos && url[stop] == '@') {
    const std::size_t colon = url.find(':', start);
    if (colon != std::string::npos && colon < stop) spans.push_back({colon + 1, stop});
  }
  const std::size_t query = url.find('?', start);
  if (query == std::string::npos) return spans;
  std::size_t at = query + 1;
  while (at <= url.size()) {
    std::size_t end = url.find('&', at);
    if (end == std::string::npos) end = url.size();
    const std::size_t equals = url.find('=', at);
    if (equals != std::string::npos && equals < end &&
        PercentDecoded(url.substr(at, equals - at)) == "password") {
      spans.push_back({equals + 1, end});
    }
    at = end + 1;
  }
  return spans;
}

bool AllDigits(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

bool IsPostgresUrl(const std::string& location) { return SchemeLength(location) > 0; }

std::string RedactPostgresUrl(const std::string& url) {
  std::string out;
  std::size_t at = 0;
  for (const auto& [begin, end] : PasswordSpans(url)) {
    out += url.substr(at, begin - at);
    if (end > begin) out += kRedacted;
    at = end;
  }
  return out + url.substr(at);
}

std::vector<std::string> PostgresUrlSecrets(const std::string& url) {
  std::vector<std::string> secrets;
  for (const auto& [begin, end] : PasswordSpans(url)) {
    if (end <= begin) continue;
    secrets.push_back(url.substr(begin, end - begin));
    secrets.push_back(PercentDecoded(secrets.back()));
  }
  return secrets;
}

std::string WithoutSecrets(std::string text, const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    for (std::size_t at = text.find(secret); at != std::string::npos;
         at = text.find(secret, at + sizeof(kRedacted) - 1)) {
      text.replace(at, secret.size(), kRedacted);
    }
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

Status CheckPostgresUrlForm(const std::string& url, bool* has_password) {
  *has_password = false;
  const std::string shown = RedactPostgresUrl(url);
  // libpq parses the URL: loaded here, at the first sight of a PostgreSQL URL.
  Result<const LibPq*> libpq = LoadLibPq();
  if (!libpq.ok()) return libpq.status().WithContext("history store " + shown);
  char* error = nullptr;
  std::unique_ptr<PQconninfoOption, void (*)(PQconninfoOption*)> options(
      Pq().PQconninfoParse(url.c_str(), &error), Pq().PQconninfoFree);
  if (!options) {
    const std::string why =
        WithoutSecrets(error != nullptr ? error : "out of memory", PostgresUrlSecrets(url));
    Pq().PQfreemem(error);
    return Status::InvalidInput(
        "history store " + shown + ": not a valid PostgreSQL URL: " + why,
        "e.g. postgresql://USER@HOST:5432/DATABASE (the password in ~/.pgpass)");
  }
  for (const PQconninfoOption* option = options.get(); option->keyword != nullptr; ++option) {
    if (option->val == nullptr) continue;
    const std::string keyword = option->keyword;
    const std::string value = option->val;
    if (keyword == "password" && !value.empty()) *has_password = true;
    if (keyword == "port") {
      std::size_t at = 0;
      for (;;) {  // a list, one port per host
        const std::size_t comma = value.find(',', at);
        const std::string port = value.substr(at, comma == std::string::npos ? comma : comma - at);
        if (!port.empty() && (!AllDigits(port) || port.size() > 5 || std::stoi(port) > 65535)) {
          return Status::InvalidInput("history store " + shown + ": port '" +
                                          WithoutSecrets(port, PostgresUrlSecrets(url)) +
                                          "' is not a port number",
                                      "e.g. postgresql://USER@HOST:5432/DATABASE");
        }
        if (comma == std::string::npos) break;
        at = comma + 1;
      }
    }
    if (keyword == "connect_timeout" && (!AllDigits(value) || value.size() > 6)) {
      return Status::InvalidInput("history store " + shown + ": connect_timeout '" +
                                      WithoutSecrets(value, PostgresUrlSecrets(url)) +
                                      "' is not a number of seconds",
                                  "e.g. ?connect_timeout=10");
    }
  }
  return Status::Ok();
}

Status CheckPostgresUrl(const std::string& url) {
  bool has_password = false;
  TRTLLM_RUN_RETURN_IF_ERROR(CheckPostgresUrlForm(url, &has_password));
  if (has_password) {
    return Status::InvalidInput(
        "history store " + RedactPostgresUrl(url) +
            ": the URL carries a password; a password is never given on the command line or "
            "in a config file (others can read them)",
        "drop it from the URL: libpq reads it from ~/.pgpass (mode 0600), from the file "
        "$PGPASSFILE names, or from $PGPASSWORD");
  }
  return Status::Ok();
}

}  // namespace trtllm_run::history
