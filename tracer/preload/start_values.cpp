// The writable segments' words at start-up (start_values.hpp).
#include "start_values.hpp"

#include <algorithm>

namespace memtrail::preload {
namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kChunkWords = 8192;  // 64 KiB read per reader call

// Ranges sorted by start, merged where they overlap, for a binary search.
class RangeSet {
 public:
  explicit RangeSet(std::span<const MemoryRange> ranges) : ranges_(ranges.begin(), ranges.end()) {
    std::sort(ranges_.begin(), ranges_.end(),
              [](const MemoryRange& a, const MemoryRange& b) { return a.begin < b.begin; });
    std::vector<MemoryRange> merged;
    for (const MemoryRange& r : ranges_) {
      if (!merged.empty() && r.begin <= merged.back().end)
        merged.back().end = std::max(merged.back().end, r.end);
      else
        merged.push_back(r);
    }
    ranges_.swap(merged);
  }
  // Neighbouring words tend to point into the same range (a module's GOT,
  // its static objects): the last range found is tried first.
  bool contains(std::uint64_t value) {
    if (value >= last_.begin && value < last_.end) return true;
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), value,
                               [](std::uint64_t v, const MemoryRange& r) { return v < r.begin; });
    if (it == ranges_.begin() || value >= std::prev(it)->end) return false;
    last_ = *std::prev(it);
    return true;
  }

 private:
  std::vector<MemoryRange> ranges_;
  MemoryRange last_;
};

}  // namespace

StartSnapshot::StartSnapshot(std::vector<StartWord> words, std::uint64_t last_age)
    : words_(std::move(words)), last_age_(last_age) {
  std::sort(words_.begin(), words_.end(),
            [](const StartWord& a, const StartWord& b) { return a.at < b.at; });
  words_.shrink_to_fit();
}

bool StartSnapshot::held_at_start(std::uintptr_t at, std::uint64_t value) const {
  auto it = std::lower_bound(words_.begin(), words_.end(), at,
                             [](const StartWord& w, std::uintptr_t a) { return w.at < a; });
  return it != words_.end() && it->at == at && it->value == value;
}

std::vector<StartWord> candidate_start_words(std::span<const MemoryRange> ranges,
                                             std::span<const MemoryRange> not_blocks,
                                             MemoryReader& reader) {
  RangeSet excluded(not_blocks);
  std::vector<StartWord> words;
  std::vector<std::uint64_t> buffer(kChunkWords);
  for (const MemoryRange& range : ranges) {
    std::uintptr_t at = (range.begin + 7) & ~std::uintptr_t{7};
    while (at + 8 <= range.end) {
      std::size_t want = std::min<std::uintptr_t>(kChunkWords * 8, (range.end - at) & ~7ul);
      std::size_t got = reader.read(at, buffer.data(), want);
      for (std::size_t i = 0; i < got / 8; ++i)
        if (buffer[i] != 0 && !excluded.contains(buffer[i]))
          words.push_back({at + i * 8, buffer[i]});
      // An unreadable page is skipped: its words are not remembered.
      at = got == want ? at + want : ((at + (got & ~std::size_t{7}) + kPage) & ~(kPage - 1));
    }
  }
  return words;
}

}  // namespace memtrail::preload
