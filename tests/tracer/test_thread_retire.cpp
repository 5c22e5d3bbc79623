// A thread the writer retired (exited, its last event written) leaves the
// registry: each drain pass walks the registry several times, and with
// every thread the program ever had in it, a program that started 10,000
// threads made each pass walk all 10,000 (~15 % of the tracer's time under
// tests/guest/many_threads churn).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <thread>

#include "memtrail/detail/recording.hpp"
#include "memtrail/detail/thread_registry.hpp"
#include "memtrail/recorder.hpp"
#include "trace_collector.hpp"

namespace memtrail {
namespace {

struct ThreadRetire : ::testing::Test {
  std::string path = test::temp_path("retire.mtr");
  void TearDown() override {
    stop();
    std::remove(path.c_str());
  }
};

TEST_F(ThreadRetire, RetiredThreadsLeaveTheRegistry) {
  RecorderOptions o;
  o.output = path;
  o.stacks = false;
  o.sample_interval_ms = 0;
  ASSERT_TRUE(start(o));
  std::uint32_t heap = heap_pool();
  record_alloc(heap, reinterpret_cast<void*>(0x100), 8, 8, AllocFn::malloc);
  constexpr int kThreads = 100;
  for (int i = 0; i < kThreads; ++i)
    std::thread([heap, i] {
      record_alloc(heap, reinterpret_cast<void*>(0x1000 + 0x100 * i), 1, 1);
    }).join();
  detail::flush_all_threads();  // drains every ended thread's last event: retires it
  detail::flush_all_threads();
  auto threads = detail::thread_registry();
  // This thread, and the last one started: the head of the list, which
  // stays (program threads push before it).
  EXPECT_EQ(threads.size(), 2u);
  int alive = 0;
  for (auto& t : threads) alive += !t.exited;
  EXPECT_EQ(alive, 1);
  stop();
  test::Collected c;
  ASSERT_TRUE(test::read_trace(path, c).ok);
  EXPECT_EQ(c.threads.size(), kThreads + 1u);
  EXPECT_EQ(c.events.size(), kThreads + 1u);
}

}  // namespace
}  // namespace memtrail
