// `memtrail run --cuda`: points the CUDA driver at libmemtrail_cupti.so
// (CUDA_INJECTION64_PATH), which records device, pinned and managed memory
// into each traced process's trace.
#pragma once

#include <string>

namespace memtrail::cli {

// Sets CUDA_INJECTION64_PATH to `library` for the program and its children.
// Returns false with `*error` set when the library is missing (exit 2). On a
// machine without a CUDA driver, prints one warning line: the program runs
// on, its device memory untraced.
bool prepare_cuda_injection(const std::string& library, std::string* error);

}  // namespace memtrail::cli
