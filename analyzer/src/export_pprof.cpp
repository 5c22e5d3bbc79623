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

// One profile: its tables fill as sites are added; bytes() writes it in
// profile.proto's field order, the string table last (ids are handed out
// in the order things are first named).
class ProfileBuilder {
 public:
  explicit ProfileBuilder(const Analysis& a) : a_(a) {}

  void add_sample_types() {
    const char* types[4][2] = {{"alloc_objects", "count"},
                               {"alloc_space", "bytes"},
                               {"inuse_objects", "count"},
                               {"inuse_space", "bytes"}};
    for (auto& t : types) {
      ProtoWriter vt;
      vt.uint(1, strings_.id(t[0]));
      vt.uint(2, strings_.id(t[1]));
      profile_.message(1, vt);
    }
  }

  // One mapping per module file.
  void add_mappings() {
    for (const ModuleInfo& m : a_.modules) {
      if (mapping_of_module_.count(m.path)) continue;
      std::uint64_t id = mappings_.size() + 1;
      mapping_of_module_[m.path] = id;
      ProtoWriter mp;
      mp.uint(1, id);
      mp.uint(2, m.start);
      mp.uint(3, m.end);
      mp.uint(4, m.start >= m.load_address ? m.start - m.load_address : 0);
      mp.uint(5, strings_.id(m.path));
      mp.uint(6, strings_.id(m.build_id));
      for (int field = 7; field <= 10; ++field) mp.boolean(field, a_.options.symbolize);
      mappings_.push_back(std::move(mp));
    }
  }

  // A site of a leaf pool that allocated in the range or holds blocks at its end.
  void add_site(const Site& s) {
    if (s.calls == 0 && s.live_at_range_end.blocks == 0) return;
    if (const PoolStats* p = a_.pool(s.pool); p && p->upstream) return;  // leaf pools only
    std::vector<std::uint64_t> loc_ids;
    std::size_t i = 0;
    while (i < s.frames.size()) {
      std::size_t j = i;
      while (j + 1 < s.frames.size() && s.frames[j].inlined)
        ++j;  // group ends at the real function
      loc_ids.push_back(location_id(s.frames, i, j));
      i = j + 1;
    }
    ProtoWriter sample;
    sample.packed(1, loc_ids);
    sample.packed(
        2, {s.calls, s.bytes_allocated, s.live_at_range_end.blocks, s.live_at_range_end.bytes});
    samples_.push_back(std::move(sample));
  }

  std::string bytes() {
    for (auto& s : samples_) profile_.message(2, s);
    for (auto& m : mappings_) profile_.message(3, m);
    for (auto& l : locations_) profile_.message(4, l);
    for (auto& f : functions_) profile_.message(5, f);
    std::uint64_t comment = strings_.id("memtrail: " + a_.path);
    std::uint64_t default_type = strings_.id("inuse_space");
    profile_.uint(9, a_.header.start_realtime_ns);
    profile_.uint(10, a_.summary.duration_ns);
    profile_.uint(13, comment);
    profile_.uint(14, default_type);
    for (const auto& s : strings_.strings()) profile_.bytes(6, s);
    return profile_.data();
  }

 private:
  std::uint64_t function_id(const Frame& f) {
    std::string name = f.function.empty() ? f.describe() : f.function;
    auto [it, fresh] = function_ids_.try_emplace({name, f.file}, functions_.size() + 1);
    if (fresh) {
      ProtoWriter fn;
      fn.uint(1, it->second);
      fn.uint(2, strings_.id(name));
      fn.uint(3, strings_.id(name));
      fn.uint(4, strings_.id(f.file));
      functions_.push_back(std::move(fn));
    }
    return it->second;
  }

  // One location per instruction address; its lines are the inlined chain
  // frames[i..j], innermost first and the out-of-line function last, as
  // pprof expects.
  std::uint64_t location_id(const FrameList& frames, std::size_t i, std::size_t j) {
    const Frame& outer = frames[j];
    auto [it, fresh] = location_ids_.try_emplace(outer.address, locations_.size() + 1);
    if (!fresh) return it->second;
    ProtoWriter loc;
    loc.uint(1, it->second);
    auto m = mapping_of_module_.find(outer.module);
    if (m != mapping_of_module_.end()) loc.uint(2, m->second);
    loc.uint(3, outer.address);
    for (std::size_t k = i; k <= j; ++k) {
      ProtoWriter line;
      line.uint(1, function_id(frames[k]));
      line.uint(2, frames[k].line);
      loc.message(4, line);
    }
    locations_.push_back(std::move(loc));
    return it->second;
  }

  const Analysis& a_;
  StringTable strings_;
  ProtoWriter profile_;
  std::map<std::string, std::uint64_t> mapping_of_module_;
  std::vector<ProtoWriter> mappings_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> function_ids_;
  std::vector<ProtoWriter> functions_;
  std::unordered_map<std::uint64_t, std::uint64_t> location_ids_;
  std::vector<ProtoWriter> locations_;
  std::vector<ProtoWriter> samples_;
};

}  // namespace

std::string pprof_profile_bytes(const Analysis& a) {
  ProfileBuilder profile(a);
  profile.add_sample_types();
  profile.add_mappings();
  for (const Site& s : a.sites) profile.add_site(s);
  return profile.bytes();
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
