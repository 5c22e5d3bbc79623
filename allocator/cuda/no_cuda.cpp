// cuda_device_count() for builds without CUDA support.
#include "memtrail/alloc/cuda_resources.hpp"

namespace memtrail::alloc {

int cuda_device_count(std::string* error) {
  if (error) *error = "memtrail was built without CUDA support";
  return 0;
}

}  // namespace memtrail::alloc
