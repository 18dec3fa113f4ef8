// libpq, PostgreSQL's client library, loaded with dlopen on first use: only a process that
// uses a PostgreSQL history store pays for loading it and its dependencies (GnuTLS, LDAP,
// Kerberos: ~20 libraries the dynamic loader would otherwise relocate at every start of
// trtllm-run, plan and run alike). libtrtllm_run_core does not link it (no DT_NEEDED).
#ifndef TRTLLM_RUN_HISTORY_LIBPQ_H_
#define TRTLLM_RUN_HISTORY_LIBPQ_H_

#include <libpq-fe.h>

#include "trtllm_run/status.h"

namespace trtllm_run::history {

// The soname loaded, and the Debian package that installs it (named in the error).
inline constexpr char kLibPqSoname[] = "libpq.so.5";
inline constexpr char kLibPqDebianPackage[] = "libpq5";

// The libpq functions the PostgreSQL store uses, with libpq-fe.h's signatures.
struct LibPq {
  decltype(&::PQconninfoParse) PQconninfoParse;
  decltype(&::PQconninfoFree) PQconninfoFree;
  decltype(&::PQfreemem) PQfreemem;
  decltype(&::PQconnectdbParams) PQconnectdbParams;
  decltype(&::PQsetNoticeProcessor) PQsetNoticeProcessor;
  decltype(&::PQstatus) PQstatus;
  decltype(&::PQerrorMessage) PQerrorMessage;
  decltype(&::PQreset) PQreset;
  decltype(&::PQfinish) PQfinish;
  decltype(&::PQexec) PQexec;
  decltype(&::PQexecParams) PQexecParams;
  decltype(&::PQresultStatus) PQresultStatus;
  decltype(&::PQresultErrorMessage) PQresultErrorMessage;
  decltype(&::PQresultErrorField) PQresultErrorField;
  decltype(&::PQntuples) PQntuples;
  decltype(&::PQgetvalue) PQgetvalue;
  decltype(&::PQgetlength) PQgetlength;
  decltype(&::PQgetisnull) PQgetisnull;
  decltype(&::PQcmdTuples) PQcmdTuples;
  decltype(&::PQclear) PQclear;
};

// libpq's functions, loaded once per process (thread-safe; never unloaded). kNotFound
// naming kLibPqSoname, the loader's reason and the package to install when the library
// cannot be loaded or lacks one of the functions; the same status on every later call.
Result<const LibPq*> LoadLibPq();

// The loaded functions; only after LoadLibPq() has succeeded in this process.
const LibPq& Pq();

}  // namespace trtllm_run::history

#endif  // TRTLLM_RUN_HISTORY_LIBPQ_H_
