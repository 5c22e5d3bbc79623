// Parser of replay scripts (syntax in replay.hpp). Liveness of names is
// checked here, statically, so a replay never meets a dangling name.
#include <charconv>
#include <fstream>
#include <optional>
#include <string_view>
#include <unordered_map>

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

ReplayScript ReplayScript::parse(std::istream& in, const std::string& source) {
  ReplayScript script;
  script.source = source;
  std::unordered_map<std::string, std::uint32_t> slots;
  std::vector<bool> live;
  std::string line;
  std::uint32_t number = 0;
  auto fail = [&](const std::string& why) -> ReplayError {
    return ReplayError(source + ":" + std::to_string(number) + ": " + why);
  };
  auto stream_number = [&](std::string_view text) -> StreamId {
    auto n = fast_size(text);
    if (!n) throw fail("'" + std::string(text) + "' is not a stream number");
    return *n;
  };
  auto live_slot = [&](std::string_view view, const char* op) {
    const std::string name(view);
    auto it = slots.find(name);
    if (it == slots.end()) throw fail(std::string(op) + " of unknown name '" + name + "'");
    if (!live[it->second])
      throw fail(std::string(op) + " of '" + name + "', which was already freed");
    return it->second;
  };
  while (std::getline(in, line)) {
    ++number;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::vector<std::string_view> w = split(line);
    if (w.empty()) continue;
    ReplayOp op;
    op.line = number;
    if (w.size() >= 3 && w[1] == "=") {
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
      auto [it, inserted] = slots.emplace(name, static_cast<std::uint32_t>(script.names.size()));
      if (inserted) {
        script.names.push_back(name);
        live.push_back(false);
      } else if (live[it->second]) {
        throw fail("'" + name + "' is still live; free it before binding it again");
      }
      live[it->second] = true;
      op.kind = ReplayOp::Kind::malloc;
      op.slot = it->second;
      op.size = *size;
    } else if (w[0] == "free") {
      if (w.size() != 2) throw fail("'free' takes one name");
      op.kind = ReplayOp::Kind::free;
      op.slot = live_slot(w[1], "free");
      live[op.slot] = false;
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
      throw fail("unknown operation '" + line.substr(line.find_first_not_of(" \t")) + "'; " +
                 kSyntax);
    }
    script.ops.push_back(op);
  }
  return script;
}

ReplayScript ReplayScript::parse_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ReplayError(path + ": cannot open replay script");
  return parse(in, path);
}

}  // namespace memtrail::alloc
