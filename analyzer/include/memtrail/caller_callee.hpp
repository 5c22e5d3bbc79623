// Caller/callee: for each function, who calls it and whom it calls, with
// the call tree's five costs (heaptrack_gui's Caller/Callee tab), over the
// sites of an Analysis (the whole trace, or a range from
// Session::analyze_range, as build_call_tree takes one).
//
//   memtrail::CallerCallee cc = memtrail::build_caller_callee(a);
//   const FunctionCosts& f = cc.functions[cc.find("parse")];
//   for (const CallEdge& e : f.callers)
//     printf("%s %llu\n", cc.functions[e.function].symbol.name.c_str(),
//            e.inclusive[TreeCost::allocations]);
//
// A function is a frame name as the call tree names it (folded_frame_name,
// "(no stack)" for a site without a stack, which the call tree shows as the
// "[pool]" row itself when there are several pools); the "[pool]" nodes are
// no function and appear here nowhere. Like the call tree, only leaf pools'
// sites of some cost count.
//
// Costs, for a function F:
//   self:      the stacks whose innermost frame is F (what F allocated
//              itself) = F's row on the bottom-up tree's first level (under
//              its "[pool]" rows when there are several pools);
//   inclusive: the stacks with F anywhere, each stack counted once however
//              often F recurses in it = the sum of the top-down tree's nodes
//              named F that have no ancestor named F.
// For a call edge C -> F (C calls F directly in some stack):
//   inclusive: the stacks holding the edge, each once (a stack that repeats
//              C -> F, as a recursion does, counts once);
//   self:      of those, the stacks whose innermost frame is F called from
//              that C: F's self cost split by its direct callers.
// F's `callers` are its edges C -> F (named by C), its `callees` its edges
// F -> G (named by G); F -> F is in both lists. The sum of all functions'
// self costs is the total.
//
// Built in O(sites x depth), one pass; memory: one FunctionCosts per
// distinct function and one CallEdge on each side of each distinct edge
// (both at most the top-down tree's node count).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "memtrail/analysis.hpp"
#include "memtrail/call_tree.hpp"

namespace memtrail {

struct CallEdge {
  std::uint32_t function = 0;  // the other end: index into CallerCallee::functions
  TreeCosts inclusive;
  TreeCosts self;
};

struct FunctionCosts {
  TreeSymbol symbol;  // name, and where its first frame of that name was
  TreeCosts self, inclusive;
  std::vector<CallEdge> callers, callees;
};

struct CallerCallee {
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  std::vector<FunctionCosts> functions;  // in order of first appearance
  TreeCosts total;                       // = the call tree's total

  // The function named `name`, or kNone.
  std::uint32_t find(const std::string& name) const;
  // The distinct call edges (each is in its caller's callees and its
  // callee's callers).
  std::size_t edge_count() const;
  // Bytes held (functions, their strings and edge lists).
  std::size_t memory_bytes() const;
};

// `keep_going` (optional) is asked every 4096 sites; false stops and returns
// an empty result (no functions, zero total).
CallerCallee build_caller_callee(const Analysis& a, const std::function<bool()>& keep_going = {});

}  // namespace memtrail
