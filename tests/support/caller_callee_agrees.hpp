// Caller/callee costs recomputed from the call trees (memtrail/call_tree.hpp),
// independently of build_caller_callee's one-pass counting, so tests can say
// "caller/callee agrees with the call tree" for every function and edge:
//   self(F)          = F's rows on the bottom-up tree's first level (under
//                      "[pool]" when there are several pools; there, the
//                      self cost of a "[pool]" row is "(no stack)"'s);
//   inclusive(F)     = the top-down nodes named F with no ancestor named F;
//   inclusive(C->F)  = the top-down nodes F under a parent C with no C -> F
//                      pair above them;
//   self(C->F)       = the self costs of the top-down nodes F under a C.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "memtrail/call_tree.hpp"
#include "memtrail/caller_callee.hpp"

namespace memtrail::test {

struct TreeDerived {
  std::map<std::string, TreeCosts> self, inclusive;
  std::map<std::pair<std::string, std::string>, TreeCosts> edge_inclusive, edge_self;
};

inline bool is_pool(const CallTree& t, std::uint32_t n) {
  return n != CallTree::kRoot && t.symbols[t.nodes[n].symbol].pool;
}

// Whether an ancestor of `n` (its parent's chain) is named `name` and has
// a parent named `caller` ("" for any parent).
inline bool above(const CallTree& t, std::uint32_t n, const std::string& name,
                  const std::string* caller) {
  for (std::uint32_t m = t.nodes[n].parent; m != CallTree::kRoot; m = t.nodes[m].parent) {
    if (t.name(m) != name) continue;
    if (!caller) return true;
    const std::uint32_t p = t.nodes[m].parent;
    if (p != CallTree::kRoot && !is_pool(t, p) && t.name(p) == *caller) return true;
  }
  return false;
}

inline TreeDerived derive_from_trees(const CallTree& down, const CallTree& up) {
  TreeDerived d;
  for (std::uint32_t n = 1; n < up.nodes.size(); ++n) {
    // Under several pools a site without a stack ends at its "[pool]" row.
    if (is_pool(up, n) && !(up.self(n) == TreeCosts{})) {
      d.self["(no stack)"] += up.self(n);
      d.inclusive["(no stack)"] += up.self(n);
    }
    const std::uint32_t p = up.nodes[n].parent;
    if (!is_pool(up, n) && (p == CallTree::kRoot || is_pool(up, p)))
      d.self[up.name(n)] += up.nodes[n].inclusive;
  }
  for (std::uint32_t n = 1; n < down.nodes.size(); ++n) {
    if (is_pool(down, n)) continue;
    const std::string& f = down.name(n);
    if (!above(down, n, f, nullptr)) d.inclusive[f] += down.nodes[n].inclusive;
    const std::uint32_t p = down.nodes[n].parent;
    if (p == CallTree::kRoot || is_pool(down, p)) continue;
    const std::string& c = down.name(p);
    if (!above(down, n, f, &c)) d.edge_inclusive[{c, f}] += down.nodes[n].inclusive;
    d.edge_self[{c, f}] += down.self(n);
  }
  return d;
}

template <class Map>
void drop_zero(Map& m) {
  for (auto it = m.begin(); it != m.end();)
    it = it->second == TreeCosts{} ? m.erase(it) : std::next(it);
}

// "" when every function's and edge's costs equal the trees', else the
// first difference.
inline std::string caller_callee_disagreement(const CallerCallee& cc, const CallTree& down,
                                              const CallTree& up) {
  TreeDerived want = derive_from_trees(down, up);
  TreeDerived got;
  for (const FunctionCosts& f : cc.functions) {
    got.self[f.symbol.name] = f.self;
    got.inclusive[f.symbol.name] = f.inclusive;
    for (const CallEdge& e : f.callers) {
      const std::pair key{cc.functions[e.function].symbol.name, f.symbol.name};
      got.edge_inclusive[key] = e.inclusive;
      got.edge_self[key] = e.self;
    }
  }
  // A zero self cost is no row of the bottom-up tree's first level.
  drop_zero(got.self);
  drop_zero(got.edge_self);
  drop_zero(want.edge_self);
  if (cc.total != down.total()) return "total";
  if (got.self != want.self) return "self costs";
  if (got.inclusive != want.inclusive) return "inclusive costs";
  if (got.edge_inclusive != want.edge_inclusive) return "edge inclusive costs";
  if (got.edge_self != want.edge_self) return "edge self costs";
  // Callees are the same edges seen from the caller.
  for (const FunctionCosts& f : cc.functions)
    for (const CallEdge& e : f.callees) {
      const std::pair key{f.symbol.name, cc.functions[e.function].symbol.name};
      if (got.edge_inclusive[key] != e.inclusive || got.edge_self[key] != e.self)
        return "callee " + key.first + " -> " + key.second;
    }
  return "";
}

}  // namespace memtrail::test
