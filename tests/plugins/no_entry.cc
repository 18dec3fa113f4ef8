// A shared library that is not a trtllm-run plugin: it exports a function, but not
// trtllm_run_plugin_descriptor.
extern "C" __attribute__((visibility("default"))) int not_a_trtllm_run_entry_point() { return 42; }
