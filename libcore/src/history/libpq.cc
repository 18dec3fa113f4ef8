// Loads libpq with dlopen (libpq.h): the functions resolved into one table, once.
#include "history/libpq.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

namespace trtllm_run::history {
namespace {

struct LoadedLibPq {
  LibPq functions{};
  Status status = Status::Ok();
};

// Resolves `name` into `*slot`; false (and `*missing` = name) when the library lacks it.
template <typename Function>
bool ResolveLibPqSymbol(void* library, const char* name, Function* slot, std::string* missing) {
  void* address = dlsym(library, name);
  if (address == nullptr) {
    *missing = name;
    return false;
  }
  *slot = reinterpret_cast<Function>(address);
  return true;
}

Status LibPqNotLoadable(const std::string& why) {
  return Status::NotFound(std::string("a PostgreSQL history store needs ") + kLibPqSoname +
                              " (PostgreSQL's client library), which cannot be loaded: " + why,
                          std::string("install the Debian package ") + kLibPqDebianPackage +
                              " (apt-get install " + kLibPqDebianPackage +
                              "), or give --history a SQLite file");
}

LoadedLibPq LoadLibPqOnce() {
  LoadedLibPq loaded;
  // RTLD_NOW: a missing symbol of libpq's own dependencies fails here, not mid-query.
  // RTLD_LOCAL: its symbols stay out of the global namespace (no plugin binds to them).
  void* library = dlopen(kLibPqSoname, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    loaded.status = LibPqNotLoadable(why != nullptr ? why : "dlopen failed");
    return loaded;
  }
  LibPq& f = loaded.functions;
  std::string missing;
  const bool all =
      ResolveLibPqSymbol(library, "PQconninfoParse", &f.PQconninfoParse, &missing) &&
      ResolveLibPqSymbol(library, "PQconninfoFree", &f.PQconninfoFree, &missing) &&
      ResolveLibPqSymbol(library, "PQfreemem", &f.PQfreemem, &missing) &&
      ResolveLibPqSymbol(library, "PQconnectdbParams", &f.PQconnectdbParams, &missing) &&
      ResolveLibPqSymbol(library, "PQsetNoticeProcessor", &f.PQsetNoticeProcessor, &missing) &&
      ResolveLibPqSymbol(library, "PQstatus", &f.PQstatus, &missing) &&
      ResolveLibPqSymbol(library, "PQerrorMessage", &f.PQerrorMessage, &missing) &&
      ResolveLibPqSymbol(library, "PQreset", &f.PQreset, &missing) &&
      ResolveLibPqSymbol(library, "PQfinish", &f.PQfinish, &missing) &&
      ResolveLibPqSymbol(library, "PQexec", &f.PQexec, &missing) &&
      ResolveLibPqSymbol(library, "PQexecParams", &f.PQexecParams, &missing) &&
      ResolveLibPqSymbol(library, "PQresultStatus", &f.PQresultStatus, &missing) &&
      ResolveLibPqSymbol(library, "PQresultErrorMessage", &f.PQresultErrorMessage, &missing) &&
      ResolveLibPqSymbol(library, "PQresultErrorField", &f.PQresultErrorField, &missing) &&
      ResolveLibPqSymbol(library, "PQntuples", &f.PQntuples, &missing) &&
      ResolveLibPqSymbol(library, "PQgetvalue", &f.PQgetvalue, &missing) &&
      ResolveLibPqSymbol(library, "PQgetlength", &f.PQgetlength, &missing) &&
      ResolveLibPqSymbol(library, "PQgetisnull", &f.PQgetisnull, &missing) &&
      ResolveLibPqSymbol(library, "PQcmdTuples", &f.PQcmdTuples, &missing) &&
      ResolveLibPqSymbol(library, "PQclear", &f.PQclear, &missing);
  if (!all) {
    // The handle is kept: a library that was loaded stays loaded, as the table never is.
    loaded.status = LibPqNotLoadable("it has no function " + missing);
  }
  return loaded;
}

const LoadedLibPq& LoadedLibPqTable() {
  static const LoadedLibPq loaded = LoadLibPqOnce();  // once per process, thread-safe (C++11)
  return loaded;
}

}  // namespace

Result<const LibPq*> LoadLibPq() {
  const LoadedLibPq& loaded = LoadedLibPqTable();
  if (!loaded.status.ok()) return loaded.status;
  return &loaded.functions;
}

const LibPq& Pq() {
  const LoadedLibPq& loaded = LoadedLibPqTable();
  if (!loaded.status.ok()) std::abort();  // a caller that skipped LoadLibPq: a bug
  return loaded.functions;
}

}  // namespace trtllm_run::history
