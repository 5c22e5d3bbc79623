// tidy scopes and keep() (tidy.hpp): TF.js's startScope / endScope.
#include <algorithm>
#include <map>
#include <utility>

#include "memtrail/recorder.hpp"
#include "memtrail/tensor/tidy.hpp"
#include "tensor_engine.hpp"

namespace memtrail::tensor {
namespace detail {
namespace {

struct ScopeFrame {
  std::uint64_t uid = 0;
  std::uint32_t scope_id = 0;  // in the trace's scope table
  std::uint32_t pool_id = 0;
  std::vector<std::shared_ptr<TensorImpl>> track;
};

thread_local std::vector<ScopeFrame> t_scopes;

// One trace scope per (name, pool): a loop of tidy("step") entries is one
// scope with many entries, which is what growth per iteration is about.
std::uint32_t scope_id_for(std::string_view name, std::uint32_t pool) {
  static std::mutex mutex;
  static auto* ids = new std::map<std::pair<std::string, std::uint32_t>, std::uint32_t>;
  std::lock_guard lock(mutex);
  auto [it, fresh] = ids->try_emplace({std::string(name), pool}, 0);
  if (fresh) it->second = register_scope(name, ScopeKind::tidy, pool);
  return it->second;
}

}  // namespace

void track_in_scope(const std::shared_ptr<TensorImpl>& t) {
  if (t_scopes.empty()) return;  // no scope: untracked (global), as in TF.js
  t->scope = t_scopes.back().uid;
  t_scopes.back().track.push_back(t);
}

std::uint32_t current_scope_id() {
  return t_scopes.empty() ? 0 : t_scopes.back().scope_id;
}

TidyScope::TidyScope(std::string_view name) {
  MEMTRAIL_ALLOCATOR_ENTRY();  // the scope_begin's stack starts at tidy's caller
  ScopeFrame f;
  {
    Engine& e = engine();
    std::lock_guard lock(e.mutex);
    f.uid = e.next_scope_uid++;
  }
  f.pool_id = current_pool().pool_id();
  f.scope_id = scope_id_for(name, f.pool_id);
  record_scope_begin(f.scope_id, f.pool_id);
  t_scopes.push_back(std::move(f));
}

TidyScope::~TidyScope() {
  if (open_) close({});
}

void TidyScope::close(const std::vector<std::uint64_t>& returned) {
  if (!open_) return;
  open_ = false;
  ScopeFrame f = std::move(t_scopes.back());
  t_scopes.pop_back();
  ScopeFrame* parent = t_scopes.empty() ? nullptr : &t_scopes.back();
  for (auto& t : f.track) {
    const bool is_returned = std::find(returned.begin(), returned.end(), t->id) != returned.end();
    if (is_returned && t->scope == f.uid) {
      // Handed to the enclosing scope (or untracked at the outermost).
      t->scope = parent ? parent->uid : 0;
      if (parent) parent->track.push_back(t);
    } else if (!t->kept) {
      dispose_tensor(*t);
    }
  }
  // After the frees: the analyzer counts what is still live at the end as
  // what escaped this entry.
  record_scope_end(f.scope_id, f.pool_id);
}

}  // namespace detail

Tensor keep(const Tensor& t) {
  MEMTRAIL_ALLOCATOR_ENTRY();
  if (!t.impl()) throw std::logic_error("keep: no tensor (an empty handle)");
  detail::TensorImpl& impl = *t.impl();
  if (impl.disposed) detail::throw_disposed(impl);
  {
    detail::Engine& e = detail::engine();
    std::lock_guard lock(e.mutex);
    impl.kept = true;
  }
  record_mark("tensor.keep");
  return t;
}

}  // namespace memtrail::tensor
