#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry point for a program with its own main (libclang_rt.fuzzer provides it).
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
