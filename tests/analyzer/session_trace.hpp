// The golden trace of the session tests: a caching pool with two segments
// and known blocks, the malloc pool with a glibc sample, an oom, scopes.
//
//   t100 reserve  pool 2  A = [0x1000, 0x2000)  (4096)      reserved 4096
//   t150 sample   rss 10000, heap used 100, heap reserved 5000
//   t200 reserve  pool 2  B = [0x10000, 0x10800) (2048)     reserved 6144
//   t250 alloc    pool 1  0xA0 100 (stack 3)                malloc used 100
//   t300 alloc    pool 2  0x1000 1024 (stack 1)             used 1024
//   t400 alloc    pool 2  0x1800 512 (stack 2)              used 1536
//   t500 alloc    pool 2  0x10000 2048 (stack 1)            used 3584
//   t600 free     pool 2  0x10000                           used 1536
//   t700 free     pool 2  0x1000                            used 512
//   t800 oom      pool 2  requested 3000
//   t900 release  pool 2  B                                 reserved 4096
// Scopes on thread 1: 1 [110, 820) holding 2 [120, 130); 1 again from 850,
// never closed. Every event is in its own chunk from t400 on (flushes), so
// a read has several chunks to report progress for.
#pragma once

#include "trace_builder.hpp"

namespace memtrail::test {

inline void write_session_trace(TraceBuilder& b) {
  constexpr auto kReserve = EventKind::segment_reserve;
  b.pool(1, "malloc", PoolKind::heap);
  b.pool(2, "cache", PoolKind::caching);
  b.stack(1, 0, 0x1000);
  b.stack(2, 0, 0x2000);
  b.stack(3, 0, 0x3000);
  b.writer().add_scope(ScopeInfo{1, "step", ScopeKind::user, 0});
  b.writer().add_scope(ScopeInfo{2, "inner", ScopeKind::user, 0});
  b.writer().add_string(7, "{\"pool\":\"cache\"}");
  b.segment(100, kReserve, 2, 0x1000, 4096);
  b.scope(110, EventKind::scope_begin, 1);
  b.scope(120, EventKind::scope_begin, 2);
  b.scope(130, EventKind::scope_end, 2);
  b.sample(150, 10000, 100, 5000);
  b.segment(200, kReserve, 2, 0x10000, 2048);
  b.alloc(250, 1, 0xA0, 100, 3);
  b.alloc(300, 2, 0x1000, 1024, 1);
  b.writer().flush();
  b.alloc(400, 2, 0x1800, 512, 2);
  b.writer().flush();
  b.alloc(500, 2, 0x10000, 2048, 1);
  b.writer().flush();
  b.free(600, 2, 0x10000);
  b.writer().flush();
  b.free(700, 2, 0x1000);
  b.writer().flush();
  Event oom;
  oom.time_ns = 800;
  oom.kind = EventKind::oom;
  oom.pool = 2;
  oom.thread = 1;
  oom.stack = 2;
  oom.size = 3000;
  oom.requested = 3072;
  oom.aux = 7;
  b.writer().add_event(oom);
  b.scope(820, EventKind::scope_end, 1);
  b.scope(850, EventKind::scope_begin, 1);
  b.writer().flush();
  b.segment(900, EventKind::segment_release, 2, 0x10000, 0);
}

}  // namespace memtrail::test
