// Tensor events in a recorded trace: data buffers as alloc/free of a
// PoolKind::tidy pool whose upstream is the chosen resource, tidy scopes,
// keep marks, donation accepted (donate, no alloc) and rejected
// (donate_rejected with JAX's warning text, input still valid).
#include <gtest/gtest.h>

#include <map>

#include "memtrail/alloc/host_resources.hpp"
#include "memtrail/recorder.hpp"
#include "memtrail/tensor/memory.hpp"
#include "memtrail/tensor/ops.hpp"
#include "memtrail/tensor/tidy.hpp"
#include "memtrail/trace_file.hpp"
#include "temp_dir.hpp"

namespace {

using namespace memtrail::tensor;
using K = memtrail::EventKind;

struct Collect final : memtrail::TraceVisitor {
  std::map<std::uint32_t, memtrail::PoolInfo> pools;
  std::map<std::uint32_t, memtrail::ScopeInfo> scopes;
  std::map<std::uint32_t, std::string> strings;
  std::vector<memtrail::Event> events;
  void on_pool(const memtrail::PoolInfo& p) override { pools[p.id] = p; }
  void on_scope(const memtrail::ScopeInfo& s) override { scopes[s.id] = s; }
  void on_string(std::uint32_t id, std::string_view s) override { strings[id] = std::string(s); }
  void on_event(const memtrail::Event& e) override { events.push_back(e); }
  std::vector<memtrail::Event> of(std::uint32_t pool, K kind) const {
    std::vector<memtrail::Event> out;
    for (const auto& e : events)
      if (e.kind == kind && (pool == 0 || e.pool == pool)) out.push_back(e);
    return out;
  }
};

std::vector<std::string> g_warnings;
void capture(const std::string& w) {
  g_warnings.push_back(w);
}

class TensorTrace : public ::testing::Test {
 protected:
  void SetUp() override {
    memtrail::RecorderOptions o;
    o.output = dir.file("t.mtr");
    o.stacks = false;
    o.sample_interval_ms = 0;
    ASSERT_TRUE(memtrail::start(o));
    g_warnings.clear();
    previous = set_warning_handler(capture);
  }
  Collect read() {
    memtrail::stop();
    set_warning_handler(previous);
    Collect c;
    memtrail::TraceReader reader(dir.file("t.mtr"));
    auto r = reader.read(c);
    EXPECT_TRUE(r.ok) << r.error;
    return c;
  }
  memtrail::test::TempDir dir{"tensor"};
  WarningHandler previous = nullptr;
};

TEST_F(TensorTrace, BuffersScopesAndKeepAreEvents) {
  memtrail::alloc::SystemHeapResource host;
  TensorPool pool(&host, "acts");
  UsePool use(pool);
  Tensor kept;
  Tensor result = tidy("step", [&] {
    Tensor a = Tensor::zeros({4});    // 16 B, disposed at the end
    kept = keep(Tensor::zeros({2}));  // 8 B, kept
    Tensor v = a.reshape({2, 2});     // a view: no buffer
    return add(a, a);                 // 16 B, returned
  });
  result.dispose();
  kept.dispose();
  Collect c = read();
  const std::uint32_t p = pool.pool_id();
  ASSERT_TRUE(c.pools.count(p));
  EXPECT_EQ(c.pools[p].kind, memtrail::PoolKind::tidy);
  EXPECT_EQ(c.pools[p].parent, host.pool_id());
  auto allocs = c.of(p, K::alloc), frees = c.of(p, K::free);
  ASSERT_EQ(allocs.size(), 3u);
  EXPECT_EQ(allocs[0].size, 16u);
  EXPECT_EQ(allocs[1].size, 8u);
  EXPECT_EQ(allocs[2].size, 16u);
  ASSERT_EQ(frees.size(), 3u);
  // The host upstream saw the same three buffers (one level down).
  EXPECT_EQ(c.of(host.pool_id(), K::alloc).size(), 3u);
  auto begins = c.of(p, K::scope_begin), ends = c.of(p, K::scope_end);
  ASSERT_EQ(begins.size(), 1u);
  ASSERT_EQ(ends.size(), 1u);
  const auto& scope = c.scopes[static_cast<std::uint32_t>(begins[0].aux)];
  EXPECT_EQ(scope.name, "step");
  EXPECT_EQ(scope.kind, memtrail::ScopeKind::tidy);
  EXPECT_EQ(scope.pool, p);
  // Order: the scope's free of `a` comes before its scope_end.
  std::size_t free_a = 0, end_at = 0;
  for (std::size_t i = 0; i < c.events.size(); ++i) {
    if (c.events[i].kind == K::free && c.events[i].pool == p && !free_a) free_a = i;
    if (c.events[i].kind == K::scope_end) end_at = i;
  }
  EXPECT_LT(free_a, end_at);
  EXPECT_EQ(frees[0].address, allocs[0].address);
  auto marks = c.of(0, K::mark);
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(c.strings[static_cast<std::uint32_t>(marks[0].aux)], "tensor.keep");
}

TEST_F(TensorTrace, AcceptedDonationTakesTheBufferWithoutAnAlloc) {
  TensorPool pool;
  UsePool use(pool);
  const MemoryInfo before = memory();
  Tensor x = Tensor::from({-1, 2, -3}, {1, 3});
  const float* buffer = x.data();
  Tensor y = relu(x, donate(x));
  EXPECT_TRUE(x.is_disposed());
  EXPECT_THROW((void)x.values(), TensorDisposedError);
  EXPECT_EQ(y.data(), buffer);
  EXPECT_EQ(y.values(), (std::vector<float>{0, 2, 0}));
  EXPECT_EQ(memory().num_tensors, before.num_tensors + 1);
  EXPECT_EQ(memory().num_data_buffers, before.num_data_buffers + 1);
  EXPECT_EQ(pool.bytes_in_use(), 12u);
  y.dispose();
  EXPECT_TRUE(g_warnings.empty());
  Collect c = read();
  const std::uint32_t p = pool.pool_id();
  EXPECT_EQ(c.of(p, K::alloc).size(), 1u);
  EXPECT_EQ(c.of(p, K::free).size(), 1u);
  auto donations = c.of(p, K::donate);
  ASSERT_EQ(donations.size(), 1u);
  EXPECT_EQ(donations[0].address, reinterpret_cast<std::uintptr_t>(buffer));
  EXPECT_EQ(donations[0].size, 12u);
  EXPECT_EQ(donations[0].aux, 0u);  // no tidy scope
}

TEST_F(TensorTrace, RejectedDonationWarnsAndKeepsTheInput) {
  TensorPool pool;
  UsePool use(pool);
  Tensor x = Tensor::from({1, 2, 3}, {1, 3});
  Tensor s = sum(x);                                                          // nothing donated
  Tensor y = matmul(x, Tensor::from({1, 1, 1, 1, 1, 1}, {3, 2}), donate(x));  // 8 B != 12 B
  EXPECT_FALSE(x.is_disposed());
  EXPECT_EQ(x.values(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(y.values(), (std::vector<float>{6, 6}));
  Tensor i = Tensor::zeros({1, 3}, DType::int32);
  Tensor z = add(x, x, donate(i));  // same size, other dtype
  EXPECT_FALSE(i.is_disposed());
  ASSERT_EQ(g_warnings.size(), 2u);
  EXPECT_EQ(g_warnings[0], "Some donated buffers were not usable: ShapedArray(float32[1,3]).");
  EXPECT_EQ(g_warnings[1], "Some donated buffers were not usable: ShapedArray(int32[1,3]).");
  for (Tensor t : {x, s, y, i, z}) t.dispose();
  Collect c = read();
  auto rejected = c.of(pool.pool_id(), K::donate_rejected);
  ASSERT_EQ(rejected.size(), 2u);
  EXPECT_EQ(rejected[0].size, 12u);
  EXPECT_EQ(c.strings[static_cast<std::uint32_t>(rejected[0].aux)], g_warnings[0]);
  EXPECT_EQ(c.of(pool.pool_id(), K::donate).size(), 0u);
}

}  // namespace
