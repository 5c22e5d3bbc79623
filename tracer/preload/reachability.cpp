// Exit-time leak classification (see reachability.hpp).
#include "reachability.hpp"

#include "glibc_locale_data.hpp"
#include "interior_heuristics.hpp"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <numeric>

namespace memtrail::preload {

namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kChunk = 64 * 1024;  // bytes read per reader call

enum State : std::uint8_t { unreached, reachable, possible, direct, indirect };

// Blocks sorted by address, with a lookup from any word to the block it
// points into.
class BlockIndex {
 public:
  BlockIndex(std::span<const HeapBlock> blocks, MemoryReader& reader, bool glibc_chunks)
      : blocks_(blocks), reader_(reader), glibc_chunks_(glibc_chunks) {
    order_.resize(blocks.size());
    std::iota(order_.begin(), order_.end(), 0u);
    std::sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
      return blocks[a].address < blocks[b].address;
    });
    starts_.reserve(order_.size());
    for (auto i : order_) starts_.push_back(blocks[i].address);
    if (!order_.empty()) {
      low_ = starts_.front();
      const HeapBlock& last = blocks[order_.back()];
      high_ = last.address + std::max<std::uint64_t>(last.size, 1);
    }
  }

  // Index (into the caller's span) of the block `value` points into, or -1.
  long find(std::uint64_t value) const {
    if (value < low_ || value >= high_) return -1;
    auto it = std::upper_bound(starts_.begin(), starts_.end(), value);
    if (it == starts_.begin()) return -1;
    std::size_t pos = static_cast<std::size_t>(it - starts_.begin()) - 1;
    const HeapBlock& b = blocks_[order_[pos]];
    std::uint64_t offset = value - b.address;
    // A zero-byte block still has an address that a pointer can hold.
    if (offset >= std::max<std::uint64_t>(b.size, 1) || offset == b.excluded_offset) return -1;
    // Only a word in the block's last 16 bytes can be the next chunk's header.
    if (glibc_chunks_ && offset >= 8 && offset + 16 > b.size &&
        offset == glibc_next_header_offset(b.address, reader_))
      return -1;
    return static_cast<long>(order_[pos]);
  }

  const std::vector<std::uint32_t>& address_order() const { return order_; }

 private:
  std::span<const HeapBlock> blocks_;
  MemoryReader& reader_;
  bool glibc_chunks_;
  std::vector<std::uint32_t> order_;
  std::vector<std::uint64_t> starts_;
  std::uint64_t low_ = 0;
  std::uint64_t high_ = 0;
};

// Calls fn(address, word) for every aligned 8-byte word in [begin, end) that can be
// read; unreadable pages are skipped.
template <typename Fn>
void for_each_word(MemoryReader& reader, std::uintptr_t begin, std::uintptr_t end,
                   std::vector<std::uint64_t>& buffer, Fn&& fn) {
  begin = (begin + 7) & ~std::uintptr_t{7};
  buffer.resize(kChunk / 8);
  while (begin + 8 <= end) {
    std::size_t want = std::min<std::uintptr_t>(kChunk, (end - begin) & ~std::uintptr_t{7});
    std::size_t got = reader.read(begin, buffer.data(), want);
    for (std::size_t i = 0; i < got / 8; ++i) fn(begin + i * 8, buffer[i]);
    if (got == want) {
      begin += want;
    } else {
      // Skip the unreadable page and go on with the next one.
      std::uintptr_t bad = begin + (got & ~std::size_t{7});
      begin = (bad + kPage) & ~(std::uintptr_t{kPage} - 1);
    }
  }
}

}  // namespace

SelfMemoryReader::SelfMemoryReader() {}

SelfMemoryReader::~SelfMemoryReader() {
  if (mem_fd_ >= 0) close(mem_fd_);
}

std::size_t SelfMemoryReader::read(std::uintptr_t address, void* out, std::size_t length) {
  std::size_t done = 0;
  while (done < length) {
    ssize_t n = -1;
    if (use_vm_readv_) {
      iovec local{static_cast<char*>(out) + done, length - done};
      iovec remote{reinterpret_cast<void*>(address + done), length - done};
      n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
      if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
        // Seccomp or an old kernel: /proc/self/mem reads the same way.
        use_vm_readv_ = false;
        mem_fd_ = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
      }
    }
    if (!use_vm_readv_) {
      if (mem_fd_ < 0) return done;
      n = pread(mem_fd_, static_cast<char*>(out) + done, length - done,
                static_cast<off_t>(address + done));
    }
    if (n <= 0) return done;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

std::uint64_t glibc_next_header_offset(std::uint64_t address, MemoryReader& reader) {
  // glibc: the size field is the word before the block; bit 1 = mmapped
  // chunk (no next chunk; usable = size - 16), else usable = size - 8.
  std::uint64_t field = 0;
  if (reader.read(static_cast<std::uintptr_t>(address - 8), &field, 8) != 8) return ~0ull;
  std::uint64_t chunk = field & ~std::uint64_t{7};
  if (chunk < 32) return ~0ull;
  std::uint64_t usable = chunk - ((field & 2) ? 16 : 8);
  return usable - 8;
}

namespace {

// One classification: the blocks' states as memcheck's leak check
// (mc_leak.c) moves them, from the roots, then clique by clique.
class Classifier {
  static constexpr std::uint64_t kVersionEntry = 24;  // sizeof(struct r_found_version)

 public:
  Classifier(std::span<const HeapBlock> blocks, MemoryReader& reader, ClassifyOptions options)
      : blocks_(blocks),
        reader_(reader),
        options_(options),
        index_(blocks, reader, options.glibc_chunks),
        state_(blocks.size(), unreached) {
    if (options_.possible_causes != nullptr) options_.possible_causes->assign(blocks.size(), {});
  }

  // 1. From the roots, memcheck's way (mc_leak.c, lc_push_without_clique):
  // a pointer to a block's start (or an interior pointer a heuristic
  // accepts) from a root or a reachable block makes it reachable; any other
  // pointer from the roots' side makes an unreached block possibly lost. A
  // block is scanned again when its state rises, so what it points to rises
  // with it.
  void reach_from_roots(std::span<const MemoryRange> roots) {
    for (std::uint32_t b = 0; b < blocks_.size(); ++b)
      if (blocks_[b].force_reachable) reach(blocks_[b].address, b, true);
    for (std::size_t r = 0; r < roots.size(); ++r) scan_root(roots[r], static_cast<long>(r));
    source_.root = -1;
    while (!work_.empty()) {
      std::uint32_t b = work_.back();
      work_.pop_back();
      const bool definite = state_[b] == reachable;
      scan_block(b, [&](std::uintptr_t at, std::uint64_t w, std::uint32_t hit) {
        source_ = {.root = -1, .block = static_cast<long>(b), .at = at, .value = w};
        reach(w, hit, definite);
      });
    }
  }

  // 2. Leaks: each unreached block, in allocation order, leads a clique.
  void mark_leak_cliques() {
    std::vector<std::uint32_t> leaders = index_.address_order();
    std::stable_sort(leaders.begin(), leaders.end(), [&](std::uint32_t a, std::uint32_t b) {
      return blocks_[a].age < blocks_[b].age;
    });
    for (std::uint32_t leader : leaders)
      if (state_[leader] == unreached) walk_clique(leader);
  }

  std::vector<LeakClass> classes() const {
    std::vector<LeakClass> classes(blocks_.size());
    for (std::size_t b = 0; b < blocks_.size(); ++b) classes[b] = class_of(state_[b]);
    return classes;
  }

 private:
  static LeakClass class_of(State state) {
    switch (state) {
      case reachable:
        return LeakClass::reachable;
      case possible:
        return LeakClass::possible;
      case direct:
        return LeakClass::direct;
      case indirect:
        return LeakClass::indirect;
      case unreached:
        break;
    }
    return LeakClass::unknown;
  }

  // Calls on_block(at, word, block) for each word of block `b` that points
  // into a block.
  template <typename OnBlock>
  void scan_block(std::uint32_t b, OnBlock&& on_block) {
    const HeapBlock& block = blocks_[b];
    const bool versions = is_version_table(block);
    for_each_word(reader_, block.address, block.address + block.size, buffer_,
                  [&](std::uintptr_t at, std::uint64_t w) {
                    long hit = index_.find(w);
                    if (hit < 0 || (versions && (at - block.address) % kVersionEntry == 8) ||
                        (options_.glibc_chunks &&
                         is_locale_digit_widths(block, at - block.address, reader_)) ||
                        is_data(at, w, static_cast<std::uint32_t>(hit), &block))
                      return;
                    on_block(at, w, static_cast<std::uint32_t>(hit));
                  });
  }

  // The dynamic linker's symbol-version table of a loaded object
  // (link_map::l_versions: struct r_found_version {name, hash, hidden,
  // filename}, 24 bytes, calloc'd with entries 0 and 1 unused). The word at
  // 8 of each entry is the version name's ELF hash and `hidden`: an
  // integer, never a pointer, that reads as an address where the heap lies
  // below 4 GiB (a non-PIE program's: GLIBC_2.2.5's hash is 0x09691a75).
  // Only blocks the runtime owns (force_reachable: ld.so's) are asked.
  bool is_version_table(const HeapBlock& block) {
    if (!block.force_reachable || block.size < 3 * kVersionEntry || block.size % kVersionEntry != 0)
      return false;
    std::uint64_t unused[2 * kVersionEntry / 8] = {};
    return reader_.read(block.address, unused, sizeof unused) == sizeof unused &&
           std::all_of(std::begin(unused), std::end(unused),
                       [](std::uint64_t w) { return w == 0; });
  }

  // True when word `w` at `at` (in `holder`, or a root when null) points
  // into block `hit` but is data, not a reference. A block's pointer to
  // another's start is not asked about: only a free pymalloc block (a root)
  // makes that one data.
  bool is_data(std::uintptr_t at, std::uint64_t w, std::uint32_t hit, const HeapBlock* holder) {
    const bool to_start = w == blocks_[hit].address;
    return options_.data_words != nullptr && (holder == nullptr || !to_start) &&
           options_.data_words->is_data(at, w, holder, to_start);
  }

  // True when root word `w` at `at` points inside `block`, which is younger
  // than the start-up snapshot, and still holds the value it held then.
  bool held_since_before(std::uintptr_t at, std::uint64_t w, const HeapBlock& block) const {
    const StartValues* start = options_.start_values;
    return start != nullptr && block.age > start->last_age() && w != block.address &&
           start->held_at_start(at, w);
  }

  // A root's words that point into a block, except those that still hold
  // their module file's value (link-time constants, not pointers), the
  // value they held before the block existed, or data (a CPython object's
  // payload, a free pymalloc block).
  void scan_root(const MemoryRange& root, long r) {
    source_.root = r;
    for_each_word(reader_, root.begin, root.end, buffer_, [&](std::uintptr_t at, std::uint64_t w) {
      long hit = index_.find(w);
      if (hit < 0) return;
      if (options_.image_constants != nullptr && options_.image_constants->holds_file_value(at, w))
        return;
      if (held_since_before(at, w, blocks_[static_cast<std::uint32_t>(hit)])) return;
      if (is_data(at, w, static_cast<std::uint32_t>(hit), nullptr)) return;
      source_.at = at;
      source_.value = w;
      reach(w, static_cast<std::uint32_t>(hit), true);
    });
  }

  void reach(std::uint64_t pointer, std::uint32_t b, bool from_definite) {
    if (state_[b] == reachable) return;
    const HeapBlock& block = blocks_[b];
    bool to_start = pointer == block.address ||
                    interior_pointer_is_intended(pointer, block, reader_, options_.vtables);
    if (to_start && from_definite) {
      state_[b] = reachable;
      work_.push_back(b);
    } else if (state_[b] == unreached) {
      state_[b] = possible;
      work_.push_back(b);
      if (options_.possible_causes != nullptr) (*options_.possible_causes)[b] = source_;
    }
  }

  // The leader is lost directly; what only it reaches, indirectly. A direct
  // leader of an earlier clique it reaches becomes indirect.
  void walk_clique(std::uint32_t leader) {
    state_[leader] = direct;
    work_.push_back(leader);
    while (!work_.empty()) {
      std::uint32_t b = work_.back();
      work_.pop_back();
      scan_block(b, [&](std::uintptr_t, std::uint64_t, std::uint32_t hit) {
        if (hit == leader) return;
        if (state_[hit] == unreached) {
          state_[hit] = indirect;
          work_.push_back(hit);
        } else if (state_[hit] == direct) {
          state_[hit] = indirect;  // an earlier clique, already walked
        }
      });
    }
  }

  std::span<const HeapBlock> blocks_;
  MemoryReader& reader_;
  ClassifyOptions options_;
  BlockIndex index_;
  std::vector<State> state_;
  std::vector<std::uint32_t> work_;
  std::vector<std::uint64_t> buffer_;
  PossibleCause source_;  // where the pointer being followed lies, for possible_causes
};

}  // namespace

std::vector<LeakClass> classify_blocks(std::span<const HeapBlock> blocks,
                                       std::span<const MemoryRange> roots, MemoryReader& reader,
                                       ClassifyOptions options) {
  Classifier classifier(blocks, reader, options);
  classifier.reach_from_roots(roots);
  classifier.mark_leak_cliques();
  return classifier.classes();
}

std::vector<MemoryRange> subtract_ranges(std::span<const MemoryRange> ranges,
                                         std::span<const MemoryRange> holes) {
  std::vector<MemoryRange> out(ranges.begin(), ranges.end());
  for (const MemoryRange& hole : holes) {
    std::vector<MemoryRange> next;
    for (const MemoryRange& r : out) {
      if (hole.end <= r.begin || hole.begin >= r.end) {
        next.push_back(r);
        continue;
      }
      if (r.begin < hole.begin) next.push_back({r.begin, hole.begin});
      if (hole.end < r.end) next.push_back({hole.end, r.end});
    }
    out.swap(next);
  }
  return out;
}

MemoryRange glibc_static_tls_range(std::uintptr_t tp, std::size_t static_size,
                                   std::uintptr_t descriptor_extent, std::size_t tcb_size) {
  std::uintptr_t below = static_size > tcb_size ? static_size - tcb_size : static_size;
  return {tp - std::min<std::uintptr_t>(below, tp), tp + descriptor_extent};
}

}  // namespace memtrail::preload
