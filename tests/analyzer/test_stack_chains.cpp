// StackChains (analyzer/src/stack_chains.hpp) against the walk it replaces:
// Analysis::for_each_stack_ip ip by ip, on a trie with shared prefixes,
// undefined nodes, a cycle and a chain past the walk's 1024-node bound. The
// counts, the index array and the order in which ips are first interned
// (the frame table's order, which the report prints) must be the same.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "memtrail/analysis.hpp"
#include "stack_chains.hpp"

namespace memtrail::detail {
namespace {

struct Result {
  std::vector<std::uint64_t> counts;
  std::vector<std::uint32_t> lists;
  std::vector<Frame> frames;  // in intern order
};

// 1 to 3 frames per ip (inlined ones), so runs differ in length.
std::vector<Frame> frames_of(std::uint64_t ip) {
  std::vector<Frame> out(ip % 3 + 1);
  for (Frame& f : out) f.address = ip;
  return out;
}

FrameTable::Run run_of(FrameTable& table, std::uint64_t ip) {
  const FrameTable::Run* found = table.find(ip);
  return found ? *found : table.intern(ip, frames_of(ip));
}

Result walked_ip_by_ip(const Analysis& a, const std::vector<StackId>& stacks) {
  Result r;
  FrameTable table;
  for (StackId s : stacks) {
    std::uint64_t n = 0;
    a.for_each_stack_ip(s, [&](std::uint64_t ip) { n += run_of(table, ip).count; });
    r.counts.push_back(n);
  }
  for (StackId s : stacks)
    a.for_each_stack_ip(s, [&](std::uint64_t ip) {
      const FrameTable::Run* run = table.find(ip);
      for (std::uint32_t k = 0; k < run->count; ++k) table.lists.push_back(run->first + k);
    });
  r.lists = table.lists;
  r.frames = table.frames;
  return r;
}

Result through_chains(const Analysis& a, const std::vector<StackId>& stacks) {
  Result r;
  FrameTable table;
  StackChains chains(a);
  for (StackId s : stacks)
    r.counts.push_back(chains.count(s, [&](std::uint64_t ip) { return run_of(table, ip); }));
  for (StackId s : stacks) chains.lay(s, table);
  r.lists = table.lists;
  r.frames = table.frames;
  return r;
}

void add_node(Analysis& a, std::uint32_t id, std::uint32_t parent, std::uint64_t ip) {
  if (a.stack_nodes.size() <= id) a.stack_nodes.resize(id + 1);
  a.stack_nodes[id] = StackNode{id, parent, ip};
}

TEST(StackChains, SameCountsListsAndInternOrderAsTheIpByIpWalk) {
  Analysis a;
  std::vector<StackId> stacks;
  // A random trie: node i's parent is below i (often a recent one, so
  // prefixes are shared and chains deep); ips repeat across nodes.
  std::uint64_t x = 12345;
  auto next = [&] { return x = x * 6364136223846793005ull + 1442695040888963407ull; };
  add_node(a, 1, 0, 0x1000);
  for (std::uint32_t id = 2; id < 20000; ++id) {
    std::uint32_t back = 1 + static_cast<std::uint32_t>(next() >> 33) % 8;
    std::uint32_t parent = id > back ? id - back : 0;
    if (next() >> 60 == 0) parent = static_cast<std::uint32_t>(next() >> 33) % 50;  // a new branch
    add_node(a, id, parent, 0x1000 + (next() >> 40) % 3000);
  }
  a.stack_nodes[777].id = 0;  // never defined: chains through it end there
  // A chain of 1500 nodes: cut at 1024 by for_each_stack_ip, also when its
  // first 501 nodes were counted before (20500).
  for (std::uint32_t id = 20000; id < 21500; ++id) add_node(a, id, id == 20000 ? 0 : id - 1, id);
  // A cycle: 21500 -> 21501 -> 21500.
  add_node(a, 21500, 21501, 0x5000);
  add_node(a, 21501, 21500, 0x5001);
  for (int i = 0; i < 30000; ++i)
    stacks.push_back(StackId{1 + static_cast<std::uint32_t>(next() >> 33) % 20000});
  for (std::uint32_t id :
       {20100u, 20500u, 21499u, 21400u, 20900u, 21500u, 21501u, 0u, 777u, 99999u})
    stacks.push_back(StackId{id});
  stacks.push_back(StackId{21499});  // again, after its prefixes were seen

  Result expected = walked_ip_by_ip(a, stacks), actual = through_chains(a, stacks);
  ASSERT_EQ(actual.counts, expected.counts);
  ASSERT_EQ(actual.lists, expected.lists);
  ASSERT_EQ(actual.frames.size(), expected.frames.size());
  for (std::size_t i = 0; i < actual.frames.size(); ++i)
    ASSERT_EQ(actual.frames[i].address, expected.frames[i].address) << "frame " << i;
}

}  // namespace
}  // namespace memtrail::detail
