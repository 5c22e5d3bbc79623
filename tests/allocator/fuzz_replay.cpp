// Fuzz target for replay scripts: any byte string is read as a script and
// replayed under every allocator replay supports (caching, bfc, malloc), on
// an unbounded and on a 64 MiB device. The replay must end (a result, or one
// ReplayError line naming the line), never crash, hang, wrap a size around
// or report a negative stat. Built two ways: with libFuzzer
// (`cmake --build build --target fuzz_replay`, needs clang++) and with
// fuzz_replay_driver.cpp, a deterministic mutation driver that ctest runs
// for a few seconds. See docs/allocators.md.
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "memtrail/alloc/replay.hpp"

namespace {

using memtrail::alloc::ReplayAllocator;

// Stats are counts and byte sums: never negative. (max_split_size is -1
// when unset, as in PyTorch.)
class CheckingSink final : public memtrail::alloc::ReplaySink {
 public:
  void on_stats(const memtrail::alloc::ReplayOp&,
                const std::map<std::string, std::int64_t>& stats) override {
    for (const auto& [key, value] : stats)
      if (value < 0 && key != "max_split_size") std::abort();
  }
  void on_oom(const memtrail::alloc::ReplayOp& op, const std::string& message) override {
    if (op.size == 0 || message.empty() || message.find('\n') != std::string::npos) std::abort();
  }
};

// A few configurations, picked by the input's first byte, so the fuzzer
// reaches the options' code paths too.
const char* conf_for(ReplayAllocator allocator, unsigned char pick) {
  static const char* const caching[] = {"", "max_split_size_mb:20", "expandable_segments:True",
                                        "roundup_power2_divisions:4",
                                        "garbage_collection_threshold:0.5"};
  static const char* const bfc[] = {"", "memory_limit:1GiB", "fragmentation_fraction:0.5"};
  switch (allocator) {
    case ReplayAllocator::caching:
      return caching[pick % 5];
    case ReplayAllocator::bfc:
      return bfc[pick % 3];
    case ReplayAllocator::malloc:
      return "";
  }
  return "";
}

void replay_once(const std::string& text, ReplayAllocator allocator, std::uint64_t capacity,
                 unsigned char pick) {
  memtrail::alloc::ReplayOptions options;
  options.allocator = allocator;
  options.capacity = capacity;
  options.conf = conf_for(allocator, pick);
  CheckingSink sink;
  std::istringstream in(text);
  memtrail::alloc::ReplayScriptReader reader(in, "fuzz");
  memtrail::alloc::ReplayResult r;
  try {
    r = memtrail::alloc::run_replay(reader, options, &sink);
  } catch (const memtrail::alloc::ReplayError& e) {
    const std::string what = e.what();
    // One line that names the script and the line.
    if (what.rfind("fuzz:", 0) != 0 || what.find('\n') != std::string::npos) std::abort();
    return;
  }
  if (r.ooms > r.mallocs || r.frees > r.mallocs) std::abort();
  if (r.final_allocated > r.peak_allocated || r.final_reserved > r.peak_reserved) std::abort();
  if (capacity && r.peak_reserved > capacity) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const unsigned char pick = size ? data[0] : 0;
  for (ReplayAllocator a :
       {ReplayAllocator::caching, ReplayAllocator::bfc, ReplayAllocator::malloc})
    for (std::uint64_t capacity : {std::uint64_t{0}, std::uint64_t{64} << 20})
      replay_once(text, a, capacity, pick);
  return 0;
}
