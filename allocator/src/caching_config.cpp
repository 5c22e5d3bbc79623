// Parser for PYTORCH_CUDA_ALLOC_CONF-style strings, following
// c10/core/AllocatorConfig.cpp: the string is cut into tokens at , : [ ]
// (spaces dropped) and read key by key.
#include "memtrail/alloc/caching_config.hpp"

#include <bit>
#include <cerrno>
#include <cstdlib>
#include <vector>

namespace memtrail::alloc {
namespace {

constexpr std::uint64_t kMB = 1ull << 20;

std::vector<std::string> tokenize(std::string_view text) {
  std::vector<std::string> tokens;
  std::string buf;
  for (char ch : text) {
    if (ch == ',' || ch == ':' || ch == '[' || ch == ']') {
      if (!buf.empty()) tokens.push_back(std::move(buf)), buf.clear();
      tokens.emplace_back(1, ch);
    } else if (ch != ' ') {
      buf += ch;
    }
  }
  if (!buf.empty()) tokens.push_back(std::move(buf));
  return tokens;
}

class Reader {
 public:
  explicit Reader(std::vector<std::string> tokens) : t_(std::move(tokens)) {}
  bool done() const { return i_ >= t_.size(); }
  const std::string& peek() const {
    static const std::string kEnd;
    return i_ < t_.size() ? t_[i_] : kEnd;
  }
  std::string next(const std::string& key, const char* what) {
    if (done()) throw ConfigError(key + ": expected " + what + " but the string ended");
    return t_[i_++];
  }
  void expect(const std::string& key, const char* token) {
    const std::string quoted = std::string("'") + token + "'";
    std::string got = next(key, quoted.c_str());
    if (got != token) throw ConfigError(key + ": expected '" + token + "' but found '" + got + "'");
  }

 private:
  std::vector<std::string> t_;
  std::size_t i_ = 0;
};

std::uint64_t to_uint(const std::string& key, const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    throw ConfigError(key + ": '" + text + "' is not a non-negative integer");
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE) throw ConfigError(key + ": '" + text + "' is too large");
  return v;
}

double to_double(const std::string& key, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE)
    throw ConfigError(key + ": '" + text + "' is not a number");
  return v;
}

bool to_bool(const std::string& key, const std::string& text) {
  if (text == "True" || text == "true") return true;
  if (text == "False" || text == "false") return false;
  throw ConfigError(key + ": expected True or False, found '" + text + "'");
}

std::uint64_t parse_mb_at_least_20(const std::string& key, const std::string& text) {
  std::uint64_t mb = to_uint(key, text);
  if (mb < 20) throw ConfigError(key + ": " + text + " is too small, it must be at least 20 (MB)");
  if (mb > UINT64_MAX / kMB) return UINT64_MAX;
  return mb * kMB;
}

std::size_t interval_index(std::uint64_t power_of_two) {
  std::size_t index = static_cast<std::size_t>(std::bit_width(power_of_two) - 1);
  return std::min(index, CachingConfig::kRoundupIntervals - 1);
}

void parse_roundup(Reader& r, CachingConfig& c) {
  const std::string key = "roundup_power2_divisions";
  if (r.peek() != "[") {
    std::uint64_t d = to_uint(key, r.next(key, "a number of divisions"));
    if (!std::has_single_bit(d))
      throw ConfigError(key + ": " + std::to_string(d) + " divisions is not a power of 2");
    c.roundup_power2_divisions.fill(d);
    return;
  }
  r.expect(key, "[");
  bool first = true;
  std::size_t last_index = 0;
  while (r.peek() != "]") {
    std::string interval = r.next(key, "an interval such as 256 or >");
    r.expect(key, ":");
    std::uint64_t d = to_uint(key, r.next(key, "a number of divisions"));
    if (d != 0 && !std::has_single_bit(d))
      throw ConfigError(key + ": " + std::to_string(d) +
                        " divisions is not a power of 2 (or 0 to disable)");
    if (interval == ">") {
      // As coded in c10: fills from the last listed interval, inclusive.
      for (std::size_t i = last_index; i < c.roundup_power2_divisions.size(); ++i)
        c.roundup_power2_divisions[i] = d;
    } else {
      std::uint64_t mb = to_uint(key, interval);
      if (!std::has_single_bit(mb))
        throw ConfigError(key + ": interval " + interval + " (MB) is not a power of 2");
      std::size_t index = interval_index(mb);
      if (first) {
        for (std::size_t i = 0; i < index; ++i) c.roundup_power2_divisions[i] = d;
        first = false;
      }
      c.roundup_power2_divisions[index] = d;
      last_index = index;
    }
    if (r.peek() != "]") r.expect(key, ",");
  }
  r.expect(key, "]");
}

}  // namespace

CachingConfig CachingConfig::parse(std::string_view text) {
  CachingConfig c;
  c.text = std::string(text);
  Reader r(tokenize(text));
  while (!r.done()) {
    std::string key = r.next("config", "a key");
    if (key == ",") continue;
    r.expect(key, ":");
    if (key == "max_split_size_mb") {
      c.max_split_size = parse_mb_at_least_20(key, r.next(key, "a size in MB"));
    } else if (key == "max_non_split_rounding_mb") {
      c.max_non_split_rounding = parse_mb_at_least_20(key, r.next(key, "a size in MB"));
    } else if (key == "roundup_power2_divisions") {
      parse_roundup(r, c);
    } else if (key == "garbage_collection_threshold") {
      std::string v = r.next(key, "a number in (0, 1)");
      double t = to_double(key, v);
      if (!(t > 0.0 && t < 1.0))
        throw ConfigError(key + ": " + v + " is out of range, it must be in (0.0, 1.0)");
      c.garbage_collection_threshold = t;
    } else if (key == "expandable_segments") {
      c.expandable_segments = to_bool(key, r.next(key, "True or False"));
    } else if (key == "backend") {
      std::string v = r.next(key, "native or cudaMallocAsync");
      if (v == "cudaMallocAsync")
        throw ConfigError("backend: cudaMallocAsync is not modelled by memtrail's CachingPool");
      if (v != "native")
        throw ConfigError("backend: expected native or cudaMallocAsync, found '" + v + "'");
    } else if (key == "release_lock_on_cudamalloc") {
      c.release_lock_on_cudamalloc = to_bool(key, r.next(key, "True or False"));
    } else if (key == "pinned_use_cuda_host_register") {
      c.pinned_use_cuda_host_register = to_bool(key, r.next(key, "True or False"));
    } else if (key == "pinned_num_register_threads") {
      std::uint64_t n = to_uint(key, r.next(key, "a thread count"));
      if (!std::has_single_bit(n) || n > 128)
        throw ConfigError(key + ": " + std::to_string(n) +
                          " must be a power of 2 between 1 and 128");
      c.pinned_num_register_threads = n;
    } else if (key == "pinned_use_background_threads") {
      c.pinned_use_background_threads = to_bool(key, r.next(key, "True or False"));
    } else if (key == "pinned_reserve_segment_size_mb") {
      c.pinned_reserve_segment_size_mb = to_uint(key, r.next(key, "a size in MB"));
    } else if (key == "graph_capture_record_stream_reuse") {
      c.graph_capture_record_stream_reuse = to_bool(key, r.next(key, "True or False"));
    } else {
      throw ConfigError("unknown key '" + key + "'");
    }
    if (!r.done()) r.expect(key, ",");
  }
  return c;
}

CachingConfig CachingConfig::from_environment() {
  const char* text = std::getenv("MEMTRAIL_POOL_CONF");
  if (!text) return CachingConfig{};
  try {
    return parse(text);
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("MEMTRAIL_POOL_CONF: ") + e.what());
  }
}

std::uint64_t CachingConfig::divisions_for(std::uint64_t size) const {
  // c10: index = floor(log2(size)) - 20, clamped to [0, 15].
  int log_size = size ? std::bit_width(size) - 1 : 0;
  int index = std::max(0, log_size - 20);
  index = std::min(index, static_cast<int>(kRoundupIntervals) - 1);
  return roundup_power2_divisions[static_cast<std::size_t>(index)];
}

}  // namespace memtrail::alloc
