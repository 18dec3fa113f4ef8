// The cluster catalog, clusters.yaml (catalog.h): ParseClusterCatalog, and lookups on
// what it accepted.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "trtllm_run/catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(trtllm_run_fuzz::AsText(data, size));
  trtllm_run::Result<trtllm_run::ClusterCatalog> catalog =
      trtllm_run::ParseClusterCatalog(text, "fuzz_clusters.yaml");
  if (!catalog.ok()) {
    FUZZ_CHECK(catalog.status().message().find("fuzz_clusters.yaml") != std::string::npos);
    return 0;
  }
  for (const std::string& name : catalog.value().Names()) {
    FUZZ_CHECK(catalog.value().FindByName(name) != nullptr);
  }
  (void)catalog.value().Describe();
  (void)catalog.value().FindByDevice("H100", 8);
  return 0;
}
