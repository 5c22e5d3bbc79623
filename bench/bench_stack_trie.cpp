// The writer's stack trie (tracer/src/stack_trie.hpp, on IdIndex) against the
// design it replaced (std::unordered_map edges keyed by (parent, ip), kept
// here as the reference), on the distinct_stacks workload's shape: binary
// call-site choices below a fixed outer chain, random paths, most of them
// new. Reports ns per stack and the tables' bytes per node.
// BM_StackTrieWorkload is distinct_stacks' own mix (bench/workloads/): 2^L
// paths, 2 * 2^L stacks interned in random order, so ~43 % of them are new
// and the rest repeat a stack seen long before (no shortcut through the
// last one); L = 17 and 20 are the suite's distinct-stacks-1e5 and -1e6.
//
//   build/bin/bench_stack_trie [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <random>
#include <unordered_map>
#include <vector>

#include "stack_trie.hpp"

namespace {

using memtrail::StackNode;
using memtrail::runtime::StackTrie;

std::vector<std::vector<std::uint64_t>> binary_stacks(int levels, std::size_t count) {
  std::mt19937 rng(11);
  std::vector<std::vector<std::uint64_t>> out(count);
  for (auto& s : out) {
    std::uint32_t path = rng() & ((1u << levels) - 1);
    s.push_back(0x401000);
    for (int l = 0; l < levels; ++l) s.push_back(0x402000 + 0x40 * l + ((path >> l) & 1) * 8);
    for (int p = 0; p < 27 - levels - 2 + 5; ++p) s.push_back(0x409000 + 0x10 * p);
  }
  return out;
}

// The previous StackTrie, minus its leaf cache.
class UnorderedMapTrie {
 public:
  std::uint32_t intern(const std::uint64_t* ips, std::size_t n) {
    std::uint32_t parent = 0;
    for (std::size_t i = n; i-- > 0;) {
      auto [it, inserted] = edges_.try_emplace({parent, ips[i]}, 0);
      if (inserted) it->second = ++count_;
      parent = it->second;
    }
    return parent;
  }

 private:
  struct EdgeHash {
    std::size_t operator()(const std::pair<std::uint32_t, std::uint64_t>& k) const {
      return std::hash<std::uint64_t>()(k.second * 0x9e3779b97f4a7c15ull + k.first);
    }
  };
  std::unordered_map<std::pair<std::uint32_t, std::uint64_t>, std::uint32_t, EdgeHash> edges_;
  std::uint32_t count_ = 0;
};

void BM_StackTrie(benchmark::State& state) {
  auto stacks = binary_stacks(static_cast<int>(state.range(0)), 1u << state.range(0));
  StackTrie::NewNode ignore = [](const StackNode&) {};
  std::size_t nodes = 0, bytes = 0;
  for (auto _ : state) {
    StackTrie trie;
    for (const auto& s : stacks) benchmark::DoNotOptimize(trie.intern(s.data(), s.size(), ignore));
    nodes = trie.size();
    bytes = trie.memory_bytes();
  }
  state.SetItemsProcessed(state.iterations() * stacks.size());
  state.counters["bytes_per_node"] = static_cast<double>(bytes) / static_cast<double>(nodes);
}
BENCHMARK(BM_StackTrie)->Arg(14)->Arg(18)->Unit(benchmark::kMillisecond);

void BM_StackTrieWorkload(benchmark::State& state) {
  const int levels = static_cast<int>(state.range(0));
  auto stacks = binary_stacks(levels, std::size_t{2} << levels);
  StackTrie::NewNode ignore = [](const StackNode&) {};
  std::size_t nodes = 0, bytes = 0;
  for (auto _ : state) {
    StackTrie trie;
    for (const auto& s : stacks) benchmark::DoNotOptimize(trie.intern(s.data(), s.size(), ignore));
    nodes = trie.size();
    bytes = trie.memory_bytes();
  }
  state.SetItemsProcessed(state.iterations() * stacks.size());
  state.counters["ns_per_stack"] = benchmark::Counter(
      static_cast<double>(stacks.size()) * 1e-9,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["bytes_per_node"] = static_cast<double>(bytes) / static_cast<double>(nodes);
  state.counters["MB"] = static_cast<double>(bytes) / 1e6;
}
BENCHMARK(BM_StackTrieWorkload)->Arg(17)->Arg(20)->Unit(benchmark::kMillisecond);

void BM_UnorderedMapTrie(benchmark::State& state) {
  auto stacks = binary_stacks(static_cast<int>(state.range(0)), 1u << state.range(0));
  for (auto _ : state) {
    UnorderedMapTrie trie;
    for (const auto& s : stacks) benchmark::DoNotOptimize(trie.intern(s.data(), s.size()));
  }
  state.SetItemsProcessed(state.iterations() * stacks.size());
}
BENCHMARK(BM_UnorderedMapTrie)->Arg(14)->Arg(18)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
