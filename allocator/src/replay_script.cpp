// Parser of replay scripts (syntax in replay.hpp). Liveness of names is
// checked here, as each line is read, so a replay never meets a dangling name.
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <optional>
#include <string_view>

#include "memtrail/alloc/replay.hpp"
#include "memtrail/size.hpp"

namespace memtrail::alloc {
namespace {

constexpr const char* kSyntax =
    "expected 'NAME = malloc SIZE [stream=N]', 'free NAME', 'record_stream NAME STREAM', "
    "'synchronize [STREAM]', 'empty_cache' or 'stats'";

// Whitespace-separated words of a line (views into it).
std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// Plain byte counts (the common case in generated scripts) skip parse_size.
std::optional<std::uint64_t> fast_size(std::string_view text) {
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc() && end == text.data() + text.size()) return value;
  return std::nullopt;
}

}  // namespace

ReplayScriptReader::ReplayScriptReader(std::istream& in, std::string source)
    : in_(in), source_(std::move(source)) {}

ReplayError ReplayScriptReader::fail(const std::string& why) const {
  return ReplayError(source_ + ":" + std::to_string(number_) + ": " + why);
}

// One line into line_, at most kMaxScriptLine bytes: a binary file without
// newlines must not be read into memory whole.
bool ReplayScriptReader::read_line() {
  line_.clear();
  std::streambuf* buf = in_.rdbuf();
  int c = buf->sbumpc();
  if (c == std::char_traits<char>::eof()) return false;
  ++number_;
  for (; c != std::char_traits<char>::eof() && c != '\n'; c = buf->sbumpc()) {
    if (c == '\0') throw fail("a NUL byte: not a text replay script");
    if (line_.size() == kMaxScriptLine)
      throw fail("line longer than " + std::to_string(kMaxScriptLine) +
                 " bytes: not a replay script");
    line_.push_back(static_cast<char>(c));
  }
  return true;
}

StreamId ReplayScriptReader::stream_number(std::string_view text) const {
  auto n = fast_size(text);
  if (!n) throw fail("'" + std::string(text) + "' is not a stream number");
  return *n;
}

std::uint32_t ReplayScriptReader::live_slot(std::string_view view, const char* op) {
  const std::string name(view);
  auto it = slots_.find(name);
  if (it == slots_.end()) throw fail(std::string(op) + " of unknown name '" + name + "'");
  if (!live_[it->second])
    throw fail(std::string(op) + " of '" + name + "', which was already freed");
  return it->second;
}

void ReplayScriptReader::parse_malloc(const std::vector<std::string_view>& w, ReplayOp& op) {
  if (w[2] != "malloc")
    throw fail("unknown operation '" + std::string(w[2]) + "' after '='; " + kSyntax);
  const std::string name(w[0]);
  std::string size_text;
  for (std::size_t i = 3; i < w.size(); ++i) {
    if (w[i].substr(0, 7) == "stream=") {
      op.stream = stream_number(w[i].substr(7));
    } else {
      if (!size_text.empty()) size_text += ' ';
      size_text += w[i];
    }
  }
  if (size_text.empty()) throw fail("malloc needs a size");
  std::string error;
  auto size = fast_size(size_text);
  if (!size) size = parse_size(size_text, &error);
  if (!size) throw fail("bad size " + error);
  // Checked here, not in the pools, so the error names the line at once.
  if (*size > kMaxRequestBytes)
    throw fail("size " + std::to_string(*size) + " bytes is more than any request can be (" +
               std::to_string(kMaxRequestBytes) + " bytes: PyTorch and XLA sizes are int64)");
  auto [it, inserted] = slots_.emplace(name, static_cast<std::uint32_t>(names_.size()));
  if (inserted) {
    names_.push_back(name);
    live_.push_back(false);
  } else if (live_[it->second]) {
    throw fail("'" + name + "' is still live; free it before binding it again");
  }
  live_[it->second] = true;
  op.kind = ReplayOp::Kind::malloc;
  op.slot = it->second;
  op.size = *size;
}

bool ReplayScriptReader::next(ReplayOp& op) {
  while (read_line()) {
    if (auto hash = line_.find('#'); hash != std::string::npos) line_.resize(hash);
    std::vector<std::string_view> w = split(line_);
    if (w.empty()) continue;
    op = ReplayOp{};
    op.line = number_;
    if (w.size() >= 3 && w[1] == "=") {
      parse_malloc(w, op);
    } else if (w[0] == "free") {
      if (w.size() != 2) throw fail("'free' takes one name");
      op.kind = ReplayOp::Kind::free;
      op.slot = live_slot(w[1], "free");
      live_[op.slot] = false;
    } else if (w[0] == "record_stream") {
      if (w.size() != 3) throw fail("'record_stream' takes a name and a stream");
      op.kind = ReplayOp::Kind::record_stream;
      op.slot = live_slot(w[1], "record_stream");
      op.stream = stream_number(w[2]);
    } else if (w[0] == "synchronize") {
      if (w.size() > 2) throw fail("'synchronize' takes at most one stream");
      op.kind = ReplayOp::Kind::synchronize;
      op.all_streams = w.size() == 1;
      if (w.size() == 2) op.stream = stream_number(w[1]);
    } else if (w[0] == "empty_cache" && w.size() == 1) {
      op.kind = ReplayOp::Kind::empty_cache;
    } else if (w[0] == "stats" && w.size() == 1) {
      op.kind = ReplayOp::Kind::stats;
    } else {
      std::string text = line_.substr(line_.find_first_not_of(" \t"));
      if (text.size() > 60) text = text.substr(0, 57) + "...";
      throw fail("unknown operation '" + text + "'; " + kSyntax);
    }
    return true;
  }
  return false;
}

ReplayScript ReplayScript::parse(std::istream& in, const std::string& source) {
  ReplayScript script;
  script.source = source;
  ReplayScriptReader reader(in, source);
  for (ReplayOp op; reader.next(op);) script.ops.push_back(op);
  script.names = reader.names();
  return script;
}

ReplayScript ReplayScript::parse_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ReplayError(path + ": cannot open replay script: " + std::strerror(errno));
  return parse(in, path);
}

}  // namespace memtrail::alloc
