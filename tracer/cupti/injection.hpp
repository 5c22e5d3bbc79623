// The CUDA injection entry point's pieces that tests call directly.
#pragma once

#include <cupti.h>

#include <string>

namespace memtrail::cupti {

// The one warning line (no newline) printed when cuptiSubscribe fails: CUPTI
// taken by another tool (nsys, ncu, compute-sanitizer, cuda-gdb, a profiler
// inside the program) or any other error.
std::string subscribe_failure_message(CUptiResult result);

// The runtime API callback ids whose names label an allocation (OOM events).
extern const CUpti_CallbackId kRuntimeMemoryCallbacks[];
extern const int kRuntimeMemoryCallbackCount;

}  // namespace memtrail::cupti

// Called by the CUDA driver (CUDA_INJECTION64_PATH) during cuInit. Always
// returns 1: a failure to trace must not fail the program's CUDA calls.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void);
