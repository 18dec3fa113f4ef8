// The PostgreSQL backend's URL helpers beyond history_store.h's (history_postgres.cc).
#ifndef TRTLLM_RUN_HISTORY_HISTORY_POSTGRES_URL_H_
#define TRTLLM_RUN_HISTORY_HISTORY_POSTGRES_URL_H_

#include <string>
#include <vector>

#include "trtllm_run/status.h"

namespace trtllm_run::history {

// The password texts of `url` (as written and percent-decoded), for WithoutSecrets.
std::vector<std::string> PostgresUrlSecrets(const std::string& url);

// `text` (a libpq message) with every occurrence of each secret replaced by "***" and its
// trailing whitespace dropped.
std::string WithoutSecrets(std::string text, const std::vector<std::string>& secrets);

// CheckPostgresUrl without the password refusal: *has_password says whether it has one.
Status CheckPostgresUrlForm(const std::string& url, bool* has_password);

}  // namespace trtllm_run::history

#endif  // TRTLLM_RUN_HISTORY_HISTORY_POSTGRES_URL_H_
