// A trace that starts in a process which already has a heap another trace
// knows (issue 27): a fork child, whose blocks are its parent's live blocks
// at the fork, and the image that goes on after a failed exec, whose blocks
// are those its finished trace had live. The new trace begins with each of
// them as an allocation at time 0, with its stack carried over, and an
// `inherited` mark; its live map holds them, so the exit leak scan follows
// and classifies them as the process's own, as Valgrind's
// --trace-children=yes does in each process.
#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "memtrail/detail/diagnostics.hpp"
#include "runtime.hpp"

namespace memtrail::runtime {
namespace {

struct Inherited {
  std::uint64_t address;
  LiveEntry entry;
};

// `from`'s live blocks, oldest first: the new trace lists them in the order
// they were allocated, though all at time 0.
std::vector<Inherited> live_blocks_of(const Session& from) {
  std::vector<Inherited> blocks;
  blocks.reserve(from.live.size());
  from.live.for_each([&](std::uint64_t address, const LiveEntry& e) {
    blocks.push_back({address, e});
  });
  std::stable_sort(blocks.begin(), blocks.end(), [](const Inherited& a, const Inherited& b) {
    return a.entry.time_ns < b.entry.time_ns;
  });
  return blocks;
}

void write_inherited_mark(Session& s, std::uint64_t blocks, int from_pid, const std::string& why) {
  Event mark;
  mark.kind = EventKind::mark;
  mark.detail = static_cast<std::uint8_t>(MarkDetail::inherited);
  mark.size = blocks;
  mark.requested = static_cast<std::uint64_t>(from_pid);
  mark.aux = intern_string(why + " of process " + std::to_string(from_pid) + ": " +
                           std::to_string(blocks) + " live blocks carried into this trace");
  s.emit_tables();
  s.writer->add_event(mark);
}

}  // namespace

void Session::take_inherited_blocks() {
  const Session* from = inherit_from;
  if (!from) return;
  inherit_from = nullptr;
  try {
    inherit_live_blocks(*this, *from, inherit_why);
  } catch (const std::exception& e) {
    detail::diagnostic("memtrail: the blocks %s were not carried into the new trace (%s)\n",
                       inherit_why, e.what());
  }
}

// Nothing else in this process changes `from` any more (its writer is gone).
void inherit_live_blocks(Session& s, const Session& from, const char* why) {
  const std::vector<Inherited> blocks = live_blocks_of(from);
  write_inherited_mark(s, blocks.size(), from.pid, why);
  const std::uint32_t heap_pool_id = memtrail::heap_pool();
  s.emit_tables();
  bool rescanned = false;
  auto on_node = [&](const StackNode& n) {
    if (!rescanned && !s.modules.contains(n.ip)) {
      rescanned = true;
      s.modules.rescan([&](const ModuleInfo& m) { s.writer->add_module(m); });
    }
    s.writer->add_stack_node(n);
  };
  std::unordered_map<std::uint32_t, std::uint32_t> stacks;  // `from`'s id -> ours
  std::vector<std::uint64_t> ips;
  std::lock_guard live(s.live_mutex);
  for (const Inherited& b : blocks) {
    std::uint32_t stack = 0;
    if (b.entry.stack != 0) {
      auto [it, fresh] = stacks.try_emplace(b.entry.stack, 0);
      if (fresh) {
        from.trie.frames(b.entry.stack, ips);
        it->second = s.trie.intern(ips.data(), ips.size(), on_node);
      }
      stack = it->second;
    }
    Event e;
    e.kind = EventKind::alloc;
    e.detail = static_cast<std::uint8_t>(AllocFn::inherited);
    e.pool = heap_pool_id;
    e.address = b.address;
    e.size = b.entry.size;
    e.stack = stack;
    LiveEntry entry{b.entry.size, 0, stack, 0, {}}, replaced;
    bool had = false;
    LiveEntry* stored = s.live.put(b.address, entry, had, replaced);
    s.writer->add_tracked_event(e, stored->chunk_ref, 0);
  }
}

}  // namespace memtrail::runtime
