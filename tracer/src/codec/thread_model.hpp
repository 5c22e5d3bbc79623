// The prediction model of the trace codec, written once: what one thread's
// events in one chunk predict about the next (docs/trace-format.md 3), and
// the rules that update it. The writer and the reader instantiate it with
// their lookup policy (small_values.hpp): the encoder asks "which index has
// address a", the decoder "which address has index i", and each direction
// is the other's inverse over the same state, so the reader decodes exactly
// what the writer encoded. tests/format/test_codec_model.cpp checks both
// against the plain reference model (tests/format/reference_model.hpp), and
// CodecGolden pins the bytes.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

#include "../assert_levels.hpp"
#include "../format_layout.hpp"
#include "class_frees.hpp"
#include "recent_frees.hpp"
#include "small_values.hpp"

namespace memtrail::format::codec {

// Where an alloc/reuse of chunk class `cls` probably lands, in index order:
// 0..n-1 the class's n freed blocks, newest first (tcache and bins are LIFO
// per class); n+j the end of the thread's j-th newest block (glibc carves
// from the top chunk, or from the rest of a chunk it split, back to back);
// n+kFreshEnds+r rank r of RecentFrees (blocks split from or merged into
// another class's). An index is one byte where a delta costs about three.
struct CandidateIndex {
  std::uint64_t n;  // the class's freed blocks
  std::uint64_t fresh(std::uint64_t j) const { return n + j; }
  std::uint64_t recent(std::uint64_t rank) const { return n + kFreshEnds + rank; }
};

template <class Lookup>
struct ThreadModel {
  // --- history, per thread and per event kind ---
  std::uint64_t last_time = 0;
  std::uint64_t last_address = 0;
  std::uint32_t last_pool = 0;
  std::array<std::uint32_t, kEventKindCount> last_stack{};
  // The stack before last_stack, per kind: call sites often alternate (an
  // immediate free and a deferred one), and MISC value 0 names this one.
  std::array<std::uint32_t, kEventKindCount> prev_stack{};
  std::array<std::uint8_t, kEventKindCount> last_detail{};

  // --- size cache: kSizeSlots sizes, round robin, each with the address
  // of the last event of that size (the prediction of the next one's) ---
  SmallValues<kSizeSlots, Lookup> slot_size;
  std::array<std::uint64_t, kSizeSlots> slot_address{};
  unsigned next_slot = 0;

  // --- the glibc address model: which blocks an alloc may land on ---
  RecentFrees recent;
  ClassFrees classes;
  // Ends (address + chunk_class) of the thread's last kFreshEnds allocs,
  // a ring, newest first: glibc carves a new block from the top chunk, or
  // from the rest of a free chunk it just split, right where one ended.
  SmallValues<kFreshEnds, Lookup> fresh_ring;
  std::uint64_t fresh_pushed = 0;

  // The state of a fresh chunk, without freeing anything: what is read
  // only below a counter needs no clearing.
  void reset() {
    last_time = 0;
    last_address = 0;
    last_pool = 0;
    last_stack.fill(0);
    prev_stack.fill(0);
    last_detail.fill(0);
    slot_size.clear();  // a cached-size read may name any slot
    slot_address.fill(0);
    next_slot = 0;
    recent.reset();
    classes.reset();
    fresh_pushed = 0;  // the decoder reads the ring only below fresh_pushed
    if constexpr (Lookup::kFindsValues) fresh_ring.clear();  // a find reads every position
  }

  // --- stacks: MISC value of a stack is 0 = prev_stack[kind], else id + 1 ---
  std::uint64_t stack_code(int kind, std::uint32_t stack) const {
    return stack == prev_stack[kind] ? 0 : std::uint64_t{stack} + 1;
  }
  bool stack_of_code(int kind, std::uint64_t code, std::uint32_t& stack) const {
    if (code == 0) return stack = prev_stack[kind], true;
    if (code - 1 > 0xffffffffu) return false;
    return stack = static_cast<std::uint32_t>(code - 1), true;
  }
  void set_stack(int kind, std::uint32_t stack) {
    if (stack != last_stack[kind]) {
      prev_stack[kind] = last_stack[kind];
      last_stack[kind] = stack;
    }
  }

  // --- sizes: slots hold distinct sizes, never 0 (a size is inserted only
  // when find_size missed, and size 0 is coded as kSizeZero) ---
  int find_size(std::uint64_t size) const requires Lookup::kFindsValues {
    std::uint64_t at = slot_size.positions_of(size);
    return at ? std::countr_zero(at) : -1;
  }
  int insert_size(std::uint64_t size) {
    static_assert((kSizeSlots & (kSizeSlots - 1)) == 0, "round robin by mask");
    int slot = static_cast<int>(next_slot);
    next_slot = (next_slot + 1) & (kSizeSlots - 1);
    slot_size.set(slot, size);
    slot_address[slot] = last_address;
    return slot;
  }

  // --- the address model's updates ---
  void push_fresh(std::uint64_t end) {
    fresh_ring.set(static_cast<int>(fresh_pushed++ & (kFreshEnds - 1)), end);
  }
  std::uint64_t fresh_end(std::uint64_t j) const {  // 0 = newest; 0 when none
    return j < fresh_pushed
               ? fresh_ring[static_cast<int>((fresh_pushed - 1 - j) & (kFreshEnds - 1))]
               : 0;
  }
  // A freed block enters both free lists; its class only when its size is known.
  void push_freed(std::uint64_t address, std::uint64_t size) {
    recent.push(address);
    if (size != 0) classes.push(chunk_class(size), address);
  }
  // An alloc/reuse made `address` live again, whichever way it was coded;
  // `bucket` is ClassFrees::bucket_of(cls).
  void take_freed(int bucket, std::uint64_t cls, std::uint64_t address) {
    recent.take_address(address);
    classes.take_address(bucket, cls, address);
  }

  // --- the encoder's question: the candidate index of `address` for an
  // alloc of class `cls`, then take_freed(cls, address), in one pass ---
  bool alloc_index_and_take(std::uint64_t cls, std::uint64_t address,
                            std::uint64_t& index) requires Lookup::kFindsValues {
    int bucket = ClassFrees::bucket_of(cls);
    CandidateIndex at{static_cast<std::uint64_t>(classes.count_of(bucket, cls))};
    int class_rank = classes.rank_of(bucket, cls, address);
    std::uint64_t seq = 0;
    bool in_recent = recent.find(address, seq);
    bool found = true;
    if (class_rank >= 0) {
      index = static_cast<std::uint64_t>(class_rank);
    } else if (std::uint64_t k = fresh_ring.positions_of(address)) {
      // The highest ring position holding it names it (a ring holds an end
      // once, unless a block was freed and carved again).
      std::uint64_t position = static_cast<std::uint64_t>(63 - std::countl_zero(k));
      index = at.fresh((fresh_pushed - 1 - position) & (kFreshEnds - 1));
    } else if (in_recent) {
      index = at.recent(static_cast<std::uint64_t>(recent.rank_of(seq)));
    } else {
      found = false;
    }
    if (in_recent) recent.take(seq);
    if (class_rank >= 0) classes.take_rank(bucket, class_rank);
    return found;
  }

  // --- the decoder's question: the address of candidate `index` for an
  // alloc of class `cls` (in `bucket`); false when it names none ---
  [[gnu::always_inline]] bool alloc_address_at(int bucket, std::uint64_t cls, std::uint64_t index,
                                               std::uint64_t& address) const {
    CandidateIndex at{static_cast<std::uint64_t>(classes.count_of(bucket, cls))};
    if (index < at.n) {
      address = classes.at_rank(bucket, static_cast<int>(index));
      return true;
    }
    if (index < at.fresh(kFreshEnds)) {
      address = fresh_end(index - at.n);
      return address != 0;
    }
    std::uint64_t seq;
    if (!recent.seq_at(index - at.recent(0), seq)) return false;
    address = recent.address_of(seq);
    return true;
  }
};

}  // namespace memtrail::format::codec

namespace memtrail::format {
using EncoderThreadState = codec::ThreadModel<codec::FindByValue>;
using DecoderThreadState = codec::ThreadModel<codec::ReadByPosition>;
}  // namespace memtrail::format
