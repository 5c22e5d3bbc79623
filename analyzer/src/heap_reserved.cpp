// The heap pool's reserved figures from the glibc samples (heap_reserved.hpp).
#include "heap_reserved.hpp"

namespace memtrail::detail {

void take_heap_reserved_from_samples(Analysis& a) {
  const Series& reserved = a.samples.heap_reserved;
  std::size_t peak = 0;
  for (std::size_t i = 1; i < reserved.value.size(); ++i)
    if (reserved.value[i] > reserved.value[peak]) peak = i;
  if (reserved.value.empty() || reserved.value[peak] == 0) return;  // not glibc's heap
  for (PoolStats& p : a.pools) {
    if (p.info.kind != PoolKind::heap || p.has_segments) continue;
    p.peak_reserved_bytes = reserved.value[peak];
    p.peak_reserved_time_ns = reserved.time_ns[peak];
    // The last bucket holds the maximum of its samples: the final state
    // within one timeline bucket.
    p.final_reserved_bytes = reserved.value.back();
    p.reserved = reserved;
  }
}

}  // namespace memtrail::detail
