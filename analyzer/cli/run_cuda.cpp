// prepare_cuda_injection: see run_cuda.hpp.
#include "run_cuda.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace memtrail::cli {
namespace {

// The driver, not the toolkit, loads the injection library: without
// libcuda.so.1 nothing would ever say why the trace has no device memory.
bool driver_present() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) return false;
  dlclose(driver);
  return true;
}

}  // namespace

bool prepare_cuda_injection(const std::string& library, std::string* error) {
  if (access(library.c_str(), R_OK) != 0) {
    *error = "--cuda: the CUDA injection library " + library +
             " is missing (memtrail was built without CUDA support?)";
    return false;
  }
  setenv("CUDA_INJECTION64_PATH", library.c_str(), 1);
  if (!driver_present())
    std::fprintf(stderr,
                 "memtrail run: --cuda: no CUDA driver here (libcuda.so.1 cannot be loaded): "
                 "device memory is not traced\n");
  return true;
}

}  // namespace memtrail::cli
