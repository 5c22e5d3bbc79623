// subscribe_failure_message: see injection.hpp.
#include <string>

#include "injection.hpp"

namespace memtrail::cupti {

std::string subscribe_failure_message(CUptiResult result) {
  if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    return "memtrail: CUDA memory is not traced: CUPTI is already in use by another tool "
           "(Nsight Systems, Nsight Compute, compute-sanitizer, cuda-gdb or a profiler in the "
           "program); the program runs on untraced";
  const char* name = nullptr;
  if (cuptiGetResultString(result, &name) != CUPTI_SUCCESS || name == nullptr) name = "unknown";
  return "memtrail: CUDA memory is not traced: cuptiSubscribe failed (" + std::to_string(result) +
         " " + name + "); the program runs on untraced";
}

}  // namespace memtrail::cupti
