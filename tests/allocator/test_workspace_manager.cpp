// WorkspaceManager: activation, nesting, borrowing, scope-out,
// leverage_to/detach, outdated-pointer detection and the debug modes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "memtrail/alloc/host_resources.hpp"
#include "memtrail/alloc/workspace_manager.hpp"

namespace {

using namespace memtrail::alloc;

std::string scope_error(const WorkspaceBuffer& b) {
  try {
    b.get();
  } catch (const WorkspaceScopeError& e) {
    return e.what();
  }
  return "no error";
}

TEST(WorkspaceManager, NestingAndReentry) {
  SystemHeapResource heap;
  WorkspaceManager m(&heap);
  EXPECT_EQ(m.current(), nullptr);
  {
    auto outer = m.get_and_activate("OUTER");
    EXPECT_EQ(m.current(), outer.workspace());
    const auto generation = outer.workspace()->generation();
    {
      auto inner = m.get_and_activate("INNER");
      EXPECT_EQ(m.current()->id(), "INNER");
      EXPECT_EQ(m.open_workspaces(), (std::vector<std::string>{"INNER", "OUTER"}));
    }
    EXPECT_EQ(m.current()->id(), "OUTER");
    {
      auto again = m.get_and_activate("OUTER");  // nested re-entry: no new cycle
      EXPECT_EQ(again.workspace()->generation(), generation);
    }
    EXPECT_TRUE(m.find("OUTER")->is_open());
  }
  EXPECT_EQ(m.current(), nullptr);
  EXPECT_EQ(m.find("OUTER")->stats().cycles, 1u);
  EXPECT_EQ(m.find("INNER")->stats().cycles, 1u);
}

TEST(WorkspaceManager, OutdatedAndLeakedPointersAreDetected) {
  SystemHeapResource heap;
  WorkspaceManager m(&heap);
  WorkspaceBuffer kept;
  {
    auto ws = m.get_and_activate("LOOP");
    kept = m.allocate(64);
    std::memset(kept.get(), 1, 64);
  }
  const std::string leaked = scope_error(kept);
  EXPECT_EQ(leaked.rfind("memtrail: Buffer uses leaked workspace pointer from workspace [LOOP]: "
                         "Workspace the array was defined in is no longer open. Array WS "
                         "generation: 1. All open workspaces: []. Allocated at: 0x",
                         0),
            0u)
      << leaked;
  auto ws = m.get_and_activate("LOOP");
  const std::string outdated = scope_error(kept);
  EXPECT_EQ(outdated.rfind("memtrail: Buffer uses outdated workspace pointer from workspace "
                           "[LOOP]: Workspace array was defined in has been closed and reopened "
                           "at least once since array creation. Array WS iteration: 1. Workspace "
                           "current iteration: 2. All open workspaces: [LOOP]. Allocated at: 0x",
                           0),
            0u)
      << outdated;
  ws.close();
  m.destroy("LOOP");
  EXPECT_NE(scope_error(kept).find("the workspace was destroyed"), std::string::npos);
}

TEST(WorkspaceManager, BorrowAndScopeOut) {
  SystemHeapResource heap;
  WorkspaceManager m(&heap);
  auto outer = m.get_and_activate(
      WorkspaceConfiguration::parse("initialSize:1K,policyLearning:NONE"), "OUTER");
  WorkspaceBuffer a = m.allocate(32);
  auto inner = m.get_and_activate("INNER");
  {
    auto borrowed = m.borrow("OUTER");  // no reset: `a` stays valid
    EXPECT_EQ(m.current()->id(), "OUTER");
    WorkspaceBuffer b = m.allocate(32);
    EXPECT_EQ(b.workspace_id(), "OUTER");
    EXPECT_EQ(static_cast<char*>(b.get()) - static_cast<char*>(a.get()), 32);
    try {
      auto twice = m.borrow("OUTER");
      ADD_FAILURE() << "no throw";
    } catch (const WorkspaceScopeError& e) {
      EXPECT_STREQ(e.what(), "Workspace [OUTER]: Can't borrow from borrowed workspace");
    }
  }
  EXPECT_EQ(m.current()->id(), "INNER");
  {
    auto out = m.scope_out();
    EXPECT_EQ(m.current(), nullptr);
    WorkspaceBuffer d = m.allocate(16);
    EXPECT_FALSE(d.attached());
  }
  EXPECT_EQ(m.current()->id(), "INNER");
  EXPECT_NO_THROW(a.get());
}

TEST(WorkspaceManager, LeverageToAndDetachOutliveTheCycle) {
  SystemHeapResource heap;
  WorkspaceManager m(&heap);
  auto outer = m.get_and_activate("OUTER");
  WorkspaceBuffer up, free_standing;
  {
    auto inner = m.get_and_activate("INNER");
    WorkspaceBuffer x = m.allocate(8);
    std::memcpy(x.get(), "abcdefg", 8);
    up = m.leverage_to(x, "OUTER");
    free_standing = m.detach(x);
    EXPECT_EQ(m.leverage_to(x, "MISSING").unchecked(), x.unchecked());
    EXPECT_THROW(m.leverage_to(x, "MISSING", true), std::out_of_range);
    EXPECT_EQ(m.leverage_to(up, "OUTER").unchecked(), up.unchecked());  // already there
  }
  EXPECT_EQ(up.workspace_id(), "OUTER");
  EXPECT_STREQ(up.as<char>(), "abcdefg");
  EXPECT_FALSE(free_standing.attached());
  outer.close();
  EXPECT_THROW(up.get(), WorkspaceScopeError);
  EXPECT_STREQ(free_standing.as<char>(), "abcdefg");  // detached memory lives on
  const std::uint64_t held = heap.bytes_in_use();
  free_standing = WorkspaceBuffer();
  EXPECT_EQ(heap.bytes_in_use(), held - 8);
}

TEST(WorkspaceManager, SpillEverythingNeverLearns) {
  SystemHeapResource heap;
  WorkspaceManager m(&heap);
  m.set_debug_mode(DebugMode::SPILL_EVERYTHING);
  for (int i = 0; i < 3; ++i) {
    auto ws = m.get_and_activate("LOOP");
    m.allocate(100);
  }
  auto s = m.find("LOOP")->stats();
  EXPECT_EQ(s.learned_size, 0u);
  EXPECT_EQ(s.external_total, 3u);
  EXPECT_EQ(s.external_last_cycle, 1u);
}

TEST(WorkspaceManager, BypassEverythingFromTheEnvironment) {
  SystemHeapResource heap;
  WorkspaceManager before(&heap);
  auto existing = before.get_and_activate("OLD");
  existing.close();
  setenv("MEMTRAIL_WORKSPACES_DEBUG", "BYPASS_EVERYTHING", 1);
  WorkspaceManager m(&heap);
  setenv("MEMTRAIL_WORKSPACES_DEBUG", "LOUD", 1);
  std::string what;
  try {
    WorkspaceManager bad(&heap);
  } catch (const ConfigError& e) {
    what = e.what();
  }
  unsetenv("MEMTRAIL_WORKSPACES_DEBUG");
  EXPECT_EQ(what,
            "MEMTRAIL_WORKSPACES_DEBUG: unknown value 'LOUD' (expected DISABLED, "
            "SPILL_EVERYTHING, BYPASS_EVERYTHING)");
  EXPECT_EQ(m.debug_mode(), DebugMode::BYPASS_EVERYTHING);
  auto ws = m.get_and_activate("LOOP");
  EXPECT_EQ(ws.workspace(), nullptr);
  EXPECT_EQ(m.find("LOOP"), nullptr);
  WorkspaceBuffer b = m.allocate(100);
  EXPECT_FALSE(b.attached());
  EXPECT_NO_THROW(b.get());
  // Workspaces that existed before bypass is switched on keep working.
  before.set_debug_mode(DebugMode::BYPASS_EVERYTHING);
  auto old = before.get_and_activate("OLD");
  EXPECT_NE(old.workspace(), nullptr);
}

}  // namespace
