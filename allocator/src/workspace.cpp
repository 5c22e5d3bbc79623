#include "memtrail/alloc/workspace.hpp"

#include <algorithm>

#include "memtrail/alloc/host_resources.hpp"
#include "memtrail/recorder.hpp"
#include "memtrail/size.hpp"
#include "workspace_mmap.hpp"

namespace memtrail::alloc {
namespace {

std::uint64_t round_up(std::uint64_t v, std::uint64_t a) {
  return (v + a - 1) / a * a;
}

void record_ws(EventKind kind, std::uint32_t pool, std::uint32_t scope, std::uint64_t size,
               const void* address = nullptr) {
  if (!tracing()) return;
  Event e;
  e.kind = kind;
  e.pool = pool;
  e.aux = scope;
  e.size = size;
  e.address = reinterpret_cast<std::uintptr_t>(address);
  record(e);
}

bool is_device(MemorySpace s) {
  return s == MemorySpace::device || s == MemorySpace::managed;
}

}  // namespace

Workspace::Workspace(Upstream& upstream, WorkspaceConfiguration config, std::string id)
    : Resource(
          std::move(id),
          config.policy_location == LocationPolicy::MMAP ? MemorySpace::mmap : upstream.space(),
          PoolKind::workspace, &upstream, upstream.device()),
      upstream_(upstream),
      config_(std::move(config)) {
  config_.validate();
  scope_id_ = register_scope(name(), ScopeKind::workspace, pool_id());
  if (circular() && config_.policy_allocation == AllocationPolicy::OVERALLOCATE)
    steps_number_ = static_cast<std::uint64_t>(config_.overallocation_limit + 1);
  if (config_.policy_mirroring == MirroringPolicy::HOST_ONLY || is_device(upstream.space()))
    host_only_ = std::make_unique<SystemHeapResource>(name() + " host");
  if (config_.initial_size == 0) return;
  std::uint64_t size = config_.initial_size;
  initial_block_size_ = size;
  if (config_.policy_allocation == AllocationPolicy::OVERALLOCATE &&
      config_.policy_location != LocationPolicy::MMAP) {
    size += static_cast<std::uint64_t>(static_cast<double>(size) * config_.overallocation_limit);
    is_over_ = true;
  }
  if (config_.max_size) size = std::min(size, config_.max_size);
  build_buffer(size);
}

Workspace::~Workspace() {
  trace_frees_of_cycle();
  free_spills();
  for (auto& b : pinned_) {
    record_free(pool_id(), b.p, b.bytes);
    upstream_.release_segment(b.p, b.bytes, kAlignmentBase);
  }
  destroy_buffer();
}

WorkspaceStats Workspace::stats() const {
  WorkspaceStats s;
  s.current_size = current_size_;
  s.initial_block_size = initial_block_size_;
  s.host_offset = host_offset_;
  s.spilled_bytes = spilled_bytes_;
  s.pinned_bytes = pinned_bytes_;
  s.cycles = cycles_;
  s.steps = steps_;
  s.learned_size = learned_size_;
  s.this_cycle_bytes = cycle_allocations_;
  s.last_cycle_bytes = last_cycle_;
  s.max_cycle_bytes = max_cycle_;
  s.external_this_cycle = external_this_;
  s.external_last_cycle = external_last_;
  s.external_total = external_total_;
  s.pinned_count = pinned_.size();
  s.mirror_bytes = mirror_ ? current_size_ : 0;
  s.generation = generation_;
  return s;
}

bool Workspace::owns(const void* p) const {
  const char* c = static_cast<const char*>(p);
  if (buffer_ && c >= buffer_ && c < buffer_ + current_size_) return true;
  auto in = [&](const std::vector<Block>& v) {
    return std::any_of(v.begin(), v.end(), [&](const Block& b) {
      return c >= static_cast<const char*>(b.p) && c < static_cast<const char*>(b.p) + b.bytes;
    });
  };
  return in(external_) || in(pinned_);
}

// --- allocation ---

void* Workspace::do_allocate(std::size_t bytes, std::size_t alignment) {
  MEMTRAIL_ALLOCATOR_ENTRY();
  return alloc(bytes, alignment);
}

bool Workspace::fits(std::uint64_t req, std::uint64_t alignment) const {
  return round_up(host_offset_, alignment) + req <= current_size_;
}

void* Workspace::alloc_slow(std::size_t bytes, std::size_t alignment) {
  MEMTRAIL_ALLOCATOR_ENTRY();
  const std::uint64_t align = std::max<std::uint64_t>(alignment, kAlignmentBase);
  if (bytes > kMaxRequestBytes)
    throw OutOfMemoryError("memtrail: workspace [" + name() + "]: request of " +
                           std::to_string(bytes) + " bytes is too large");
  const std::uint64_t req = round_up(std::max<std::uint64_t>(bytes, 1), align);
  // ND4J's trimmer: a circular cycle that outgrew its block pins its spills.
  const bool trimmer =
      circular() &&
      ((initial_block_size_ > 0 && req + cycle_allocations_ > initial_block_size_) || trimmed_);
  if (trimmer && !trimmed_ && config_.policy_spill == SpillPolicy::REALLOCATE) {
    trimmed_ = true;
    trimmed_step_ = steps_;
  }
  ++cycle_count_;
  const bool spill_all = debug_ == DebugMode::SPILL_EVERYTHING;
  if (!trimmer && !spill_all && fits(req, align)) return bump(req, align);
  if (circular() && current_size_ > 0 && !trimmer && !spill_all) {
    reset_offsets();  // wrap around
    reset_planned_ = true;
    if (fits(req, align)) return bump(req, align);
  }
  return spill(req, align, trimmer);
}

void* Workspace::bump(std::uint64_t req, std::uint64_t alignment) {
  const std::uint64_t start = round_up(host_offset_, alignment);
  cycle_allocations_ += req + (start - host_offset_);
  host_offset_ = start + req;
  void* p = buffer_ + start;
  if (tracing()) {
    record_reuse(pool_id(), p, req, req);
    traced_live_.push_back({p, req, 0});
  }
  return p;
}

void* Workspace::spill(std::uint64_t req, std::uint64_t alignment, bool trimmer) {
  if (config_.policy_spill == SpillPolicy::FAIL)
    throw OutOfMemoryError("memtrail: workspace [" + name() +
                           "]: Can't allocate memory: Workspace is full (request " +
                           std::to_string(req) + " bytes, buffer " + std::to_string(current_size_) +
                           ", offset " + std::to_string(host_offset_) + ", policySpill FAIL)");
  void* p = acquire_or_throw(upstream_, req, "spill");
  (void)alignment;  // upstream segments are at least 16-byte aligned
  cycle_allocations_ += req;
  if (trimmer) {
    pinned_.push_back({p, req, steps_});
    pinned_bytes_ += req;
  } else {
    external_.push_back({p, req, steps_});
    spilled_bytes_ += req;
    ++external_this_;
  }
  ++external_total_;
  if (tracing()) {
    record_alloc(pool_id(), p, req, req);
    record_ws(EventKind::spill, pool_id(), scope_id_, req, p);
  }
  return p;
}

void* Workspace::acquire_or_throw(Upstream& from, std::uint64_t bytes, const char* what) {
  UpstreamFailure why;
  void* p = from.allocate_segment(bytes, 64, &why);
  if (p) return p;
  const std::string kind = is_device(from.space()) ? "DEVICE" : "HOST";
  std::string message = "memtrail: workspace [" + name() + "]: Can't allocate [" + kind +
                        "] memory for its " + what + " of " + std::to_string(bytes) + " bytes";
  if (!why.message.empty()) message += ": " + why.message;
  if (why.refusal == Refusal::limit)
    throw LimitError(why.which, message, bytes, why.in_use, why.limit);
  throw OutOfMemoryError(message);
}

// --- buffer ---

void Workspace::build_buffer(std::uint64_t size) {
  if (size == 0) return;
  if (config_.policy_location == LocationPolicy::MMAP) {
    mmap_ = std::make_unique<detail::WorkspaceMmapFile>(config_.temp_file_path, name(), size);
    mmap_path_ = mmap_->path();
    buffer_ = static_cast<char*>(mmap_->data());
  } else if (config_.policy_mirroring == MirroringPolicy::HOST_ONLY && host_only_) {
    buffer_ = static_cast<char*>(acquire_or_throw(*host_only_, size, "buffer"));
  } else {
    buffer_ = static_cast<char*>(acquire_or_throw(upstream_, size, "buffer"));
    // FULL over a device upstream keeps a host mirror of the same size.
    if (host_only_ && is_device(upstream_.space())) {
      try {
        mirror_ = acquire_or_throw(*host_only_, size, "host mirror");
      } catch (...) {
        upstream_.release_segment(buffer_, size, 64);
        buffer_ = nullptr;
        throw;
      }
    }
  }
  current_size_ = size;
  if (tracing())
    record_segment(EventKind::segment_reserve, pool_id(), reinterpret_cast<std::uintptr_t>(buffer_),
                   size);
}

void Workspace::destroy_buffer() {
  if (!buffer_) return;
  if (tracing())
    record_segment(EventKind::segment_release, pool_id(), reinterpret_cast<std::uintptr_t>(buffer_),
                   current_size_);
  if (mmap_) {
    mmap_.reset();
    mmap_path_.clear();
  } else if (config_.policy_mirroring == MirroringPolicy::HOST_ONLY && host_only_) {
    host_only_->release_segment(buffer_, current_size_, 64);
  } else {
    upstream_.release_segment(buffer_, current_size_, 64);
  }
  if (mirror_) host_only_->release_segment(mirror_, current_size_, 64);
  buffer_ = nullptr;
  mirror_ = nullptr;
  current_size_ = host_offset_ = 0;
}

// --- cycles ---

void Workspace::trace_frees_of_cycle() {
  for (const auto& b : traced_live_) record_free(pool_id(), b.p, b.bytes);
  traced_live_.clear();
}

void Workspace::reset_offsets() {
  if (host_offset_ > 0 || !traced_live_.empty())
    record_ws(EventKind::workspace_reset, pool_id(), scope_id_, host_offset_);
  trace_frees_of_cycle();
  host_offset_ = 0;
}

void Workspace::free_spills() {
  for (auto& b : external_) {
    record_free(pool_id(), b.p, b.bytes);
    upstream_.release_segment(b.p, b.bytes, 64);
  }
  external_.clear();
  spilled_bytes_ = 0;
}

void Workspace::free_old_pinned() {
  auto keep = std::remove_if(pinned_.begin(), pinned_.end(), [&](const Block& b) {
    if (b.step + 2 >= steps_) return false;
    record_free(pool_id(), b.p, b.bytes);
    upstream_.release_segment(b.p, b.bytes, 64);
    pinned_bytes_ -= b.bytes;
    return true;
  });
  pinned_.erase(keep, pinned_.end());
}

void Workspace::enter() {
  ++generation_;
  open_ = true;
  cycle_allocations_ = 0;
  cycle_count_ = 0;
  external_this_ = 0;
  if (!circular()) {
    reset_offsets();
    free_spills();
  }
  record_scope_begin(scope_id_, pool_id());
}

void Workspace::initialize_workspace() {
  if (debug_ == DebugMode::SPILL_EVERYTHING) return;
  if (buffer_) {
    const bool grew = current_size_ < max_cycle_ || current_size_ < cycle_allocations_;
    const bool under_max = config_.max_size == 0 || max_cycle_ < config_.max_size;
    if (!(grew && config_.policy_spill == SpillPolicy::REALLOCATE && under_max && !circular()))
      return;
    trace_frees_of_cycle();
    destroy_buffer();
  }
  std::uint64_t size = max_cycle_;
  if (config_.max_size) size = std::min(size, config_.max_size);
  if (circular()) {
    size = static_cast<std::uint64_t>(static_cast<double>(size) * 1.3);
    size += 8 - size % 8;  // ND4J adds 8 even to an aligned size
    max_cycle_ = size;
  }
  initial_block_size_ = size;
  if (config_.policy_allocation == AllocationPolicy::OVERALLOCATE && !is_over_ &&
      config_.policy_location != LocationPolicy::MMAP) {
    size += static_cast<std::uint64_t>(static_cast<double>(size) * config_.overallocation_limit);
    is_over_ = true;
  }
  size = std::max(size, config_.min_size);
  if (config_.max_size) size = std::min(size, config_.max_size);
  build_buffer(size);
  learned_size_ = current_size_;
  record_ws(EventKind::workspace_learn, pool_id(), scope_id_, current_size_, buffer_);
}

void Workspace::close() {
  ++cycles_;
  if (cycles_ > 1 && (cycles_ - 1) % steps_number_ == 0) ++steps_;
  last_cycle_ = cycle_allocations_;
  max_cycle_ = std::max(max_cycle_, cycle_allocations_);
  external_last_ = external_this_;
  const auto learning = config_.policy_learning;
  if (learning != LearningPolicy::NONE && max_cycle_ > 0) {
    if (!circular() || reset_planned_) free_spills();
    reset_planned_ = false;
    const bool first = learning == LearningPolicy::FIRST_LOOP && current_size_ == 0;
    const bool over_time =
        learning == LearningPolicy::OVER_TIME && cycles_ == config_.cycles_before_initialization;
    const bool grow = config_.policy_spill == SpillPolicy::REALLOCATE && !circular() &&
                      current_size_ > 0 && cycle_allocations_ > 0;
    if (first || over_time || grow) initialize_workspace();
  }
  free_old_pinned();
  if (trimmed_ && trimmed_step_ + 2 < steps_) {
    // The trimmed circular workspace is rebuilt at the size its cycles need.
    trace_frees_of_cycle();
    free_spills();
    destroy_buffer();
    initial_block_size_ = max_cycle_;
    build_buffer(max_cycle_);
    learned_size_ = current_size_;
    trimmed_ = false;
    record_ws(EventKind::workspace_learn, pool_id(), scope_id_, current_size_, buffer_);
  }
  if (!circular())
    reset_offsets();
  else if (cycle_allocations_ < initial_block_size_ && !trimmed_)
    host_offset_ += initial_block_size_ - cycle_allocations_;  // next cycle starts on a block
  // While tracing, the next cycles' blocks fit the list without growing it:
  // a learned loop body makes no heap allocation, not even for the tracing.
  max_cycle_count_ = std::max(max_cycle_count_, cycle_count_);
  if (tracing()) traced_live_.reserve(max_cycle_count_);
  open_ = false;
  record_scope_end(scope_id_, pool_id());
}

}  // namespace memtrail::alloc
