// libmemtrail_cupti.so's entry point: subscribes to CUPTI's driver API
// callbacks for every allocation family, the runtime API memory calls (for
// the names only: the driver domain does the accounting, cudart calls the
// driver) and context destruction, and feeds them to a CudaTracker that
// records into the recorder the preload tracer started.
#include "injection.hpp"

#include <cstdio>
#include <cstdlib>

#include "cuda_tracker.hpp"
#include "driver_queries.hpp"
#include "memtrail/detail/recording.hpp"
#include "memtrail/detail/runtime_hooks.hpp"
#include "memtrail/detail/session_state.hpp"
#include "memtrail/recorder.hpp"
#include "recorder_sink.hpp"

namespace memtrail::cupti {

const CUpti_CallbackId kRuntimeMemoryCallbacks[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMalloc3D_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020,
};
const int kRuntimeMemoryCallbackCount =
    static_cast<int>(sizeof kRuntimeMemoryCallbacks / sizeof kRuntimeMemoryCallbacks[0]);

namespace {

RecorderSink* g_sink = nullptr;
DriverQueries* g_queries = nullptr;
CudaTracker* g_tracker = nullptr;
// The runtime API the program called, while it runs (cudart calls the
// driver from inside it).
thread_local const char* t_runtime_api = nullptr;

void handle_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  bool exit = cb->callbackSite == CUPTI_API_EXIT;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    t_runtime_api = exit ? nullptr : cb->functionName;
    return;
  }
  ApiCall call;
  call.cbid = cbid;
  call.params = cb->functionParams;
  call.exit = exit;
  if (exit && cb->functionReturnValue)
    call.result = *static_cast<const CUresult*>(cb->functionReturnValue);
  call.context = cb->context;
  call.context_uid = cb->contextUid;
  call.api_name = t_runtime_api ? t_runtime_api : cb->functionName;
  g_tracker->on_driver_call(call);
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* data) {
  if (g_tracker == nullptr || !tracing()) return;
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API || domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    handle_api(domain, cbid, static_cast<const CUpti_CallbackData*>(data));
  } else if (domain == CUPTI_CB_DOMAIN_RESOURCE &&
             cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
    g_tracker->on_context_destroy(static_cast<const CUpti_ResourceData*>(data)->context);
  }
}

std::uint64_t device_free_probe() {
  return g_tracker ? g_tracker->device_free() : 0;
}

void at_exit() {
  if (g_tracker) g_tracker->on_exit();
}

void warn(const std::string& line) {
  std::fprintf(stderr, "%s\n", line.c_str());
}

// The recorder is normally running already (the preload tracer started it);
// a program given CUDA_INJECTION64_PATH alone starts it from MEMTRAIL_OUTPUT.
bool recorder_ready() {
  if (detail::recorder_started()) return true;
  // A child of `memtrail run --no-follow`: the preload left it untraced, and
  // so do we, quietly.
  if (const char* follow = std::getenv("MEMTRAIL_FOLLOW"); follow && std::string(follow) == "0")
    return false;
  const char* output = std::getenv("MEMTRAIL_OUTPUT");
  if (output == nullptr || *output == '\0') {
    warn(
        "memtrail: CUDA memory is not traced: no trace is being recorded (MEMTRAIL_OUTPUT is "
        "unset; use `memtrail run --cuda`)");
    return false;
  }
  return start(RecorderOptions::from_environment());
}

bool subscribe() {
  CUpti_SubscriberHandle subscriber = nullptr;
  CUptiResult r = cuptiSubscribe(&subscriber, on_callback, nullptr);
  if (r != CUPTI_SUCCESS) {
    warn(subscribe_failure_message(r));
    return false;
  }
  for (int i = 0; i < kDriverMemoryCallbackCount; ++i)
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, kDriverMemoryCallbacks[i]);
  for (int i = 0; i < kRuntimeMemoryCallbackCount; ++i)
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, kRuntimeMemoryCallbacks[i]);
  cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                      CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
  return true;
}

}  // namespace
}  // namespace memtrail::cupti

extern "C" int InitializeInjection(void) {
  using namespace memtrail::cupti;
  static bool initialized = false;  // the driver calls it once; a test may call it again
  if (initialized) return 1;
  initialized = true;
  if (!recorder_ready()) return 1;
  {
    // First unwind dlopens libgcc_s; done here, not inside a callback.
    std::uint64_t ips[4];
    memtrail::detail::backtrace_here(ips, 4);
  }
  // Never freed: callbacks may run until the very end of the process.
  g_sink = new RecorderSink;
  g_queries = new DriverQueries;
  auto* tracker = new CudaTracker(*g_sink, *g_queries);
  if (!subscribe()) return 1;
  g_tracker = tracker;
  memtrail::detail::set_device_free_probe(device_free_probe);
  std::atexit(at_exit);
  return 1;
}
