// Symbol visibility for libtrtllm_run_core. Plugins are built with hidden visibility;
// the interfaces they implement are exported so hosts and plugins share one type identity.
#ifndef TRTLLM_RUN_EXPORT_H_
#define TRTLLM_RUN_EXPORT_H_

#define TRTLLM_RUN_API __attribute__((visibility("default")))

#endif  // TRTLLM_RUN_EXPORT_H_
