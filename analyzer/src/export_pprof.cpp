// pprof profile.proto, written directly in protobuf wire format (a dozen
// fields do not justify a protobuf dependency), gzip-compressed with zlib.
// Field numbers follow github.com/google/pprof/proto/profile.proto.
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <unordered_map>

#include "memtrail/export.hpp"

namespace memtrail {

namespace {

class ProtoWriter {
 public:
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      buf_.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    buf_.push_back(static_cast<char>(v));
  }
  void tag(int field, int wire) { varint(static_cast<std::uint64_t>(field) << 3 | wire); }
  void uint(int field, std::uint64_t v) {
    if (v == 0) return;  // proto3 default
    tag(field, 0);
    varint(v);
  }
  void boolean(int field, bool v) { uint(field, v ? 1 : 0); }
  void bytes(int field, const std::string& s) {
    tag(field, 2);
    varint(s.size());
    buf_ += s;
  }
  void message(int field, const ProtoWriter& m) { bytes(field, m.buf_); }
  void packed(int field, const std::vector<std::uint64_t>& values) {
    if (values.empty()) return;
    ProtoWriter inner;
    for (auto v : values) inner.varint(v);
    bytes(field, inner.buf_);
  }
  const std::string& data() const { return buf_; }

 private:
  std::string buf_;
};

class StringTable {
 public:
  StringTable() { id(""); }  // index 0 must be ""
  std::uint64_t id(const std::string& s) {
    auto [it, fresh] = index_.try_emplace(s, strings_.size());
    if (fresh) strings_.push_back(s);
    return it->second;
  }
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::unordered_map<std::string, std::uint64_t> index_;
  std::vector<std::string> strings_;
};

}  // namespace

std::string pprof_profile_bytes(const Analysis& a) {
  StringTable strings;
  ProtoWriter profile;
  const char* types[4][2] = {{"alloc_objects", "count"},
                             {"alloc_space", "bytes"},
                             {"inuse_objects", "count"},
                             {"inuse_space", "bytes"}};
  for (auto& t : types) {
    ProtoWriter vt;
    vt.uint(1, strings.id(t[0]));
    vt.uint(2, strings.id(t[1]));
    profile.message(1, vt);
  }

  std::map<std::string, std::uint64_t> mapping_of_module;
  std::vector<ProtoWriter> mappings;
  for (const ModuleInfo& m : a.modules) {
    if (mapping_of_module.count(m.path)) continue;
    std::uint64_t id = mappings.size() + 1;
    mapping_of_module[m.path] = id;
    ProtoWriter mp;
    mp.uint(1, id);
    mp.uint(2, m.start);
    mp.uint(3, m.end);
    mp.uint(4, m.start >= m.load_address ? m.start - m.load_address : 0);
    mp.uint(5, strings.id(m.path));
    mp.uint(6, strings.id(m.build_id));
    mp.boolean(7, a.options.symbolize);
    mp.boolean(8, a.options.symbolize);
    mp.boolean(9, a.options.symbolize);
    mp.boolean(10, a.options.symbolize);
    mappings.push_back(std::move(mp));
  }

  std::map<std::pair<std::string, std::string>, std::uint64_t> function_ids;
  std::vector<ProtoWriter> functions;
  auto function_id = [&](const Frame& f) {
    std::string name = f.function.empty() ? f.describe() : f.function;
    auto [it, fresh] = function_ids.try_emplace({name, f.file}, functions.size() + 1);
    if (fresh) {
      ProtoWriter fn;
      fn.uint(1, it->second);
      fn.uint(2, strings.id(name));
      fn.uint(3, strings.id(name));
      fn.uint(4, strings.id(f.file));
      functions.push_back(std::move(fn));
    }
    return it->second;
  };

  // One location per instruction address; its lines are the inlined chain,
  // innermost first and the out-of-line function last, as pprof expects.
  std::unordered_map<std::uint64_t, std::uint64_t> location_ids;
  std::vector<ProtoWriter> locations;
  std::vector<ProtoWriter> samples;
  for (const Site& s : a.sites) {
    if (s.calls == 0 && s.live_at_range_end.blocks == 0) continue;
    if (const PoolStats* p = a.pool(s.pool); p && p->upstream) continue;  // leaf pools only
    std::vector<std::uint64_t> loc_ids;
    std::size_t i = 0;
    while (i < s.frames.size()) {
      std::size_t j = i;
      while (j + 1 < s.frames.size() && s.frames[j].inlined)
        ++j;  // group ends at the real function
      const Frame& outer = s.frames[j];
      auto [it, fresh] = location_ids.try_emplace(outer.address, locations.size() + 1);
      if (fresh) {
        ProtoWriter loc;
        loc.uint(1, it->second);
        auto m = mapping_of_module.find(outer.module);
        if (m != mapping_of_module.end()) loc.uint(2, m->second);
        loc.uint(3, outer.address);
        for (std::size_t k = i; k <= j; ++k) {
          ProtoWriter line;
          line.uint(1, function_id(s.frames[k]));
          line.uint(2, s.frames[k].line);
          loc.message(4, line);
        }
        locations.push_back(std::move(loc));
      }
      loc_ids.push_back(it->second);
      i = j + 1;
    }
    ProtoWriter sample;
    sample.packed(1, loc_ids);
    sample.packed(
        2, {s.calls, s.bytes_allocated, s.live_at_range_end.blocks, s.live_at_range_end.bytes});
    samples.push_back(std::move(sample));
  }

  for (auto& s : samples) profile.message(2, s);
  for (auto& m : mappings) profile.message(3, m);
  for (auto& l : locations) profile.message(4, l);
  for (auto& f : functions) profile.message(5, f);
  std::uint64_t comment = strings.id("memtrail: " + a.path);
  std::uint64_t default_type = strings.id("inuse_space");
  profile.uint(9, a.header.start_realtime_ns);
  profile.uint(10, a.summary.duration_ns);
  profile.uint(13, comment);
  profile.uint(14, default_type);
  for (const auto& s : strings.strings()) profile.bytes(6, s);
  return profile.data();
}

std::string write_pprof(const Analysis& a, const std::string& path) {
  std::string raw = pprof_profile_bytes(a);
  z_stream z{};
  if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return "zlib: cannot initialize gzip compression";
  std::string gz(deflateBound(&z, raw.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(raw.data());
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(gz.data());
  z.avail_out = static_cast<uInt>(gz.size());
  int rc = deflate(&z, Z_FINISH);
  gz.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return "zlib: gzip compression failed";
  std::FILE* f = path == "-" ? stdout : std::fopen(path.c_str(), "wb");
  if (!f) return path + ": cannot create (" + std::string(std::strerror(errno)) + ")";
  bool ok = std::fwrite(gz.data(), 1, gz.size(), f) == gz.size();
  ok = (f == stdout ? std::fflush(f) == 0 : std::fclose(f) == 0) && ok;
  return ok ? std::string() : path + ": write failed";
}

}  // namespace memtrail
