// WorkspaceManager: ND4J's per-thread workspace manager (BasicWorkspaceManager)
// with named workspaces, RAII activation, nesting, borrowing, scope-out,
// leverage_to / detach, and the debug modes.
//
//   auto& manager = WorkspaceManager::for_current_thread();
//   for (int i = 0; i < steps; ++i) {
//     auto ws = manager.get_and_activate(config, "LOOP");   // a cycle begins
//     WorkspaceBuffer x = manager.allocate(n * sizeof(float));
//     ...                                                    // cycle ends at scope exit
//   }
//
// Buffers carry the generation of the workspace they came from. get() on a
// buffer whose workspace closed (or closed and reopened) throws
// WorkspaceScopeError, ND4J's "leaked / outdated workspace pointer", naming
// the workspace, both generations and the allocation site: the return
// address of the allocate() call, symbolised with dladdr (one captured
// frame, so the check costs nothing at allocation). As in ND4J, buffers of a
// circular workspace are not checked.
//
// Debug mode: set_debug_mode(), or MEMTRAIL_WORKSPACES_DEBUG=SPILL_EVERYTHING
// | BYPASS_EVERYTHING | DISABLED read when the manager is made.
// SPILL_EVERYTHING spills every allocation of every workspace (nothing is
// learned); BYPASS_EVERYTHING makes workspaces created from then on dummies
// whose allocations are detached.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "memtrail/alloc/workspace.hpp"

namespace memtrail::alloc {

// A buffer used outside the life of its workspace cycle.
class WorkspaceScopeError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

class WorkspaceManager;

class WorkspaceBuffer {
 public:
  WorkspaceBuffer() = default;
  // The memory, after validate().
  void* get() const {
    validate();
    return p_;
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(get());
  }
  void* unchecked() const { return p_; }
  std::size_t size() const { return bytes_; }
  bool attached() const { return attached_; }
  const std::string& workspace_id() const { return ws_id_; }
  std::uint64_t generation() const { return generation_; }
  const void* site() const { return site_; }
  // Throws WorkspaceScopeError when the buffer's workspace is closed, was
  // reopened since, or was destroyed. `what` starts the message.
  void validate(const std::string& what = "Buffer") const;

 private:
  friend class WorkspaceManager;
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
  bool attached_ = false;
  std::weak_ptr<Workspace> ws_;
  std::string ws_id_;
  std::uint64_t generation_ = 0;
  const void* site_ = nullptr;
  std::shared_ptr<void> owned_;  // detached memory
  const WorkspaceManager* manager_ = nullptr;
};

class WorkspaceManager {
  struct Entry;

 public:
  // Workspaces and detached buffers take memory from `upstream` (the process
  // heap through a SystemHeapResource when null). Reads
  // MEMTRAIL_WORKSPACES_DEBUG; throws ConfigError naming it for a bad value.
  explicit WorkspaceManager(Upstream* upstream = nullptr);
  ~WorkspaceManager();
  WorkspaceManager(const WorkspaceManager&) = delete;
  WorkspaceManager& operator=(const WorkspaceManager&) = delete;
  static WorkspaceManager& for_current_thread();

  class Activation {
   public:
    Activation() = default;
    Activation(Activation&& other) noexcept;
    Activation& operator=(Activation&& other) noexcept;
    ~Activation() { close(); }
    void close();  // idempotent
    // The workspace activated (nullptr for scope-out and bypass dummies).
    Workspace* workspace() const;

   private:
    friend class WorkspaceManager;
    enum class Kind { none, enter, tag, borrow, scope_out, dummy };
    WorkspaceManager* manager_ = nullptr;
    Entry* entry_ = nullptr;
    Entry* previous_ = nullptr;
    Kind kind_ = Kind::none;
  };

  // The workspace `id` of this manager, created with `config` if new
  // (an existing one keeps its configuration, as in ND4J).
  Workspace* get_workspace(const WorkspaceConfiguration& config, const std::string& id);
  // Activates (notifyScopeEntered); re-activating the current open workspace
  // only nests (costs nothing).
  [[nodiscard]] Activation get_and_activate(const WorkspaceConfiguration& config,
                                            const std::string& id);
  [[nodiscard]] Activation get_and_activate(const std::string& id);
  // Makes an existing workspace current without a reset. Throws
  // WorkspaceScopeError "Workspace [id]: Can't borrow from borrowed workspace".
  [[nodiscard]] Activation borrow(const std::string& id);
  // No workspace is current until the activation ends.
  [[nodiscard]] Activation scope_out();

  Workspace* current() const;
  Workspace* find(const std::string& id) const;
  std::vector<std::string> open_workspaces() const;
  void destroy(const std::string& id);
  void destroy_all();

  // From the current workspace, or detached (owned by the buffer) when none.
  [[gnu::noinline]] WorkspaceBuffer allocate(std::size_t bytes);
  // A copy of `buffer` in workspace `id` (even a closed one). Returns
  // `buffer` itself when it is detached or already there, and when `id` does
  // not exist (or throws std::out_of_range naming it when enforce_existence).
  WorkspaceBuffer leverage_to(const WorkspaceBuffer& buffer, const std::string& id,
                              bool enforce_existence = false);
  // A copy outside any workspace.
  WorkspaceBuffer detach(const WorkspaceBuffer& buffer);

  void set_debug_mode(DebugMode mode);
  DebugMode debug_mode() const { return debug_; }
  Upstream& upstream() const { return *upstream_; }

 private:
  WorkspaceBuffer attach(Entry& entry, void* p, std::size_t bytes, const void* site) const;
  WorkspaceBuffer detached(std::size_t bytes, const void* site);
  std::unique_ptr<Upstream> own_upstream_;
  Upstream* upstream_;
  DebugMode debug_ = DebugMode::DISABLED;
  std::map<std::string, std::unique_ptr<Entry>> entries_;
  Entry* current_ = nullptr;
};

}  // namespace memtrail::alloc
