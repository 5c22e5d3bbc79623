// An upstream that hands out addresses and touches no memory, for replays:
// a 100 GiB program replays on a laptop. Addresses follow the scheme of the
// caching model (tests/allocator/oracle/caching_model.py): the first segment
// at 0x7f0000000000, each new segment (or reservation) 2^32 above the
// previous one, never reused. Ties between equal-size free blocks are broken
// by address, so replays agree with PyTorch step by step only with this
// scheme. A segment larger than 4 GiB advances by its size rounded up to
// 4 GiB, so ranges never overlap. The memory must never be dereferenced.
//
// A replay of a recorded trace can plan the addresses instead
// (`memtrail replay --keep-addresses`): each new segment or reservation then
// takes the next recorded segment address, so equal-size ties break the way
// they did in the recorded program.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "memtrail/alloc/resource.hpp"

namespace memtrail::alloc {

class VirtualResource final : public Upstream {
 public:
  static constexpr std::uint64_t kFirstAddress = 0x7f0000000000ull;
  static constexpr std::uint64_t kStride = 1ull << 32;
  // The most an unbounded device (or one with a larger capacity) holds at
  // once: a request beyond it is refused like one beyond the capacity, so the
  // pools' int64 sums and the address scheme never wrap.
  static constexpr std::uint64_t kMaxBytes = 1ull << 62;

  // capacity 0 = unbounded (up to kMaxBytes).
  explicit VirtualResource(std::uint64_t capacity = 0, std::string name = "virtual device",
                           MemorySpace space = MemorySpace::device, int device = 0);
  std::uint64_t capacity() const override;
  std::uint64_t free_bytes() const override;

  // Whole segments take these addresses, in order. One that would overlap a
  // range still in use (a replay under another policy reserves other sizes)
  // is skipped, and that segment falls back to the scheme above, moved past
  // every range in use. Traces record where expandable segments map pages, not
  // where they reserved, so reservations always follow the scheme. Call
  // before the first segment.
  void plan_addresses(std::vector<std::uint64_t> addresses);
  std::uint64_t planned_addresses_used() const;
  std::uint64_t planned_addresses_skipped() const;

 protected:
  bool charges_process_limits() const override { return false; }
  void* acquire(std::size_t bytes, std::size_t alignment, UpstreamFailure* why) override;
  void give_back(void* p, std::size_t bytes, std::size_t alignment) noexcept override;
  void* do_reserve(std::size_t bytes) override;
  void do_release_reservation(void* p, std::size_t bytes) noexcept override;
  bool do_map(void* p, std::size_t bytes, UpstreamFailure* why) override;
  void do_unmap(void* p, std::size_t bytes) noexcept override {}

 private:
  void* next_range(std::size_t bytes, bool may_use_plan);  // nullptr: no range left
  std::uint64_t limit() const;                             // the most bytes in use at once
  bool overlaps_in_use(std::uint64_t start, std::uint64_t bytes) const;
  void forget_range(void* p) noexcept;
  std::uint64_t capacity_;
  mutable std::mutex mutex_;
  std::uint64_t next_ = kFirstAddress;
  // Only with a plan: ranges in use (start -> size), the plan and its cursor.
  bool planned_ = false;
  std::map<std::uint64_t, std::uint64_t> in_use_;
  std::vector<std::uint64_t> plan_;
  std::size_t plan_next_ = 0;
  std::uint64_t plan_used_ = 0, plan_skipped_ = 0;
};

}  // namespace memtrail::alloc
