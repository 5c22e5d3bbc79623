// The analysis pass (analysis_pass.hpp): read → finish → symbolize → group →
// heap reserved, once for the CLI and the GUI.
#include "analysis_pass.hpp"

#include <algorithm>
#include <memory>
#include <optional>

#include "engine.hpp"
#include "group_sites.hpp"
#include "heap_reserved.hpp"
#include "module_preloader.hpp"
#include "pipelined_read.hpp"
#include "symbolize_sites.hpp"
#include "trackers/trackers.hpp"

namespace memtrail::detail {

// Maps reader status onto Analysis::error / warning.
void apply_read_status(Analysis& a, const TraceReader& reader, const ReadResult& r,
                       bool allow_partial) {
  a.read = r;
  if (!reader.header_error().empty()) {
    a.error = reader.header_error();
    return;
  }
  ReadOutcome outcome = describe_read(a.path, r, "analyzed");
  if (outcome.damaged && !allow_partial)
    a.error = std::move(outcome.line);
  else if (!r.ok)
    a.warning = outcome.line + " (analyzed what was read before it)";
  else
    a.warning = std::move(outcome.line);
}

namespace {

bool report(const PassOptions& o, LoadStage stage, std::uint64_t done, std::uint64_t total) {
  return !o.progress || o.progress(stage, done, total);
}

// The reader over the visitor chain: the parallel decoders where asked,
// else the pipeline (with byte progress where there is a progress callback).
ReadResult read_events(TraceReader& reader, TraceVisitor& visitor, const PassOptions& o,
                       bool& stopped) {
  if (o.decoders > 0) return reader.read_parallel(visitor, o.decoders);
  if (!o.progress) return read_pipelined(reader, visitor);
  return read_pipelined(reader, visitor, [&](std::uint64_t bytes) {
    stopped = !report(o, LoadStage::reading, std::min(bytes, o.file_bytes), o.file_bytes);
    return !stopped;
  });
}

// How the read ended: `ended` where nothing more can run (a header error, a
// cancel from `progress`, or any failure under stop_on_error).
struct ReadEnd {
  PassFailure failure = PassFailure::none;
  bool ended = false;
};

using Trackers = std::vector<PassTracker*>;

// The event pass and Engine::finish. The Engine is gone on return, before
// symbolization needs the memory. `preopened`: the preloader's modules.
ReadEnd read_and_finish(TraceReader& reader, const PassOptions& o, const Trackers& trackers,
                        Analysis& a, std::vector<OpenedModule>& preopened) {
  const ReadEnd cancelled{PassFailure::cancelled, true};
  Engine engine(o.analysis, o.engine_progress);
  if (!reader.header_error().empty()) {
    apply_read_status(a, reader, reader.read(engine), o.analysis.allow_partial);
    return {PassFailure::header, true};
  }
  TraceVisitor* visitor = &engine;
  for (PassTracker* t : trackers) {
    t->attach(engine);
    visitor = &t->wrap(*visitor);
  }
  // The modules the stacks point into are opened beside the event pass.
  std::optional<ModulePreloader> preloader;
  if (o.preload_modules) visitor = &preloader.emplace(*visitor);
  if (!report(o, LoadStage::reading, 0, o.file_bytes)) return cancelled;
  bool stopped = false;
  ReadResult r = read_events(reader, *visitor, o, stopped);
  if (stopped) return cancelled;
  if (!report(o, LoadStage::reading, o.file_bytes, o.file_bytes) ||
      !report(o, LoadStage::finishing, 0, 0))
    return cancelled;
  apply_read_status(a, reader, r, o.analysis.allow_partial);
  PassFailure failure = PassFailure::none;
  if (!a.error.empty()) {
    failure = r.ok ? PassFailure::truncated : PassFailure::corrupt;
    if (o.stop_on_error) return {failure, true};
  }
  engine.finish(a);
  engine.block_trackers().finish(a);
  if (engine.cancelled()) {
    a.error = a.path + ": cancelled";
    failure = PassFailure::cancelled;
  } else if (failure == PassFailure::none && !a.error.empty()) {
    failure = PassFailure::mark_not_found;
  }
  a.header = reader.header();
  if (preloader) preopened = preloader->take();
  return {failure, failure != PassFailure::none && o.stop_on_error};
}

// Merges the sites by source unless group_by_address, and tells the trackers.
void group(Analysis& a, const PassOptions& o, const Trackers& trackers) {
  for (PassTracker* t : trackers) t->symbolized(a);
  if (o.analysis.group_by_address) {
    rebuild_leak_sites(a);
    for (PassTracker* t : trackers) t->grouped(a, nullptr);
    return;
  }
  const std::vector<std::uint32_t> merged = group_sites_by_source(a);
  for (PassTracker* t : trackers) t->grouped(a, &merged);
}

}  // namespace

PassFailure run_analysis_pass(TraceReader& reader, const std::string& path, const PassOptions& o,
                              Analysis& a) {
  a.path = path;
  a.options = o.analysis;
  // The pass's own metrics first: the caller's trackers see them done.
  const std::vector<std::unique_ptr<PassTracker>> own = standard_trackers(o.analysis);
  Trackers trackers;
  for (const auto& t : own) trackers.push_back(t.get());
  trackers.insert(trackers.end(), o.trackers.begin(), o.trackers.end());
  std::vector<OpenedModule> preopened;
  const ReadEnd read = read_and_finish(reader, o, trackers, a, preopened);
  if (read.ended) return read.failure;
  for (PassTracker* t : trackers) t->finished(a);
  if (!report(o, LoadStage::finishing, 1, 1)) return PassFailure::cancelled;

  const std::size_t sites = a.sites.size();
  if (!report(o, LoadStage::symbolizing, 0, sites)) return PassFailure::cancelled;
  std::function<bool(std::size_t)> symbol_progress;
  if (o.progress)
    symbol_progress = [&](std::size_t done) {
      return report(o, LoadStage::symbolizing, done, sites);
    };
  if (!symbolize_sites(a, o.analysis, symbol_progress, std::move(preopened)))
    return PassFailure::cancelled;
  group(a, o, trackers);
  // The malloc pool's reserved figures are the glibc samples'.
  take_heap_reserved_from_samples(a);
  if (!report(o, LoadStage::done, sites, sites)) return PassFailure::cancelled;
  return read.failure;
}

}  // namespace memtrail::detail
