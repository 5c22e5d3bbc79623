// Where a trace's compressed bytes go (issue 28: "trace no larger than
// heaptrack's ... with per-event times kept: say what yours cost").
// A bench tool, never the product path: it reads a finished trace and
//   1. takes its data chunks apart into the writer's eight byte streams
//      (format_layout.hpp `Stream`) and, per field class, recompresses each
//      chunk without that class's streams at the writer's zstd level: the
//      drop is what the class costs in the file as written;
//   2. re-encodes the trace's records and events with TraceWriter, once as
//      read and once per variant with one field class made constant or
//      perfectly predictable, and prints each file's size: the drop beside
//      the plain re-encode is what that field's information costs.
// Usage: trace_bytes TRACE.mtr   (prints a markdown table, bytes per event)
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "format_layout.hpp"
#include "memtrail/trace_file.hpp"

namespace {

using memtrail::Event;
using memtrail::EventKind;
namespace fmt = memtrail::format;

// ---- 1. the file as written: stream attribution ---------------------------

struct Frame {
  std::uint8_t type;
  std::string payload;  // decompressed
  std::size_t stored;   // compressed bytes in the file
  std::uint32_t events;
};

std::uint32_t le32(const std::string& s, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

// Every frame after the header: u8 type, u32 stored, u32 raw, u32 events,
// u32 crc, payload, u32 crc (format_layout.hpp).
std::vector<Frame> read_frames(const std::string& path, std::size_t& file_bytes) {
  std::ifstream in(path, std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  file_bytes = file.size();
  std::size_t at = 8 + 2 + 2;
  at += 4 + le32(file, at) + 4;  // header payload and its crc
  std::vector<Frame> frames;
  while (at + fmt::kFrameHeaderBytes <= file.size()) {
    Frame f{static_cast<std::uint8_t>(file[at]), {}, le32(file, at + 1), le32(file, at + 9)};
    std::uint32_t raw = le32(file, at + 5);
    at += fmt::kFrameHeaderBytes;
    if (f.type == fmt::kChunkData) {
      f.payload.resize(raw);
      std::size_t n = ZSTD_decompress(f.payload.data(), raw, file.data() + at, f.stored);
      if (ZSTD_isError(n) || n != raw)
        throw std::runtime_error("bad chunk at " + std::to_string(at));
    }
    at += f.stored + fmt::kFrameTrailerBytes;
    frames.push_back(std::move(f));
  }
  return frames;
}

// The eight streams of a chunk payload: varint sizes, then the bytes.
std::vector<std::string> split_streams(const std::string& p) {
  std::size_t at = 0;
  std::vector<std::size_t> sizes;
  for (int s = 0; s < fmt::kStreamCount; ++s) {
    std::size_t v = 0;
    for (int shift = 0;; shift += 7) {
      auto b = static_cast<unsigned char>(p[at++]);
      v |= std::size_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) break;
    }
    sizes.push_back(v);
  }
  std::vector<std::string> out;
  for (auto n : sizes) {
    out.push_back(p.substr(at, n));
    at += n;
  }
  return out;
}

std::size_t zstd_size(const std::string& raw) {
  static ZSTD_CCtx* cctx = ZSTD_createCCtx();
  std::string out(ZSTD_compressBound(raw.size()), '\0');
  std::size_t n =
      ZSTD_compressCCtx(cctx, out.data(), out.size(), raw.data(), raw.size(), fmt::kZstdLevel);
  if (ZSTD_isError(n)) throw std::runtime_error("zstd failed");
  return n;
}

struct StreamClass {
  const char* name;
  std::vector<int> streams;
};

const std::vector<StreamClass> kClasses = {
    {"ops (kind, flags, field mask; thread switches; table record tags)", {fmt::kOps}},
    {"times (TIME, TIME_HIGH)", {fmt::kTime, fmt::kTimeHigh}},
    {"addresses (ADDR, ADDR_HIGH: free refs, alloc candidate ranks, deltas)",
     {fmt::kAddr, fmt::kAddrHigh}},
    {"sizes (SIZE, SIZE_HIGH)", {fmt::kSize, fmt::kSizeHigh}},
    {"misc (stack codes, pool, detail, aux)", {fmt::kMisc}},
};

void attribute_streams(const std::vector<Frame>& frames, double events) {
  std::size_t chunk_bytes = 0, other_bytes = 0;
  std::vector<std::size_t> drop(kClasses.size()), alone(kClasses.size()), raw(kClasses.size());
  for (const auto& f : frames) {
    if (f.type != fmt::kChunkData) {
      other_bytes += f.stored + fmt::kFrameHeaderBytes + fmt::kFrameTrailerBytes;
      continue;
    }
    chunk_bytes += f.stored + fmt::kFrameHeaderBytes + fmt::kFrameTrailerBytes;
    auto streams = split_streams(f.payload);
    for (std::size_t c = 0; c < kClasses.size(); ++c) {
      std::string without, only;
      for (int s = 0; s < fmt::kStreamCount; ++s) {
        bool in_class = false;
        for (int k : kClasses[c].streams) in_class |= (k == s);
        (in_class ? only : without) += streams[s];
      }
      std::size_t rest = zstd_size(without);
      drop[c] += f.stored > rest ? f.stored - rest : 0;
      alone[c] += zstd_size(only);
      raw[c] += only.size();
    }
  }
  std::size_t chunks = 0, raw_total = 0;
  for (const auto& f : frames)
    if (f.type == fmt::kChunkData) ++chunks, raw_total += f.payload.size();
  std::printf(
      "\n1. The file as written: %.3f B/event in %zu data chunks (%.0f KiB raw each), "
      "%.3f in other frames\n",
      chunk_bytes / events, chunks, chunks ? raw_total / 1024.0 / chunks : 0.0,
      other_bytes / events);
  std::printf("| stream class | raw B/event | drop when removed, B/event | alone, B/event |\n");
  std::printf("|---|---|---|---|\n");
  for (std::size_t c = 0; c < kClasses.size(); ++c)
    std::printf("| %s | %.3f | %.3f | %.3f |\n", kClasses[c].name, raw[c] / events,
                drop[c] / events, alone[c] / events);
}

// ---- 2. re-encodes with one field class changed ----------------------------

using Record =
    std::variant<std::pair<std::uint32_t, std::string>, memtrail::ModuleInfo, memtrail::ThreadInfo,
                 memtrail::PoolInfo, memtrail::StackNode, memtrail::ScopeInfo>;

// The trace in file order: each record with the index of the event it came before.
struct Trace : memtrail::TraceVisitor {
  memtrail::TraceHeader header;
  std::vector<std::pair<std::size_t, Record>> records;
  std::vector<Event> events;
  void on_header(const memtrail::TraceHeader& h) override { header = h; }
  void keep(Record r) { records.emplace_back(events.size(), std::move(r)); }
  void on_string(std::uint32_t id, std::string_view t) override {
    keep(std::pair{id, std::string(t)});
  }
  void on_module(const memtrail::ModuleInfo& m) override { keep(m); }
  void on_thread(const memtrail::ThreadInfo& t) override { keep(t); }
  void on_pool(const memtrail::PoolInfo& p) override { keep(p); }
  void on_stack_node(const memtrail::StackNode& n) override { keep(n); }
  void on_scope(const memtrail::ScopeInfo& s) override { keep(s); }
  void on_event(const Event& e) override { events.push_back(e); }
};

void add_record(memtrail::TraceWriter& w, const Record& r) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::pair<std::uint32_t, std::string>>)
          w.add_string(v.first, v.second);
        else if constexpr (std::is_same_v<T, memtrail::ModuleInfo>)
          w.add_module(v);
        else if constexpr (std::is_same_v<T, memtrail::ThreadInfo>)
          w.add_thread(v);
        else if constexpr (std::is_same_v<T, memtrail::PoolInfo>)
          w.add_pool(v);
        else if constexpr (std::is_same_v<T, memtrail::StackNode>)
          w.add_stack_node(v);
        else
          w.add_scope(v);
      },
      r);
}

std::string scratch_path() {
  return "/tmp/tb-trace-bytes-" + std::to_string(getpid()) + ".out";
}

// Writes the trace's records and `events` (null: none) to a scratch file;
// its size in bytes.
// `cuts`: event counts after which to end a chunk, as the file's writer did
// (its timed flushes); empty: only where the writer's size target says.
std::uint64_t reencode(const Trace& t, const std::vector<Event>* events,
                       const memtrail::TraceHeader& header, bool address_model = true,
                       const std::vector<std::size_t>& cuts = {}) {
  std::string path = scratch_path();
  std::uint64_t bytes;
  {
    memtrail::TraceWriter w(path, header);
    w.set_address_model(address_model);
    std::size_t r = 0, n = events ? events->size() : 0;
    for (std::size_t i = 0; i <= n; ++i) {
      while (r < t.records.size() && (t.records[r].first <= i || i == n))
        add_record(w, t.records[r++].second);
      if (i < n) w.add_event((*events)[i]);
      if (std::binary_search(cuts.begin(), cuts.end(), i + 1)) w.flush();
    }
    w.finish();
    bytes = w.bytes_written();
  }
  std::remove(path.c_str());
  return bytes;
}

bool is_alloc(const Event& e) {
  return e.kind == EventKind::alloc || e.kind == EventKind::reuse;
}

// Addresses made perfectly predictable: each alloc a fresh block 64 bytes
// past the last one, each free the address its alloc got.
std::vector<Event> bump_addresses(std::vector<Event> ev) {
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint64_t> live;
  std::uint64_t next = 0x10000;
  for (auto& e : ev) {
    if (e.address == 0) continue;
    auto key = std::pair{e.pool, e.address};
    if (is_alloc(e)) {
      live[key] = e.address = (next += 64);
    } else if (e.kind == EventKind::free) {
      auto it = live.find(key);
      e.address = it != live.end() ? it->second : (next += 64);
      if (it != live.end()) live.erase(it);
    }
  }
  return ev;
}

struct Variant {
  const char* name;
  std::function<void(std::vector<Event>&, memtrail::TraceHeader&)> change;
  bool address_model = true;
};

const std::vector<Variant> kVariants = {
    {"times all 0 (no per-event times)",
     [](auto& ev, auto&) {
       for (auto& e : ev) e.time_ns = 0;
     }},
    {"times at 1 ms resolution (header) instead of the trace's",
     [](auto&, auto& h) { h.time_resolution_ns = 1'000'000; }},
    {"addresses all 0 (no address field; frees then name no alloc)",
     [](auto& ev, auto&) {
       for (auto& e : ev) e.address = 0;
     }},
    {"addresses bump-allocated (a fresh block 64 B past the last; frees name their alloc's)",
     [](auto& ev, auto&) { ev = bump_addresses(std::move(ev)); }},
    {"address model off (as when the drain is behind: MEMTRAIL_ADDRESS_MODEL=auto)",
     [](auto&, auto&) {}, false},
    {"sizes all 64 (frees' sizes 64 where set)",
     [](auto& ev, auto&) {
       for (auto& e : ev) {
         if (is_alloc(e)) e.size = e.requested = 64;
         if (e.kind == EventKind::free && e.size != 0) e.size = 64;
       }
     }},
    {"stack ids all one (the first event's)",
     [](auto& ev, auto&) {
       std::uint32_t one = 0;
       for (auto& e : ev)
         if (e.stack != 0) {
           if (one == 0) one = e.stack;
           e.stack = one;
         }
     }},
    {"threads all one (the first event's; cross-thread frees still name their alloc)",
     [](auto& ev, auto&) {
       for (auto& e : ev) e.thread = ev.front().thread;
     }},
    {"frees dropped",
     [](auto& ev, auto&) {
       std::erase_if(ev, [](const Event& e) { return e.kind == EventKind::free; });
     }},
};

void reencodes(const Trace& t, const std::vector<Frame>& frames) {
  const double n = static_cast<double>(t.events.size());
  std::uint64_t plain = reencode(t, &t.events, t.header);
  std::uint64_t tables = reencode(t, nullptr, t.header);
  std::vector<std::size_t> cuts;
  std::size_t seen = 0;
  for (const auto& f : frames)
    if (f.type == fmt::kChunkData) cuts.push_back(seen += f.events);
  std::uint64_t cut_on = reencode(t, &t.events, t.header, true, cuts);
  std::uint64_t cut_off = reencode(t, &t.events, t.header, false, cuts);
  std::printf(
      "\n2. Re-encoded by TraceWriter (address model on, chunks of 1 MiB raw): %.3f "
      "B/event; tables alone, no events: %.3f; at the file's chunk ends: %.3f with the "
      "address model, %.3f without\n",
      plain / n, tables / n, cut_on / n, cut_off / n);
  std::printf("(%zu table records: %.1f bytes each, alone)\n", t.records.size(),
              t.records.empty() ? 0.0 : static_cast<double>(tables) / t.records.size());
  std::printf("| variant | B/event | drop, B/event |\n|---|---|---|\n");
  for (const auto& v : kVariants) {
    std::vector<Event> ev = t.events;
    memtrail::TraceHeader h = t.header;
    v.change(ev, h);
    std::uint64_t b = reencode(t, &ev, h, v.address_model);
    std::printf("| %s | %.3f | %.3f |\n", v.name, b / n, (static_cast<double>(plain) - b) / n);
  }
}

// ---- 3. stack node records: the layout as written beside others --------

void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>(v | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}

// zstd level 1 over `raw` in 1 MiB pieces (the writer's chunk target).
std::size_t zstd_pieces(const std::string& raw) {
  std::size_t n = 0;
  for (std::size_t at = 0; at < raw.size(); at += fmt::kTargetRawChunk)
    n += zstd_size(raw.substr(at, fmt::kTargetRawChunk));
  return n;
}

// What the trace's stack node records cost alone, compressed, in the
// layout as written (tag, id, parent, ip: record_layout.hpp kStackNode) and
// in three others a format change could choose: ids as deltas (most are
// the previous id + 1, most parents a recent id), then the ip as a delta
// from the parent's ip, then ips interned (a repeated ip is its rank).
void stack_node_layouts(const Trace& t) {
  std::vector<memtrail::StackNode> nodes;
  for (const auto& [at, r] : t.records)
    if (const auto* n = std::get_if<memtrail::StackNode>(&r)) nodes.push_back(*n);
  if (nodes.empty()) return;
  std::string written, deltas, ip_delta, interned;
  std::unordered_map<std::uint32_t, std::uint64_t> ip_of;
  std::unordered_map<std::uint64_t, std::uint32_t> ip_rank;
  std::uint32_t prev = 0;
  for (const auto& n : nodes) {
    written += static_cast<char>(fmt::kRecordBit | fmt::kTagStackNode);
    put_varint(written, n.id);
    put_varint(written, n.parent);
    put_varint(written, n.ip);
    std::string ids;
    ids += static_cast<char>(fmt::kRecordBit | fmt::kTagStackNode);
    put_varint(ids, zigzag(static_cast<std::int64_t>(n.id) - prev));
    put_varint(ids, zigzag(static_cast<std::int64_t>(n.id) - n.parent));
    deltas += ids;
    put_varint(deltas, n.ip);
    ip_delta += ids;
    auto parent_ip = ip_of.find(n.parent);
    put_varint(ip_delta, zigzag(static_cast<std::int64_t>(
                             n.ip - (parent_ip != ip_of.end() ? parent_ip->second : 0))));
    interned += ids;
    auto [rank, fresh] = ip_rank.try_emplace(n.ip, static_cast<std::uint32_t>(ip_rank.size()));
    put_varint(interned, fresh ? 0 : rank->second + 1);
    if (fresh) put_varint(interned, n.ip);
    ip_of[n.id] = n.ip;
    prev = n.id;
  }
  const double k = static_cast<double>(nodes.size());
  std::printf(
      "\n3. %zu stack node records (%zu distinct ips), alone, compressed in 1 MiB "
      "pieces, bytes per node:\n",
      nodes.size(), ip_rank.size());
  std::printf("| layout | raw | compressed |\n|---|---|---|\n");
  for (auto [name, raw] : {std::pair{"as written (id, parent, ip)", &written},
                           std::pair{"id and parent as deltas, ip as written", &deltas},
                           std::pair{"id and parent as deltas, ip from the parent's", &ip_delta},
                           std::pair{"id and parent as deltas, ips interned", &interned}})
    std::printf("| %s | %.2f | %.2f |\n", name, raw->size() / k, zstd_pieces(*raw) / k);
}

// `--rewrite IN OUT`: IN's records and events written again by this build's
// TraceWriter (a format change's old-vs-new `report --json` check).
int rewrite(const char* in, const char* out) {
  Trace t;
  memtrail::TraceReader reader(in);
  auto result = reader.read(t);
  if (!result.ok) {
    std::fprintf(stderr, "%s: %s\n", in, result.error.c_str());
    return 1;
  }
  memtrail::TraceWriter w(out, t.header);
  std::size_t r = 0;
  for (std::size_t i = 0; i <= t.events.size(); ++i) {
    while (r < t.records.size() && (t.records[r].first <= i || i == t.events.size()))
      add_record(w, t.records[r++].second);
    if (i < t.events.size()) w.add_event(t.events[i]);
  }
  w.finish();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--rewrite") return rewrite(argv[2], argv[3]);
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s TRACE.mtr | --rewrite IN.mtr OUT.mtr\n", argv[0]);
    return 2;
  }
  Trace t;
  memtrail::TraceReader reader(argv[1]);
  auto result = reader.read(t);
  if (!result.ok || t.events.empty()) {
    std::fprintf(stderr, "%s: %s\n", argv[1], result.ok ? "no events" : result.error.c_str());
    return 1;
  }
  std::size_t file_bytes = 0;
  auto frames = read_frames(argv[1], file_bytes);
  const double n = static_cast<double>(t.events.size());
  std::printf("%s: %zu events, %zu bytes, %.3f B/event; time resolution %u ns\n", argv[1],
              t.events.size(), file_bytes, file_bytes / n, t.header.time_resolution_ns);
  attribute_streams(frames, n);
  reencodes(t, frames);
  stack_node_layouts(t);
  return 0;
}
