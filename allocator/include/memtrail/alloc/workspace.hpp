// Workspace: an ND4J-style workspace (Nd4jWorkspace) as a
// std::pmr::memory_resource over any Upstream. Cyclic work (a training
// loop) allocates from one buffer that is recycled at every cycle; the
// buffer's size is learned from the first cycles, so after learning the loop
// body makes no system allocations. The rules are ND4J's
// (reference/dl4j-workspaces-tfjs-tidy.md §1): 16-byte alignment rounding,
// FIRST_LOOP / OVER_TIME / NONE learning, STRICT / OVERALLOCATE,
// BLOCK_LEFT (scoped) or ENDOFBUFFER_REACHED (circular) reset, EXTERNAL /
// FAIL / REALLOCATE spills, RAM or MMAP (a temp file, unlinked on close)
// location, FULL / HOST_ONLY mirroring.
//
// Differences from ND4J, on purpose: no 1024-byte safety offset and no
// zero-fill of the buffer (C++ callers initialise what they use).
//
// Not thread-safe (ND4J's workspaces are per thread too); WorkspaceManager
// keeps one set per thread. Deallocation of a single buffer does nothing:
// memory comes back when the cycle ends.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "memtrail/alloc/resource.hpp"
#include "memtrail/alloc/workspace_config.hpp"
#include "memtrail/recorder.hpp"

namespace memtrail::alloc {
namespace detail {
class WorkspaceMmapFile;
}

struct WorkspaceStats {
  std::uint64_t current_size = 0;  // buffer bytes
  std::uint64_t initial_block_size = 0;
  std::uint64_t host_offset = 0;
  std::uint64_t spilled_bytes = 0;  // live external (spilled) bytes
  std::uint64_t pinned_bytes = 0;   // live pinned bytes (trimmed circular)
  std::uint64_t cycles = 0;         // closes so far
  std::uint64_t steps = 0;
  std::uint64_t learned_size = 0;      // buffer size learned (0 = not yet)
  std::uint64_t this_cycle_bytes = 0;  // bytes asked (rounded) this cycle
  std::uint64_t last_cycle_bytes = 0;
  std::uint64_t max_cycle_bytes = 0;
  std::uint64_t external_this_cycle = 0;  // spilled allocations this cycle
  std::uint64_t external_last_cycle = 0;  // ... in the last closed cycle
  std::uint64_t external_total = 0;       // over the workspace's life
  std::uint64_t pinned_count = 0;
  std::uint64_t mirror_bytes = 0;  // host mirror of a FULL device workspace
  std::uint64_t generation = 0;
};

class Workspace final : public Resource {
 public:
  static constexpr std::uint64_t kAlignmentBase = 16;

  // Throws ConfigError for an invalid configuration, LimitError /
  // OutOfMemoryError when an initialSize buffer cannot be had, and
  // std::runtime_error when the MMAP temp file cannot be created.
  Workspace(Upstream& upstream, WorkspaceConfiguration config, std::string id);
  ~Workspace() override;  // frees the buffer, spills and pinned memory; unlinks the MMAP file

  const std::string& id() const { return name(); }
  const WorkspaceConfiguration& config() const { return config_; }
  bool circular() const { return config_.policy_reset == ResetPolicy::ENDOFBUFFER_REACHED; }
  bool is_open() const { return open_; }
  std::uint64_t generation() const { return generation_; }
  WorkspaceStats stats() const;
  // The MMAP temp file while it exists ("" otherwise).
  const std::string& mmap_path() const { return mmap_path_; }
  void set_debug_mode(DebugMode mode) { debug_ = mode; }
  DebugMode debug_mode() const { return debug_; }

  // ND4J's alloc(): rounds to 16 bytes (or `alignment` if larger), bumps the
  // pointer, wraps (circular) or spills. Throws OutOfMemoryError
  // "Can't allocate memory: Workspace is full" under FAIL, LimitError when a
  // spill exceeds a limit. Never returns nullptr (a 0-byte request takes 16).
  void* alloc(std::size_t bytes, std::size_t alignment = kAlignmentBase) {
    // The common case inline (docs/BENCHMARKS.md, workspaces): a scoped
    // workspace, not tracing, no debug mode, a request that fits. Exactly
    // what alloc_slow() does then (the offset of a scoped workspace is
    // always a multiple of 16).
    const std::uint64_t req = (static_cast<std::uint64_t>(bytes) + 15) & ~std::uint64_t{15};
    if (alignment <= kAlignmentBase && bytes - 1 < current_size_ &&
        host_offset_ + req <= current_size_ && (host_offset_ & 15) == 0 &&
        debug_ != DebugMode::SPILL_EVERYTHING && !circular() && !tracing()) {
      void* p = buffer_ + host_offset_;
      host_offset_ += req;
      cycle_allocations_ += req;
      ++cycle_count_;
      return p;
    }
    return alloc_slow(bytes, alignment);
  }

  // Cycle boundaries (WorkspaceManager calls these; see Activation).
  void enter();  // notifyScopeEntered: new generation, BLOCK_LEFT resets
  void close();  // one cycle ends: learning, spill release, reset
  // Learn now from what was seen so far (ND4J's initializeWorkspace()).
  void initialize_workspace();
  // Ends tracking of the open scope for a scope-out (tagScope / borrow).
  std::uint32_t scope_id() const { return scope_id_; }

  Upstream& upstream_resource() const { return upstream_; }
  // Whether p lies in the buffer, a spill or a pinned allocation.
  bool owns(const void* p) const;

 protected:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override;
  void do_deallocate(void*, std::size_t, std::size_t) override {}

 private:
  struct Block {
    void* p;
    std::uint64_t bytes;
    std::uint64_t step;
  };
  void* alloc_slow(std::size_t bytes, std::size_t alignment);
  void* bump(std::uint64_t req, std::uint64_t alignment);
  void* spill(std::uint64_t req, std::uint64_t alignment, bool trimmer);
  bool fits(std::uint64_t req, std::uint64_t alignment) const;
  void reset_offsets();
  void free_spills();
  void free_old_pinned();
  void build_buffer(std::uint64_t size);
  void destroy_buffer();
  void* acquire_or_throw(Upstream& from, std::uint64_t bytes, const char* what);
  void trace_frees_of_cycle();

  Upstream& upstream_;
  WorkspaceConfiguration config_;
  DebugMode debug_ = DebugMode::DISABLED;
  std::uint32_t scope_id_ = 0;

  char* buffer_ = nullptr;
  void* mirror_ = nullptr;
  std::uint64_t current_size_ = 0, host_offset_ = 0, initial_block_size_ = 0;
  std::uint64_t cycle_allocations_ = 0, last_cycle_ = 0, max_cycle_ = 0;
  std::uint64_t cycle_count_ = 0, max_cycle_count_ = 0;  // allocations per cycle
  std::uint64_t cycles_ = 0, steps_ = 0, steps_number_ = 1, trimmed_step_ = 0;
  std::uint64_t generation_ = 0, learned_size_ = 0;
  std::uint64_t spilled_bytes_ = 0, pinned_bytes_ = 0;
  std::uint64_t external_this_ = 0, external_last_ = 0, external_total_ = 0;
  bool open_ = false, is_over_ = false, reset_planned_ = false, trimmed_ = false;
  std::vector<Block> external_, pinned_;
  // Buffer allocations of the current cycle, kept only while tracing so
  // their frees can be recorded when the cycle's memory is recycled.
  std::vector<Block> traced_live_;

  std::unique_ptr<detail::WorkspaceMmapFile> mmap_;
  std::string mmap_path_;
  std::unique_ptr<Upstream> host_only_;  // HOST_ONLY / mirror memory
};

}  // namespace memtrail::alloc
