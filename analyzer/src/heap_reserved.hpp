// The `malloc` pool's reserved bytes. The preload tracer sees blocks, not the
// arenas glibc carves them from, so the heap pool has no segments and its
// own reserved figures would read 0 while the summary's glibc samples
// (mallinfo2: arena + mmapped bytes) say what the heap really holds. The
// samples are the one source for both.
#pragma once

#include "memtrail/analysis.hpp"

namespace memtrail::detail {

// For each analyzed PoolKind::heap pool without segment events, when the
// trace has glibc heap samples: peak/final reserved and the reserved
// timeline are those of Analysis::samples.heap_reserved.
void take_heap_reserved_from_samples(Analysis& a);

}  // namespace memtrail::detail
