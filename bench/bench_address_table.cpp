// The project's address table (memtrail/detail/address_table.hpp: dense
// entries and an 8-byte tag index) against the design it replaced (40-byte
// slots inline, half full: live_heap.hpp, the writer's LiveBlocks, both
// flat_map.hpp, addr_map.hpp; kept here as the reference) and
// std::unordered_map, with the live heap's 32-byte values, at 10^4..10^7
// keys. Each run reports ns per operation and the table's bytes per key;
// AddressSet (address_set.hpp) gets its insert/take pair and a miss; the
// pools' AddrMap its front slot against the bare table (a temporary pair).
// Model: heaptrack's bench_pointermap.
//
//   build/bin/bench_address_table [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <unordered_map>
#include <vector>

#include "addr_map.hpp"
#include "memtrail/detail/address_set.hpp"
#include "memtrail/detail/address_table.hpp"

namespace {

using memtrail::detail::AddressSet;
using memtrail::detail::AddressTable;

struct Value {  // as the writer's LiveEntry
  std::uint64_t size, time_ns;
  std::uint32_t stack, thread, chunk, ordinal;
};

// The replaced design: key and value inline, linear probing, backward
// shift, at most half full, doubled into a new array.
class InlineTable {
 public:
  InlineTable() { resize(1024); }
  Value* find(std::uint64_t k) {
    for (std::size_t i = home(k);; i = (i + 1) & mask_) {
      if (slots_[i].key == k) return &slots_[i].value;
      if (slots_[i].key == 0) return nullptr;
    }
  }
  Value* insert(std::uint64_t k) {
    if ((count_ + 1) * 2 > slots_.size()) resize(slots_.size() * 2);
    std::size_t i = home(k);
    while (slots_[i].key != 0 && slots_[i].key != k) i = (i + 1) & mask_;
    if (slots_[i].key == 0) ++count_;
    slots_[i].key = k;
    return &slots_[i].value;
  }
  bool erase(std::uint64_t k) {
    std::size_t hole = home(k);
    for (;; hole = (hole + 1) & mask_) {
      if (slots_[hole].key == 0) return false;
      if (slots_[hole].key == k) break;
    }
    for (std::size_t j = (hole + 1) & mask_; slots_[j].key != 0; j = (j + 1) & mask_) {
      std::size_t h = home(slots_[j].key);
      bool stays = hole <= j ? (h > hole && h <= j) : (h > hole || h <= j);
      if (!stays) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].key = 0;
    --count_;
    return true;
  }
  std::size_t bytes() const { return slots_.size() * sizeof(Slot); }

 private:
  struct Slot {
    std::uint64_t key = 0;
    Value value{};
  };
  std::size_t home(std::uint64_t k) const { return (k * 0x9e3779b97f4a7c15ull) >> shift_; }
  void resize(std::size_t n) {
    std::vector<Slot> old(n);
    old.swap(slots_);
    mask_ = n - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(n));
    count_ = 0;
    for (const Slot& s : old)
      if (s.key != 0) *insert(s.key) = s.value;
  }
  std::vector<Slot> slots_;
  std::size_t mask_ = 0, count_ = 0;
  unsigned shift_ = 0;
};

struct Dense {
  AddressTable<Value> t;
  Value* find(std::uint64_t k) { return t.find(k); }
  Value* insert(std::uint64_t k) { return t.try_emplace(k).first; }
  bool erase(std::uint64_t k) { return t.erase(k); }
  std::size_t bytes() const { return t.mapped_bytes(); }
};
struct Inline {
  InlineTable t;
  Value* find(std::uint64_t k) { return t.find(k); }
  Value* insert(std::uint64_t k) { return t.insert(k); }
  bool erase(std::uint64_t k) { return t.erase(k); }
  std::size_t bytes() const { return t.bytes(); }
};
struct Std {
  std::unordered_map<std::uint64_t, Value> t;
  Value* find(std::uint64_t k) {
    auto it = t.find(k);
    return it == t.end() ? nullptr : &it->second;
  }
  Value* insert(std::uint64_t k) { return &t[k]; }
  bool erase(std::uint64_t k) { return t.erase(k) != 0; }
  std::size_t bytes() const { return t.size() * 64 + t.bucket_count() * 8; }  // node ~64 B
};

// Heap-like addresses: 16-byte aligned, clustered, shuffled.
std::vector<std::uint64_t> addresses(std::size_t n) {
  std::vector<std::uint64_t> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = 0x5555'0000'0000ull + 48 * i;
  std::shuffle(out.begin(), out.end(), std::mt19937_64(5));
  return out;
}

template <class T>
void BM_Insert(benchmark::State& state) {
  auto keys = addresses(static_cast<std::size_t>(state.range(0)));
  std::size_t bytes = 0;
  for (auto _ : state) {
    T t;
    for (auto k : keys) t.insert(k)->size = k;
    bytes = t.bytes();
    benchmark::DoNotOptimize(t);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(keys.size()));
  state.counters["bytes/key"] = static_cast<double>(bytes) / static_cast<double>(keys.size());
}

template <class T>
void BM_Find(benchmark::State& state) {
  auto keys = addresses(static_cast<std::size_t>(state.range(0)));
  T t;
  for (auto k : keys) t.insert(k)->size = k;
  std::shuffle(keys.begin(), keys.end(), std::mt19937_64(6));
  std::uint64_t sum = 0;
  for (auto _ : state)
    for (auto k : keys) sum += t.find(k)->size;
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(keys.size()));
}

// The writer's steady state: n blocks live, each step frees a random live
// one and allocates a new address.
template <class T>
void BM_Churn(benchmark::State& state) {
  auto n = static_cast<std::size_t>(state.range(0));
  auto keys = addresses(2 * n);
  T t;
  for (std::size_t i = 0; i < n; ++i) t.insert(keys[i]);
  std::mt19937_64 rng(7);
  std::size_t next = n;
  for (auto _ : state) {
    for (int step = 0; step < 1024; ++step) {
      std::size_t victim = rng() % n;
      t.erase(keys[victim]);
      std::swap(keys[victim], keys[next]);
      t.insert(keys[victim]);
      if (++next == keys.size()) next = n;
    }
  }
  state.SetItemsProcessed(state.iterations() * 1024 * 2);
  state.counters["bytes/key"] = static_cast<double>(t.bytes()) / static_cast<double>(n);
}

void sizes(benchmark::internal::Benchmark* b) {
  for (long n : {10'000L, 100'000L, 1'000'000L, 10'000'000L}) b->Arg(n);
  b->Unit(benchmark::kMillisecond);
}
void churn_sizes(benchmark::internal::Benchmark* b) {
  for (long n : {10'000L, 100'000L, 1'000'000L, 10'000'000L}) b->Arg(n);
  b->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_Insert<Dense>)->Apply(sizes);
BENCHMARK(BM_Insert<Inline>)->Apply(sizes);
BENCHMARK(BM_Insert<Std>)->Apply(sizes);
BENCHMARK(BM_Find<Dense>)->Apply(sizes);
BENCHMARK(BM_Find<Inline>)->Apply(sizes);
BENCHMARK(BM_Find<Std>)->Apply(sizes);
BENCHMARK(BM_Churn<Dense>)->Apply(churn_sizes);
BENCHMARK(BM_Churn<Inline>)->Apply(churn_sizes);
BENCHMARK(BM_Churn<Std>)->Apply(churn_sizes);

// The pools' AddrMap (allocator/src/addr_map.hpp) keeps the entry inserted
// last in a front slot before the table: its measured reason. A temporary
// (a block freed before the next allocation) with 10^4 blocks live, AddrMap
// against the bare AddressTable it fronts: ns per insert + find + erase.
template <class Map>
void BM_TemporaryPair(benchmark::State& state) {
  auto keys = addresses(10'000);
  Map map;
  for (auto k : keys) map.insert(k, Value{});
  std::uint64_t p = 0x7000'0000'0000ull;
  for (auto _ : state) {
    map.insert(p, Value{});
    Value* v = map.find(p);
    benchmark::DoNotOptimize(v);
    map.erase(v);
    p += 48;
  }
}
struct BareTable {
  AddressTable<Value> t;
  void insert(std::uint64_t k, Value v) { *t.try_emplace(k).first = v; }
  Value* find(std::uint64_t k) { return t.find(k); }
  void erase(Value* v) { t.erase_value(v); }
};
BENCHMARK(BM_TemporaryPair<memtrail::alloc::detail::AddrMap<Value>>)
    ->Name("BM_TemporaryPair/AddrMap");
BENCHMARK(BM_TemporaryPair<BareTable>)->Name("BM_TemporaryPair/AddressTable");

// AddressSet: an insert and its take (a late free settled), and a miss
// (every free of the program while the set is not empty).
void BM_SetInsertTake(benchmark::State& state) {
  static AddressSet<1 << 12> set;
  for (std::uintptr_t p = 16; p < 16 * 1000; p += 16) set.insert(p * 977);
  std::uintptr_t p = 0x7000'0000;
  for (auto _ : state) {
    set.insert(p);
    benchmark::DoNotOptimize(set.take(p));
    p += 16;
  }
}
void BM_SetMiss(benchmark::State& state) {
  static AddressSet<1 << 12> set;
  for (std::uintptr_t p = 16; p < 16 * 1000; p += 16) set.insert(p * 977);
  std::uintptr_t p = 0x7000'0000;
  for (auto _ : state) {
    benchmark::DoNotOptimize(set.contains(p));
    p += 16;
  }
}
BENCHMARK(BM_SetInsertTake);
BENCHMARK(BM_SetMiss);

}  // namespace

BENCHMARK_MAIN();
