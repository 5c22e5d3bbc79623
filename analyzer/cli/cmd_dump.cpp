// memtrail dump FILE: the trace as text, one header/table record/event per
// line, in file order, for debugging the format and for quick greps.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <unordered_map>

#include "commands.hpp"
#include "memtrail/trace_file.hpp"
#include "run_input.hpp"

namespace memtrail::cli {

namespace {

// A mark's kind as dump prints it: the kinds of c_api.h and the recorder's
// own, by name (the enum's values are not in order of addition); a user's
// mark says nothing.
const char* mark_kind_text(MarkDetail detail) {
  switch (detail) {
    case MarkDetail::user:
      return "";
    case MarkDetail::signal:
      return " kind=signal";
    case MarkDetail::attach:
      return " kind=attach";
    case MarkDetail::lost:
      return " kind=lost";
    case MarkDetail::iteration_begin:
      return " kind=iteration_begin";
    case MarkDetail::iteration_end:
      return " kind=iteration_end";
    case MarkDetail::pause:
      return " kind=pause";
    case MarkDetail::resume:
      return " kind=resume";
    case MarkDetail::exec:
      return " kind=exec";
    case MarkDetail::inherited:
      return " kind=inherited";
  }
  return " kind=?";
}

constexpr const char* kUsage =
    "usage: memtrail dump [--limit N] [--no-tables] [--pid N | --program NAME] TRACE\n"
    "\n"
    "Prints the trace as text, one line per header, table record and event:\n"
    "  TIME_NS t<THREAD> KIND pool=P addr=0x.. size=N requested=N stack=S [kind fields]\n"
    "and a final '# N events ...' line. Exit status 2 on unreadable input.\n"
    "\n"
    "  --limit N     stop after N events\n"
    "  --no-tables   print events only (no header or table records)\n"
    "TRACE is a .mtr file or a run directory of one process (or narrowed to one\n"
    "by --pid N / --program NAME).\n";

// Quoted, with control and non-ASCII bytes escaped, so every record is one line.
std::string quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

class Dumper : public TraceVisitor {
 public:
  Dumper(std::FILE* out, bool tables, std::uint64_t limit)
      : out_(out), tables_(tables), limit_(limit) {}

  void on_header(const TraceHeader& h) override {
    if (!tables_) return;
    std::fprintf(out_,
                 "header version=%u pid=%u ppid=%u start_realtime_ns=%" PRIu64
                 " start_monotonic_ns=%" PRIu64 " clock=%u command=%s executable=%s host=%s\n",
                 h.version, h.pid, h.ppid, h.start_realtime_ns, h.start_monotonic_ns, h.clock_id,
                 quote(h.command_line).c_str(), quote(h.executable).c_str(),
                 quote(h.hostname).c_str());
  }
  void on_string(std::uint32_t id, std::string_view text) override {
    strings_[id] = std::string(text);
    ++counts_.strings;
    if (tables_) std::fprintf(out_, "string %u %s\n", id, quote(text).c_str());
  }
  void on_module(const ModuleInfo& m) override {
    ++counts_.modules;
    if (tables_)
      std::fprintf(out_,
                   "module %u path=%s load=0x%" PRIx64 " start=0x%" PRIx64 " end=0x%" PRIx64
                   " build_id=%s\n",
                   m.id, quote(m.path).c_str(), m.load_address, m.start, m.end,
                   m.build_id.empty() ? "-" : m.build_id.c_str());
  }
  void on_thread(const ThreadInfo& t) override {
    ++counts_.threads;
    if (tables_)
      std::fprintf(out_, "thread %u tid=%" PRIu64 " name=%s\n", t.id, t.tid, quote(t.name).c_str());
  }
  void on_pool(const PoolInfo& p) override {
    ++counts_.pools;
    if (tables_)
      std::fprintf(out_, "pool %u parent=%u name=%s kind=%s space=%s device=%d\n", p.id, p.parent,
                   quote(p.name).c_str(), std::string(to_string(p.kind)).c_str(),
                   std::string(to_string(p.space)).c_str(), p.device);
  }
  void on_stack_node(const StackNode& n) override {
    ++counts_.stack_nodes;
    if (tables_) std::fprintf(out_, "stack %u parent=%u ip=0x%" PRIx64 "\n", n.id, n.parent, n.ip);
  }
  void on_scope(const ScopeInfo& s) override {
    ++counts_.scopes;
    if (tables_)
      std::fprintf(out_, "scope %u name=%s kind=%s pool=%u\n", s.id, quote(s.name).c_str(),
                   std::string(to_string(s.kind)).c_str(), s.pool);
  }
  void on_event(const Event& e) override;
  bool keep_going() override { return limit_ == 0 || counts_.events < limit_; }
  bool hit_limit() const { return limit_ != 0 && counts_.events >= limit_; }

  void summary(const ReadResult& r) const {
    std::fprintf(out_,
                 "# %" PRIu64 " events, %" PRIu64 " chunks, %" PRIu64 " strings, %" PRIu64
                 " modules, %" PRIu64 " threads, %" PRIu64 " pools, %" PRIu64
                 " stack nodes, %" PRIu64 " scopes; %s\n",
                 counts_.events, r.chunks, counts_.strings, counts_.modules, counts_.threads,
                 counts_.pools, counts_.stack_nodes, counts_.scopes,
                 !r.ok         ? "stopped by an error"
                 : hit_limit() ? "stopped at --limit"
                 : r.complete  ? "complete"
                               : "incomplete (no end marker)");
  }

 private:
  std::string text_of(std::uint64_t id) const {
    auto it = strings_.find(static_cast<std::uint32_t>(id));
    return it == strings_.end() ? std::string("\"\"") : quote(it->second);
  }

  std::FILE* out_;
  bool tables_;
  std::uint64_t limit_;
  std::unordered_map<std::uint32_t, std::string> strings_;
  struct {
    std::uint64_t events = 0, strings = 0, modules = 0, threads = 0, pools = 0, stack_nodes = 0,
                  scopes = 0;
  } counts_;
};

void Dumper::on_event(const Event& e) {
  ++counts_.events;
  std::fprintf(out_,
               "%" PRIu64 " t%u %s pool=%u addr=0x%" PRIx64 " size=%" PRIu64 " requested=%" PRIu64
               " stack=%u",
               e.time_ns, e.thread, std::string(to_string(e.kind)).c_str(), e.pool, e.address,
               e.size, e.requested, e.stack);
  switch (e.kind) {
    case EventKind::alloc:
    case EventKind::reuse:
      std::fprintf(out_, " fn=%s align=%" PRIu64,
                   std::string(to_string(static_cast<AllocFn>(e.detail))).c_str(), e.aux);
      break;
    case EventKind::free:
      std::fprintf(out_, " fn=%s", std::string(to_string(static_cast<AllocFn>(e.detail))).c_str());
      break;
    case EventKind::segment_reserve:
    case EventKind::segment_release:
      std::fprintf(out_, " segment=%s", e.detail == 1 ? "map" : "whole");
      break;
    case EventKind::scope_begin:
    case EventKind::scope_end:
    case EventKind::workspace_reset:
    case EventKind::workspace_learn:
    case EventKind::spill:
    case EventKind::donate:
      std::fprintf(out_, " scope=%" PRIu64, e.aux);
      break;
    case EventKind::donate_rejected:
      std::fprintf(out_, " reason=%s", text_of(e.aux).c_str());
      break;
    case EventKind::oom:
      std::fprintf(out_, " state=%s", text_of(e.aux).c_str());
      break;
    case EventKind::sample:
      std::fprintf(
          out_,
          " rss=%" PRIu64 " heap_used=%" PRIu64 " heap_reserved=%" PRIu64 " device_free=%" PRIu64,
          sample_rss(e), sample_heap_used(e), sample_heap_reserved(e), sample_device_free(e));
      break;
    case EventKind::mark: {
      std::fprintf(out_, " text=%s%s", text_of(e.aux).c_str(),
                   mark_kind_text(static_cast<MarkDetail>(e.detail)));
      break;
    }
    case EventKind::reachability:
      std::fprintf(out_, " class=%s",
                   std::string(to_string(static_cast<LeakClass>(e.detail))).c_str());
      break;
  }
  std::fputc('\n', out_);
}

}  // namespace

int cmd_dump(int argc, char** argv) {
  std::string path;
  ProcessSelection selection;
  bool tables = true;
  std::uint64_t limit = 0;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--no-tables") {
      tables = false;
    } else if (a == "--limit") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "memtrail dump: --limit needs a number\n");
        return 2;
      }
      char* end = nullptr;
      const char* v = argv[++i];
      limit = std::strtoull(v, &end, 10);
      if (end == v || *end != '\0' || v[0] == '-' || limit == 0) {
        std::fprintf(stderr, "memtrail dump: --limit '%s' is not a positive number\n", v);
        return 2;
      }
    } else if (a == "--pid" || a == "--program") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "memtrail dump: %s needs a value\n", argv[i]);
        return 2;
      }
      const char* v = argv[++i];
      if (a == "--program") {
        selection.program = v;
      } else {
        char* end = nullptr;
        unsigned long pid = std::strtoul(v, &end, 10);
        if (end == v || *end != '\0' || v[0] == '-' || pid > 0xffffffffu) {
          std::fprintf(stderr, "memtrail dump: --pid '%s' is not a pid\n", v);
          return 2;
        }
        selection.pid = static_cast<std::uint32_t>(pid);
      }
    } else if (a.size() > 1 && a[0] == '-') {
      std::fprintf(stderr, "memtrail dump: unknown option '%s' (try 'memtrail dump --help')\n",
                   argv[i]);
      return 2;
    } else if (!path.empty()) {
      std::fprintf(stderr, "memtrail dump: one trace file at a time ('%s' and '%s')\n",
                   path.c_str(), argv[i]);
      return 2;
    } else {
      path = argv[i];
    }
  }
  if (path.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  auto file = resolve_one_trace("dump", path, selection);
  if (!file) return 2;
  TraceReader reader(*file);
  if (!reader.header_error().empty()) {
    std::fprintf(stderr, "memtrail dump: %s\n", reader.header_error().c_str());
    return 2;
  }
  Dumper dumper(stdout, tables, limit);
  ReadResult r = reader.read(dumper);
  dumper.summary(r);
  std::fflush(stdout);
  if (!r.warning.empty()) std::fprintf(stderr, "memtrail dump: warning: %s\n", r.warning.c_str());
  if (!r.ok) {
    std::fprintf(stderr, "memtrail dump: %s\n", r.error.c_str());
    return 2;
  }
  return 0;
}

}  // namespace memtrail::cli
