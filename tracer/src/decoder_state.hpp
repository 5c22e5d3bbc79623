// The reader's twin of format::ThreadCodecState (format_layout.hpp): the same
// predictions, so the same decoded events, held in flat structures made for
// the questions the decoder asks on every event. format_layout.hpp stays the
// reference; tests/tracer/test_decoder_state.cpp runs both side by side.
// Where the reference pays, and what this twin does instead:
// - RecentFrees' address index is an AddressTable that keeps addresses which left
//   the window and is rebuilt (1024 inserts) every 3072 pushes; here it is
//   the exact windowed index the encoder uses too (codec_twin_state.hpp),
//   erased as entries leave the window, so it stays small and in cache;
// - ClassFrees keeps (class, count) apart from the address lists, which hold
//   the newest entry last, so the usual take (the newest) shifts nothing;
// - the whole state lives in one reusable object per thread slot: a new
//   chunk resets counters and the index, instead of freeing and allocating
//   ~40 KiB plus a hash map per thread and chunk.
// Every decision below mirrors the function of format_layout.hpp it names.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

#include "codec_twin_state.hpp"

namespace memtrail::format {

struct DecoderThreadState : CodecTwinState {
  bool stack_of_code(int kind, std::uint64_t code, std::uint32_t& stack) const {
    if (code == 0) return stack = prev_stack[kind], true;
    if (code - 1 > 0xffffffffu) return false;
    return stack = static_cast<std::uint32_t>(code - 1), true;
  }

  // --- size cache: the decoder reads slots by number, never searches ---
  std::array<std::uint64_t, kSizeSlots> slot_size{};
  std::array<std::uint64_t, kSizeSlots> slot_address{};
  unsigned next_slot = 0;
  int insert_size(std::uint64_t size) {  // ThreadCodecState::insert_size
    static_assert((kSizeSlots & (kSizeSlots - 1)) == 0, "round robin by mask");
    int slot = static_cast<int>(next_slot);
    next_slot = (next_slot + 1) & (kSizeSlots - 1);
    slot_size[slot] = size;
    slot_address[slot] = last_address;
    return slot;
  }

  // RecentFrees::find + take: the newest push of `a` in the window, if live,
  // is live no more.
  void recent_take_address(std::uint64_t a) {
    int i = index_find(a);
    if (i < 0) return;
    unsigned r = ring_slot(index_seq[i]);
    live[r >> 6] &= ~(std::uint64_t{1} << (r & 63));
  }
  // RecentFrees::seq_at: the live entry of rank `rank`, newest first.
  [[gnu::noinline]] bool recent_seq_at(std::uint64_t rank, std::uint64_t& seq) const {
    std::uint64_t oldest = pushed > kRecentFrees ? pushed - kRecentFrees : 0;
    for (std::uint64_t s = pushed; s > oldest;) {  // entries [s - span, s) share a word
      unsigned top = ring_slot(s - 1);
      std::uint64_t span = std::min<std::uint64_t>((top & 63) + 1, s - oldest);
      std::uint64_t w = live[top >> 6] >> ((top & 63) + 1 - span);
      if (span < 64) w &= (std::uint64_t{1} << span) - 1;
      std::uint64_t c = static_cast<std::uint64_t>(popcount64(w));
      if (rank < c) {  // the rank-th highest set bit, cleared towards from the nearer end
        int bit;
        if (2 * rank < c) {
          for (; rank > 0; --rank) w &= ~(std::uint64_t{1} << (63 - std::countl_zero(w)));
          bit = 63 - std::countl_zero(w);
        } else {
          for (std::uint64_t low = c - 1 - rank; low > 0; --low) w &= w - 1;
          bit = std::countr_zero(w);
        }
        return seq = s - span + static_cast<std::uint64_t>(bit), true;
      }
      rank -= c;
      s -= span;
    }
    return false;
  }

  // --- ClassFrees, heads apart from the lists, each list oldest first ---
  // Stored in reverse of ClassFrees (rank r at count - 1 - r): blocks are
  // mostly taken newest first, so a take is a decrement instead of shifting
  // the whole list, and a push appends unless the list is full.
  struct ClassHead {
    std::uint64_t cls = 0;
    int count = 0;
  };
  std::array<ClassHead, kClassBuckets> class_head{};
  std::array<std::array<std::uint64_t, kClassDepth>, kClassBuckets> class_address{};

  void class_push(std::uint64_t cls, std::uint64_t a) {  // ClassFrees::push
    int bucket = ClassFrees::bucket_of(cls);
    ClassHead& h = class_head[bucket];
    auto& list = class_address[bucket];
    if (h.cls != cls) {
      h.cls = cls;
      h.count = 0;
    }
    if (h.count == kClassDepth) {  // full: the oldest goes
      for (int i = 0; i + 1 < kClassDepth; ++i) list[i] = list[i + 1];
      --h.count;
    }
    list[h.count++] = a;
  }
  // ClassFrees::take_address: the newest entry equal to `a` (the reference's
  // first) leaves the list.
  void class_take_address(int bucket, std::uint64_t cls, std::uint64_t a) {
    ClassHead& h = class_head[bucket];
    if (h.cls != cls) return;
    auto& list = class_address[bucket];
    for (int p = h.count - 1; p >= 0; --p)
      if (list[p] == a) {
        for (int i = p; i + 1 < h.count; ++i) list[i] = list[i + 1];
        --h.count;
        return;
      }
  }

  // --- fresh ends (ThreadCodecState::fresh_ring) ---
  std::array<std::uint64_t, kFreshEnds> fresh_ring{};
  std::uint64_t fresh_pushed = 0;
  void push_fresh(std::uint64_t end) { fresh_ring[fresh_pushed++ & (kFreshEnds - 1)] = end; }

  // ThreadCodecState::push_freed.
  void push_freed(std::uint64_t address, std::uint64_t size) {
    recent_push(address);
    if (size != 0) class_push(chunk_class(size), address);
  }
  // ThreadCodecState::take_freed.
  void take_freed(std::uint64_t cls, std::uint64_t address) {
    take_freed(ClassFrees::bucket_of(cls), cls, address);
  }
  // The same, with the class's bucket already known (the decoder computes it
  // once per alloc for both questions).
  void take_freed(int bucket, std::uint64_t cls, std::uint64_t address) {
    recent_take_address(address);
    class_take_address(bucket, cls, address);
  }

  // AllocCandidates(st, cls).address_at(index, address).
  bool alloc_address_at(std::uint64_t cls, std::uint64_t index, std::uint64_t& address) const {
    return alloc_address_at(ClassFrees::bucket_of(cls), cls, index, address);
  }
  [[gnu::always_inline]] bool alloc_address_at(int bucket, std::uint64_t cls, std::uint64_t index,
                                               std::uint64_t& address) const {
    const ClassHead& h = class_head[bucket];
    std::uint64_t n = h.cls == cls && h.count > 0 ? static_cast<std::uint64_t>(h.count) : 0;
    if (index < n) {
      address = class_address[bucket][n - 1 - index];
      return true;
    }
    if (index - n < kFreshEnds) {
      std::uint64_t j = index - n;
      address = j < fresh_pushed ? fresh_ring[(fresh_pushed - 1 - j) & (kFreshEnds - 1)] : 0;
      return address != 0;
    }
    std::uint64_t seq;
    if (!recent_seq_at(index - n - kFreshEnds, seq)) return false;
    address = ring[ring_slot(seq)];
    return true;
  }

  // The state of a fresh chunk, as a default-constructed ThreadCodecState,
  // without freeing anything: what reads past a counter needs no clearing.
  void reset() {
    last_time = 0;
    last_address = 0;
    last_pool = 0;
    last_stack.fill(0);
    prev_stack.fill(0);
    last_detail.fill(0);
    slot_size.fill(0);  // a cached-size read may name any slot
    slot_address.fill(0);
    next_slot = 0;
    live.fill(0);  // ring entries are read only where live
    pushed = 0;
    index_key.fill(0);
    for (auto& h : class_head) h = ClassHead{};  // lists are read below count
    fresh_pushed = 0;                            // ring read below fresh_pushed
  }
};

}  // namespace memtrail::format
