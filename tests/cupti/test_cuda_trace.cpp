// A trace written by the real recorder from the CUDA handler (hand-filled
// CUPTI structs, as in test_cuda_tracker.cpp), read back by the CLI: device
// pools are reported, checked, diffed and exported like any pool.
#include <gtest/gtest.h>

#include "cuda_test_util.hpp"
#include "memtrail/recorder.hpp"
#include "recorder_sink.hpp"
#include "temp_dir.hpp"

namespace memtrail::cupti::test {
namespace {

using memtrail::test::run_command;
using memtrail::test::shell_quote;
using memtrail::test::TempDir;

// Device: 4096 B leaked at context destroy, 1000 B freed; managed: 2048 B
// freed; pinned: 512 B live at exit (a leak); a stream-ordered block freed,
// its pool reserving 2 MiB until the context goes.
void write_cuda_trace(const std::string& path) {
  RecorderOptions options;
  options.output = path;
  options.sample_interval_ms = 0;
  ASSERT_TRUE(start(options));
  RecorderSink sink;
  TableQueries queries;
  queries.devices[fake_context(1)] = 0;
  CudaTracker tracker(sink, queries);
  tracker.set_memory_info_interval_ns(0);  // sample at every call
  CUdeviceptr leaked = 0x7f0000000000, freed = 0x7f0000100000, managed = 0x7f1000000000;
  void* pinned = reinterpret_cast<void*>(0x200000000);
  cuMemAlloc_v2_params a{&leaked, 4096}, b{&freed, 1000};
  cuMemAllocManaged_params m{&managed, 2048, CU_MEM_ATTACH_GLOBAL};
  cuMemAllocHost_v2_params h{&pinned, 512};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, a, fake_context(1));
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, b, fake_context(1));
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged, m, fake_context(1));
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2, h, fake_context(1));
  CUdeviceptr async = 0x7f2000000000;
  cuMemAllocAsync_params s{&async, 3000, nullptr};
  queries.reserved[{0, nullptr}] = 2 << 20;
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, s, fake_context(1));
  cuMemFreeAsync_params fs{async, nullptr};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync, fs, fake_context(1));
  cuMemFree_v2_params fb{freed}, fm{managed};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, fb, fake_context(1));
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, fm, fake_context(1));
  tracker.on_context_destroy(fake_context(1));
  tracker.on_exit();
  stop();
}

class CudaTrace : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("cuda-trace");
    write_cuda_trace(trace());
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string trace() { return dir_->file("cuda.mtr"); }
  static std::string cli(const std::string& args) { return std::string(MEMTRAIL_CLI) + " " + args; }
  static TempDir* dir_;
};
TempDir* CudaTrace::dir_ = nullptr;

TEST_F(CudaTrace, CheckLimitsLeaksPerDevicePool) {
  auto fits = run_command(
      cli("check " + shell_quote(trace()) + " --pool 'cuda:0 device' --max-leaked 4096"));
  EXPECT_EQ(fits.exit_code, 0) << fits.out << fits.err;
  auto over = run_command(
      cli("check " + shell_quote(trace()) + " --pool 'cuda:0 device' --max-leaked 4095"));
  EXPECT_EQ(over.exit_code, 1) << over.out << over.err;
  // The managed block was freed: no leak in that pool.
  auto managed =
      run_command(cli("check " + shell_quote(trace()) + " --pool 'cuda managed' --max-leaked 0"));
  EXPECT_EQ(managed.exit_code, 0) << managed.out << managed.err;
  auto pinned =
      run_command(cli("check " + shell_quote(trace()) + " --pool 'cuda pinned' --max-leaked 511"));
  EXPECT_EQ(pinned.exit_code, 1) << pinned.out << pinned.err;
}

TEST_F(CudaTrace, ReportShowsDevicePoolsAndTheirLeaks) {
  auto r = run_command(cli("report --json " + shell_quote(trace())));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"cuda:0 device\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"cuda managed\""), std::string::npos);
  EXPECT_NE(r.out.find("\"cuda pinned\""), std::string::npos);
  // 4096 device + 512 pinned bytes leaked, in two blocks.
  EXPECT_NE(r.out.find("\"leaked_bytes\": 4608"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"leaked_blocks\": 2"), std::string::npos) << r.out;
}

// One pool's object in `report --json` (its keys are sorted: "allocations"
// first, nothing nested after "name").
std::string pool_json(const std::string& out, const std::string& name) {
  std::size_t at = out.find("\"name\": \"" + name + "\"");
  if (at == std::string::npos) return "";
  std::size_t begin = out.rfind("\"allocations\":", at);
  return out.substr(begin, out.find('}', at) - begin);
}

TEST_F(CudaTrace, StreamOrderedReserveIsThePoolsReservedCurve) {
  auto r = run_command(cli("report --json " + shell_quote(trace())));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string pool = pool_json(r.out, "cuda:0 stream-ordered");
  ASSERT_FALSE(pool.empty()) << r.out;
  EXPECT_NE(pool.find("\"peak_reserved_bytes\": 2097152"), std::string::npos) << pool;
  EXPECT_NE(pool.find("\"final_reserved_bytes\": 0"), std::string::npos) << pool;
  EXPECT_NE(pool.find("\"segment_reserves\": 1"), std::string::npos) << pool;
  EXPECT_NE(pool.find("\"leaked_blocks\": 0"), std::string::npos) << pool;
  auto text = run_command(cli("report " + shell_quote(trace())));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("cuda:0 stream-ordered"), std::string::npos) << text.out;
  // The block itself is the device pool's: 3000 B allocated and freed.
  std::string device = pool_json(r.out, "cuda:0 device");
  EXPECT_NE(device.find("\"allocations\": 3"), std::string::npos) << device;
}

TEST_F(CudaTrace, DiffAndExportCoverDevicePools) {
  auto diff = run_command(cli("diff " + shell_quote(trace()) + " " + shell_quote(trace())));
  EXPECT_EQ(diff.exit_code, 0) << diff.out << diff.err;
  std::string out = dir_->file("events.json");
  auto ex = run_command(
      cli("export --format chrome -o " + shell_quote(out) + " " + shell_quote(trace())));
  ASSERT_EQ(ex.exit_code, 0) << ex.out << ex.err;
  std::string text = memtrail::test::slurp(out);
  EXPECT_NE(text.find("cuda:0 device"), std::string::npos) << text.substr(0, 2000);
}

}  // namespace
}  // namespace memtrail::cupti::test
