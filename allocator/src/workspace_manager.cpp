#include "memtrail/alloc/workspace_manager.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "memtrail/alloc/host_resources.hpp"
#include "memtrail/recorder.hpp"

namespace memtrail::alloc {

struct WorkspaceManager::Entry {
  std::shared_ptr<Workspace> ws;  // null: a BYPASS_EVERYTHING dummy
  std::string id;
  int tag = 0;  // nested re-entries / scope-outs still to close
  bool borrowed = false;
};

namespace {

std::string describe_site(const void* site) {
  if (!site) return "unknown site";
  char text[32];
  std::snprintf(text, sizeof text, "%p", site);
  std::string out = text;
  Dl_info info{};
  if (dladdr(site, &info) && info.dli_sname) {
    char offset[32];
    std::snprintf(offset, sizeof offset, "+0x%zx",
                  static_cast<std::size_t>(static_cast<const char*>(site) -
                                           static_cast<const char*>(info.dli_saddr)));
    out += std::string(" (") + info.dli_sname + offset + ")";
  } else if (info.dli_fname) {
    out += std::string(" (") + info.dli_fname + ")";
  }
  return out;
}

std::string join(const std::vector<std::string>& ids) {
  std::string out;
  for (const auto& id : ids) out += (out.empty() ? "" : ", ") + id;
  return "[" + out + "]";
}

DebugMode debug_from_environment() {
  const char* text = std::getenv("MEMTRAIL_WORKSPACES_DEBUG");
  if (!text || !*text) return DebugMode::DISABLED;
  return parse_debug_mode(text, "MEMTRAIL_WORKSPACES_DEBUG");
}

}  // namespace

void WorkspaceBuffer::validate(const std::string& what) const {
  if (!attached_) return;
  auto ws = ws_.lock();
  // The check allocates nothing (it runs on every get() in a loop body that
  // must make no heap allocation); the messages are built only to throw.
  if (ws && (ws->circular() || (ws->is_open() && ws->generation() == generation_))) return;
  const std::string tail = ". Allocated at: " + describe_site(site_) +
                           " (return address of "
                           "WorkspaceManager::allocate's caller)";
  if (!ws)
    throw WorkspaceScopeError(
        "memtrail: " + what + " uses leaked workspace pointer from workspace [" + ws_id_ +
        "]: the workspace was destroyed. Array WS generation: " + std::to_string(generation_) +
        tail);
  if (ws->circular()) return;  // ND4J does not check circular workspaces
  const std::string open = manager_ ? join(manager_->open_workspaces()) : "[]";
  if (!ws->is_open())
    throw WorkspaceScopeError(
        "memtrail: " + what + " uses leaked workspace pointer from workspace [" + ws_id_ +
        "]: Workspace the array was defined in is no longer open. Array WS "
        "generation: " +
        std::to_string(generation_) + ". All open workspaces: " + open + tail);
  if (ws->generation() != generation_)
    throw WorkspaceScopeError(
        "memtrail: " + what + " uses outdated workspace pointer from workspace [" + ws_id_ +
        "]: Workspace array was defined in has been closed and reopened at least once since "
        "array creation. Array WS iteration: " +
        std::to_string(generation_) + ". Workspace current iteration: " +
        std::to_string(ws->generation()) + ". All open workspaces: " + open + tail);
}

// --- activation ---

WorkspaceManager::Activation::Activation(Activation&& other) noexcept {
  *this = std::move(other);
}

WorkspaceManager::Activation& WorkspaceManager::Activation::operator=(Activation&& other) noexcept {
  if (this != &other) {
    close();
    manager_ = other.manager_;
    entry_ = other.entry_;
    previous_ = other.previous_;
    kind_ = other.kind_;
    other.kind_ = Kind::none;
  }
  return *this;
}

Workspace* WorkspaceManager::Activation::workspace() const {
  return entry_ ? entry_->ws.get() : nullptr;
}

void WorkspaceManager::Activation::close() {
  const Kind kind = kind_;
  kind_ = Kind::none;
  switch (kind) {
    case Kind::none:
      return;
    case Kind::tag:
      --entry_->tag;
      return;
    case Kind::enter:
      entry_->ws->close();
      break;
    case Kind::borrow:
      entry_->borrowed = false;
      break;
    case Kind::scope_out:
    case Kind::dummy:
      break;
  }
  manager_->current_ = previous_;
}

// --- manager ---

WorkspaceManager::WorkspaceManager(Upstream* upstream) : upstream_(upstream) {
  if (!upstream_) {
    own_upstream_ = std::make_unique<SystemHeapResource>("workspace manager heap");
    upstream_ = own_upstream_.get();
  }
  debug_ = debug_from_environment();
}

WorkspaceManager::~WorkspaceManager() = default;

WorkspaceManager& WorkspaceManager::for_current_thread() {
  thread_local WorkspaceManager manager;
  return manager;
}

void WorkspaceManager::set_debug_mode(DebugMode mode) {
  debug_ = mode;
  for (auto& [id, entry] : entries_)
    if (entry->ws) entry->ws->set_debug_mode(mode);
}

Workspace* WorkspaceManager::get_workspace(const WorkspaceConfiguration& config,
                                           const std::string& id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) {
    auto entry = std::make_unique<Entry>();
    entry->id = id;
    if (debug_ != DebugMode::BYPASS_EVERYTHING) {
      entry->ws = std::make_shared<Workspace>(*upstream_, config, id);
      entry->ws->set_debug_mode(debug_);
    }
    it = entries_.emplace(id, std::move(entry)).first;
  }
  return it->second->ws.get();
}

WorkspaceManager::Activation WorkspaceManager::get_and_activate(
    const WorkspaceConfiguration& config, const std::string& id) {
  get_workspace(config, id);
  Entry& entry = *entries_.at(id);
  Activation a;
  a.manager_ = this;
  a.entry_ = &entry;
  a.previous_ = current_;
  if (!entry.ws) {
    a.kind_ = Activation::Kind::dummy;
    current_ = nullptr;  // a DummyWorkspace: allocations are detached
  } else if (current_ == &entry && entry.ws->is_open()) {
    ++entry.tag;
    a.kind_ = Activation::Kind::tag;
  } else {
    entry.ws->enter();
    a.kind_ = Activation::Kind::enter;
    current_ = &entry;
  }
  return a;
}

WorkspaceManager::Activation WorkspaceManager::get_and_activate(const std::string& id) {
  return get_and_activate(WorkspaceConfiguration{}, id);
}

WorkspaceManager::Activation WorkspaceManager::borrow(const std::string& id) {
  auto it = entries_.find(id);
  if (it == entries_.end() || !it->second->ws)
    throw std::out_of_range("memtrail: no workspace [" + id + "] to borrow");
  Entry& entry = *it->second;
  if (entry.borrowed)
    throw WorkspaceScopeError("Workspace [" + id + "]: Can't borrow from borrowed workspace");
  entry.borrowed = true;
  Activation a;
  a.manager_ = this;
  a.entry_ = &entry;
  a.previous_ = current_;
  a.kind_ = Activation::Kind::borrow;
  current_ = &entry;
  return a;
}

WorkspaceManager::Activation WorkspaceManager::scope_out() {
  Activation a;
  a.manager_ = this;
  a.previous_ = current_;
  a.kind_ = Activation::Kind::scope_out;
  current_ = nullptr;
  return a;
}

Workspace* WorkspaceManager::current() const {
  return current_ ? current_->ws.get() : nullptr;
}

Workspace* WorkspaceManager::find(const std::string& id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : it->second->ws.get();
}

std::vector<std::string> WorkspaceManager::open_workspaces() const {
  std::vector<std::string> out;
  for (const auto& [id, entry] : entries_)
    if (entry->ws && entry->ws->is_open()) out.push_back(id);
  return out;
}

void WorkspaceManager::destroy(const std::string& id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  if (current_ == it->second.get()) current_ = nullptr;
  entries_.erase(it);
}

void WorkspaceManager::destroy_all() {
  current_ = nullptr;
  entries_.clear();
}

// --- buffers ---

WorkspaceBuffer WorkspaceManager::attach(Entry& entry, void* p, std::size_t bytes,
                                         const void* site) const {
  WorkspaceBuffer b;
  b.p_ = p;
  b.bytes_ = bytes;
  b.attached_ = true;
  b.ws_ = entry.ws;
  b.ws_id_ = entry.id;
  b.generation_ = entry.ws->generation();
  b.site_ = site;
  b.manager_ = this;
  return b;
}

WorkspaceBuffer WorkspaceManager::detached(std::size_t bytes, const void* site) {
  UpstreamFailure why;
  const std::size_t size = bytes ? bytes : 1;
  void* p = upstream_->allocate_segment(size, Workspace::kAlignmentBase, &why);
  if (!p) {
    std::string message = "memtrail: Can't allocate [HOST] memory for a detached buffer of " +
                          std::to_string(size) + " bytes";
    if (!why.message.empty()) message += ": " + why.message;
    if (why.refusal == Refusal::limit)
      throw LimitError(why.which, message, size, why.in_use, why.limit);
    throw OutOfMemoryError(message);
  }
  Upstream* up = upstream_;
  WorkspaceBuffer b;
  b.p_ = p;
  b.bytes_ = bytes;
  b.site_ = site;
  b.owned_ = std::shared_ptr<void>(
      p, [up, size](void* q) { up->release_segment(q, size, Workspace::kAlignmentBase); });
  return b;
}

WorkspaceBuffer WorkspaceManager::allocate(std::size_t bytes) {
  MEMTRAIL_ALLOCATOR_ENTRY();
  const void* site = __builtin_return_address(0);
  if (!current_ || !current_->ws) return detached(bytes, site);
  return attach(*current_, current_->ws->alloc(bytes), bytes, site);
}

WorkspaceBuffer WorkspaceManager::leverage_to(const WorkspaceBuffer& buffer, const std::string& id,
                                              bool enforce_existence) {
  buffer.validate("leverage_to: buffer");
  if (!buffer.attached_) return buffer;
  auto it = entries_.find(id);
  if (it == entries_.end() || !it->second->ws) {
    if (enforce_existence) throw std::out_of_range("memtrail: no workspace [" + id + "]");
    return buffer;
  }
  Entry& target = *it->second;
  if (buffer.ws_.lock() == target.ws) return buffer;
  void* p = target.ws->alloc(buffer.bytes_);
  std::memcpy(p, buffer.p_, buffer.bytes_);
  return attach(target, p, buffer.bytes_, buffer.site_);
}

WorkspaceBuffer WorkspaceManager::detach(const WorkspaceBuffer& buffer) {
  buffer.validate("detach: buffer");
  WorkspaceBuffer copy = detached(buffer.bytes_, buffer.site_);
  if (buffer.bytes_) std::memcpy(copy.p_, buffer.p_, buffer.bytes_);
  return copy;
}

}  // namespace memtrail::alloc
