// The injection entry point and `memtrail run --cuda` on this machine, which
// has no CUDA driver: one warning line, the program runs untraced with its
// output and exit code unchanged.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "injection.hpp"
#include "memtrail/recorder.hpp"
#include "run_command.hpp"
#include "temp_dir.hpp"

namespace memtrail::cupti::test {
namespace {

using memtrail::test::run_command;
using memtrail::test::shell_quote;
using memtrail::test::TempDir;

bool driver_present() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!driver) driver = dlopen("libcuda.so.1", RTLD_LAZY);
  return driver != nullptr;
}

std::string self_exe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, n) : std::string();
}

TEST(CuptiSubscribe, FailureMessagesNameTheCause) {
  std::string taken = subscribe_failure_message(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  EXPECT_NE(taken.find("CUPTI is already in use by another tool"), std::string::npos) << taken;
  EXPECT_NE(taken.find("compute-sanitizer"), std::string::npos);
  EXPECT_EQ(taken.find('\n'), std::string::npos);
  std::string other = subscribe_failure_message(CUPTI_ERROR_UNKNOWN);
  EXPECT_NE(other.find("cuptiSubscribe failed (999 CUPTI_ERROR_UNKNOWN)"), std::string::npos)
      << other;
}

// Runs as a child of the next test (a fresh process: InitializeInjection
// runs once per process).
TEST(InjectionChild, InitializeInjection) {
  const char* mode = std::getenv("MEMTRAIL_TEST_INJECTION_CHILD");
  if (mode == nullptr) GTEST_SKIP() << "runs only as the child of InjectionEntryPoint tests";
  if (std::string(mode) == "recording") {
    RecorderOptions options;
    options.output = std::getenv("MEMTRAIL_TEST_TRACE");
    ASSERT_TRUE(start(options));
  }
  void* lib = dlopen(MEMTRAIL_CUPTI_LIB, RTLD_NOW);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto init = reinterpret_cast<int (*)()>(dlsym(lib, "InitializeInjection"));
  ASSERT_NE(init, nullptr) << "InitializeInjection is not exported";
  EXPECT_EQ(init(), 1);
  EXPECT_EQ(init(), 1);  // a second call says nothing more
  stop();
}

struct ChildRun {
  memtrail::test::CommandResult r;
};

ChildRun run_child(const std::string& mode, const std::string& trace) {
  std::string env = "env -u MEMTRAIL_OUTPUT MEMTRAIL_TEST_INJECTION_CHILD=" + mode;
  if (!trace.empty()) env += " MEMTRAIL_TEST_TRACE=" + shell_quote(trace);
  return {run_command(env + " " + shell_quote(self_exe()) +
                      " --gtest_filter=InjectionChild.InitializeInjection --gtest_brief=1")};
}

TEST(InjectionEntryPoint, WithoutARecorderWarnsOnceAndReturns) {
  auto child = run_child("bare", "");
  EXPECT_EQ(child.r.exit_code, 0) << child.r.out << child.r.err;
  EXPECT_EQ(child.r.err_lines(), 1) << child.r.err;
  EXPECT_NE(child.r.err.find("memtrail: CUDA memory is not traced: no trace is being recorded"),
            std::string::npos)
      << child.r.err;
}

TEST(InjectionEntryPoint, WithoutADriverCuptiRefusesAndTheWarningSaysSo) {
  if (driver_present()) GTEST_SKIP() << "a CUDA driver is present: this test is about none";
  TempDir dir("cupti-init");
  auto child = run_child("recording", dir.file("t.mtr"));
  EXPECT_EQ(child.r.exit_code, 0) << child.r.out << child.r.err;
  EXPECT_EQ(child.r.err_lines(), 1) << child.r.err;
  EXPECT_NE(child.r.err.find("memtrail: CUDA memory is not traced: cuptiSubscribe failed"),
            std::string::npos)
      << child.r.err;
}

class RunCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (driver_present())
      GTEST_SKIP() << "a CUDA driver is present: the GPU run is scripts/gpu-check's";
  }
  TempDir dir{"run-cuda"};
};

TEST_F(RunCuda, WithoutADriverWarnsOnceAndKeepsOutputAndExitCode) {
  auto bare = run_command(shell_quote(CUDA_EXIT_CODE_PROGRAM) + " 3");
  ASSERT_EQ(bare.exit_code, 3) << bare.err;
  ASSERT_EQ(bare.out, "cudaMalloc: cudaErrorInsufficientDriver\n");
  auto r = run_command(std::string(MEMTRAIL_CLI) + " run --cuda -q -o " + shell_quote(dir / "run") +
                       " -- " + shell_quote(CUDA_EXIT_CODE_PROGRAM) + " 3");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.out, bare.out);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_EQ(r.err,
            "memtrail run: --cuda: no CUDA driver here (libcuda.so.1 cannot be loaded): device "
            "memory is not traced\n");
}

TEST_F(RunCuda, NoFollowAndChildrenStillRunUnchanged) {
  // The CUDA program runs as a child of a shell: followed, and not.
  for (const char* follow : {"", "--no-follow "}) {
    auto r = run_command(std::string(MEMTRAIL_CLI) + " run --cuda " + follow + "-q -o " +
                         shell_quote(dir / (std::string("run") + (*follow ? "-nf" : ""))) +
                         " -- sh -c " +
                         shell_quote(shell_quote(CUDA_EXIT_CODE_PROGRAM) + " 5; exit $?"));
    EXPECT_EQ(r.exit_code, 5) << follow << r.err;
    EXPECT_EQ(r.out, "cudaMalloc: cudaErrorInsufficientDriver\n") << follow;
    EXPECT_EQ(r.err_lines(), 1) << follow << r.err;
  }
}

TEST(RunCudaOptions, HelpNamesTheOption) {
  auto r = run_command(std::string(MEMTRAIL_CLI) + " run --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--cuda"), std::string::npos);
}

}  // namespace
}  // namespace memtrail::cupti::test
