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
bool Resolve(void* library, const char* name, Function* slot, std::string* missing) {
  void* address = dlsym(library, name);
  if (address == nullptr) {
    *missing = name;
    return false;
  }
  *slot = reinterpret_cast<Function>(address);
  return true;
}

Status NotLoadable(const std::string& why) {
  return Status::NotFound(std::string("a PostgreSQL history store needs ") + kLibPqSoname +
                              " (PostgreSQL's client library), which cannot be loaded: " + why,
                          std::string("install the Debian package ") + kLibPqDebianPackage +
                              " (apt-get install " + kLibPqDebianPackage +
                              "), or give --history a SQLite file");
}

LoadedLibPq Load() {
  LoadedLibPq loaded;
  // RTLD_NOW: a missing symbol of libpq's own dependencies fails here, not mid-query.
  // RTLD_LOCAL: its symbols stay out of the global namespace (no plugin binds to them).
  void* library = dlopen(kLibPqSoname, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    loaded.status = NotLoadable(why != nullptr ? why : "dlopen failed");
    return loaded;
  }
  LibPq& f = loaded.functions;
  std::string missing;
  const bool all = Resolve(library, "PQconninfoParse", &f.PQconninfoParse, &missing) &&
                   Resolve(library, "PQconninfoFree", &f.PQconninfoFree, &missing) &&
                   Resolve(library, "PQfreemem", &f.PQfreemem, &missing) &&
                   Resolve(library, "PQconnectdbParams", &f.PQconnectdbParams, &missing) &&
                   Resolve(library, "PQsetNoticeProcessor", &f.PQsetNoticeProcessor, &missing) &&
                   Resolve(library, "PQstatus", &f.PQstatus, &missing) &&
                   Resolve(library, "PQerrorMessage", &f.PQerrorMessage, &missing) &&
                   Resolve(library, "PQreset", &f.PQreset, &missing) &&
                   Resolve(library, "PQfinish", &f.PQfinish, &missing) &&
                   Resolve(library, "PQexec", &f.PQexec, &missing) &&
                   Resolve(library, "PQexecParams", &f.PQexecParams, &missing) &&
                   Resolve(library, "PQresultStatus", &f.PQresultStatus, &missing) &&
                   Resolve(library, "PQresultErrorMessage", &f.PQresultErrorMessage, &missing) &&
                   Resolve(library, "PQresultErrorField", &f.PQresultErrorField, &missing) &&
                   Resolve(library, "PQntuples", &f.PQntuples, &missing) &&
                   Resolve(library, "PQgetvalue", &f.PQgetvalue, &missing) &&
                   Resolve(library, "PQgetlength", &f.PQgetlength, &missing) &&
                   Resolve(library, "PQgetisnull", &f.PQgetisnull, &missing) &&
                   Resolve(library, "PQcmdTuples", &f.PQcmdTuples, &missing) &&
                   Resolve(library, "PQclear", &f.PQclear, &missing);
  if (!all) {
    // The handle is kept: a library that was loaded stays loaded, as the table never is.
    loaded.status = NotLoadable("it has no function " + missing);
  }
  return loaded;
}

const LoadedLibPq& Loaded() {
  static const LoadedLibPq loaded = Load();  // once per process, thread-safe (C++11)
  return loaded;
}

}  // namespace

Result<const LibPq*> LoadLibPq() {
  const LoadedLibPq& loaded = Loaded();
  if (!loaded.status.ok()) return loaded.status;
  return &loaded.functions;
}

const LibPq& Pq() {
  const LoadedLibPq& loaded = Loaded();
  if (!loaded.status.ok()) std::abort();  // a caller that skipped LoadLibPq: a bug
  return loaded.functions;
}

}  // namespace trtllm_run::history
