#include "stack_chains.hpp"

#include <algorithm>

namespace memtrail::detail {

StackChains::StackChains(const Analysis& a)
    : a_(a),
      frames_(a.stack_nodes.size(), kUnknown),
      depth_(a.stack_nodes.size(), 0),
      at_(a.stack_nodes.size(), kUnknown) {}

bool StackChains::walk_to_counted(StackId stack) {
  walk_.clear();
  stop_ = 0;
  const std::vector<StackNode>& nodes = a_.stack_nodes;
  std::size_t n = 0;
  for (std::uint32_t id = stack.value; id != 0 && id < nodes.size(); id = nodes[id].parent, ++n) {
    if (n == kBound) return false;  // for_each_stack_ip cuts the walk here
    if (nodes[id].id != id) break;  // never defined: the chain ends
    if (frames_[id] != kUnknown) {
      stop_ = id;
      return n + depth_[id] <= kBound;
    }
    walk_.push_back(id);
  }
  return true;
}

void StackChains::lay(StackId stack, FrameTable& table) {
  const std::vector<StackNode>& nodes = a_.stack_nodes;
  std::vector<std::uint32_t>& lists = table.lists;
  std::uint32_t leaf = stack.value;
  if (leaf == 0 || leaf >= nodes.size() || frames_[leaf] == kUnknown) {
    a_.for_each_stack_ip(stack, [&](std::uint64_t ip) {  // not counted: walked as before
      const FrameTable::Run* run = table.find(ip);
      for (std::uint32_t k = 0; k < run->count; ++k) lists.push_back(run->first + k);
    });
    return;
  }
  // Counted: the whole chain is, within the bound; lay it down to the first
  // node whose chain is laid already, then copy that one's run.
  walk_.clear();
  stop_ = 0;
  for (std::uint32_t id = leaf; id != 0 && id < nodes.size() && nodes[id].id == id;
       id = nodes[id].parent) {
    if (at_[id] != kUnknown) {
      stop_ = id;
      break;
    }
    walk_.push_back(id);
  }
  for (std::uint32_t id : walk_) {
    if (lists.size() < kUnknown) at_[id] = static_cast<std::uint32_t>(lists.size());
    const FrameTable::Run* run = table.find(nodes[id].ip);
    for (std::uint32_t k = 0; k < run->count; ++k) lists.push_back(run->first + k);
  }
  if (stop_ == 0) return;
  std::size_t end = lists.size(), copied = frames_[stop_];
  lists.resize(end + copied);
  std::copy_n(lists.begin() + at_[stop_], copied, lists.begin() + static_cast<std::ptrdiff_t>(end));
}

}  // namespace memtrail::detail
