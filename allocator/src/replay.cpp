// The replay engine: one policy per allocator, all over VirtualResource.
#include <memory>
#include <vector>

#include "memtrail/alloc/bfc_pool.hpp"
#include "memtrail/alloc/replay.hpp"
#include "memtrail/alloc/virtual_resource.hpp"

namespace memtrail::alloc {
namespace {

class Policy {
 public:
  virtual ~Policy() = default;
  virtual void* malloc(std::uint64_t size, StreamId stream) = 0;  // throws bad_alloc
  virtual void free(void* p) = 0;
  virtual void record_stream(void* p, StreamId stream) {}
  virtual void synchronize(bool all, StreamId stream) {}
  virtual void empty_cache() {}
  virtual std::map<std::string, std::int64_t> stats() const = 0;
  virtual std::uint64_t allocated() const = 0;
  virtual std::uint64_t reserved() const = 0;
  virtual VirtualResource& device() = 0;
};

// Addresses must be planned before a pool reserves anything (BFC
// preallocates its region in its constructor).
using AddressPlan = const std::vector<std::uint64_t>*;
VirtualResource& planned(VirtualResource& device, AddressPlan plan) {
  if (plan) device.plan_addresses(*plan);
  return device;
}

class CachingPolicy final : public Policy {
 public:
  CachingPolicy(std::uint64_t capacity, const std::string& conf, AddressPlan plan)
      : device_(capacity),
        pool_(planned(device_, plan), CachingConfig::parse(conf), "replay caching pool") {}
  void* malloc(std::uint64_t size, StreamId stream) override { return pool_.malloc(size, stream); }
  void free(void* p) override { pool_.free(p); }
  void record_stream(void* p, StreamId stream) override { pool_.record_stream(p, stream); }
  void synchronize(bool all, StreamId stream) override {
    if (all)
      pool_.synchronize();
    else
      pool_.synchronize_stream(stream);
  }
  void empty_cache() override { pool_.empty_cache(); }
  std::map<std::string, std::int64_t> stats() const override { return pool_.memory_stats(); }
  std::uint64_t allocated() const override { return pool_.allocated_bytes(); }
  std::uint64_t reserved() const override { return pool_.reserved_bytes(); }
  VirtualResource& device() override { return device_; }

 private:
  VirtualResource device_;
  CachingPool pool_;
};

class BfcPolicy final : public Policy {
 public:
  BfcPolicy(std::uint64_t capacity, const std::string& conf, AddressPlan plan)
      : device_(capacity),
        pool_(planned(device_, plan), options(capacity, conf), "replay bfc pool") {}
  void* malloc(std::uint64_t size, StreamId) override { return pool_.allocate_raw(size); }
  void free(void* p) override { pool_.deallocate_raw(p); }
  std::map<std::string, std::int64_t> stats() const override { return pool_.stats().to_map(); }
  std::uint64_t allocated() const override {
    return static_cast<std::uint64_t>(pool_.stats().bytes_in_use);
  }
  std::uint64_t reserved() const override {
    return static_cast<std::uint64_t>(pool_.stats().pool_bytes);
  }
  VirtualResource& device() override { return device_; }

 private:
  // Without a capacity there is no fraction to preallocate: the arena grows.
  static BfcOptions options(std::uint64_t capacity, const std::string& conf) {
    BfcOptions base;
    if (!capacity) base.preallocate = false;
    return BfcOptions::parse(conf, base);
  }
  VirtualResource device_;
  BfcPool pool_;
};

// No caching: every block is its own segment of exactly the requested size,
// returned at once (XLA_PYTHON_CLIENT_ALLOCATOR=platform, or a plain malloc
// that never fragments).
class MallocPolicy final : public Policy {
 public:
  MallocPolicy(std::uint64_t capacity, AddressPlan plan) : device_(capacity) {
    planned(device_, plan);
  }
  void* malloc(std::uint64_t size, StreamId) override {
    if (size == 0) return nullptr;
    if (size > kMaxRequestBytes)  // (a trace's sizes are not checked as a script's are)
      throw OutOfMemoryError("malloc of " + std::to_string(size) +
                             " bytes: more than the largest request served (" +
                             std::to_string(kMaxRequestBytes) + " bytes)");
    UpstreamFailure why;
    void* p = device_.allocate_segment(size, 16, &why);
    if (!p)
      throw OutOfMemoryError("malloc of " + std::to_string(size) + " bytes failed: " + why.message);
    sizes_[reinterpret_cast<std::uint64_t>(p)] = size;
    ++num_allocs_;
    return p;
  }
  void free(void* p) override {
    if (!p) return;
    auto it = sizes_.find(reinterpret_cast<std::uint64_t>(p));
    device_.release_segment(p, it->second, 16);
    sizes_.erase(it);
    ++num_frees_;
  }
  std::map<std::string, std::int64_t> stats() const override {
    const auto used = static_cast<std::int64_t>(device_.bytes_in_use());
    return {{"allocated_bytes", used},
            {"reserved_bytes", used},
            {"num_allocs", num_allocs_},
            {"num_frees", num_frees_}};
  }
  std::uint64_t allocated() const override { return device_.bytes_in_use(); }
  std::uint64_t reserved() const override { return device_.bytes_in_use(); }
  VirtualResource& device() override { return device_; }

 private:
  VirtualResource device_;
  std::map<std::uint64_t, std::uint64_t> sizes_;
  std::int64_t num_allocs_ = 0, num_frees_ = 0;
};

std::unique_ptr<Policy> make_policy(const ReplayOptions& o, AddressPlan plan) {
  switch (o.allocator) {
    case ReplayAllocator::caching:
      return std::make_unique<CachingPolicy>(o.capacity, o.conf, plan);
    case ReplayAllocator::bfc:
      return std::make_unique<BfcPolicy>(o.capacity, o.conf, plan);
    case ReplayAllocator::malloc:
      if (!o.conf.empty()) throw ConfigError("the malloc policy takes no --conf");
      return std::make_unique<MallocPolicy>(o.capacity, plan);
  }
  throw ConfigError("unknown allocator");
}

// Runs operations one at a time; the blocks of names are kept by slot.
class Replayer {
 public:
  Replayer(const ReplayOptions& options, AddressPlan plan, ReplaySink* sink)
      : policy_(make_policy(options, plan)), sink_(sink) {
    observe();  // a preallocating policy (BFC) holds memory before any op
  }

  void apply(const ReplayOp& op) {
    if (op.slot >= blocks_.size()) blocks_.resize(op.slot + 1, nullptr);
    ++r_.ops;
    switch (op.kind) {
      case ReplayOp::Kind::malloc:
        ++r_.mallocs;
        try {
          blocks_[op.slot] = policy_->malloc(op.size, op.stream);
        } catch (const std::bad_alloc& e) {
          blocks_[op.slot] = nullptr;
          ++r_.ooms;
          if (sink_) sink_->on_oom(op, e.what());
        }
        break;
      case ReplayOp::Kind::free:
        ++r_.frees;
        policy_->free(blocks_[op.slot]);
        blocks_[op.slot] = nullptr;
        break;
      case ReplayOp::Kind::record_stream:
        if (blocks_[op.slot]) policy_->record_stream(blocks_[op.slot], op.stream);
        break;
      case ReplayOp::Kind::synchronize:
        policy_->synchronize(op.all_streams, op.stream);
        break;
      case ReplayOp::Kind::empty_cache:
        policy_->empty_cache();
        break;
      case ReplayOp::Kind::stats:
        if (sink_) sink_->on_stats(op, policy_->stats());
        break;
    }
    observe();
  }

  void observe() {
    const std::uint64_t reserved = policy_->reserved(), allocated = policy_->allocated();
    if (sink_) sink_->on_level(r_.ops, reserved, allocated);
    r_.peak_reserved = std::max(r_.peak_reserved, reserved);
    r_.peak_allocated = std::max(r_.peak_allocated, allocated);
    if (reserved > allocated)
      r_.peak_fragmentation = std::max(r_.peak_fragmentation, reserved - allocated);
  }

  ReplayResult finish() {
    r_.final_reserved = policy_->reserved();
    r_.final_allocated = policy_->allocated();
    r_.addresses_kept = policy_->device().planned_addresses_used();
    r_.addresses_skipped = policy_->device().planned_addresses_skipped();
    return r_;
  }

 private:
  std::unique_ptr<Policy> policy_;
  ReplaySink* sink_;
  std::vector<void*> blocks_;
  ReplayResult r_;
};

}  // namespace

ReplayResult run_replay(const ReplayScript& script, const ReplayOptions& options,
                        ReplaySink* sink) {
  if (options.keep_addresses && script.segment_addresses.empty())
    throw ReplayError("--keep-addresses: " + script.source +
                      " recorded no segment reserves for this pool (only a trace of a pool that "
                      "reserves segments, such as CachingPool or BfcPool, has addresses to keep)");
  Replayer replayer(options, options.keep_addresses ? &script.segment_addresses : nullptr, sink);
  for (const ReplayOp& op : script.ops) replayer.apply(op);
  return replayer.finish();
}

ReplayResult run_replay(ReplayScriptReader& script, const ReplayOptions& options,
                        ReplaySink* sink) {
  if (options.keep_addresses)
    throw ReplayError("--keep-addresses needs a trace; a replay script has no recorded addresses");
  Replayer replayer(options, nullptr, sink);
  for (ReplayOp op; script.next(op);) replayer.apply(op);
  return replayer.finish();
}

}  // namespace memtrail::alloc
