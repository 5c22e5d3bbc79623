// build_caller_callee(): every site's stack walked once, innermost first,
// adding its costs to each distinct function and each distinct call edge
// on it (memtrail/caller_callee.hpp). "Distinct" is kept by stamping each
// function and edge with the last site that counted it, so a recursion
// counts a stack once without a per-site set.
#include "memtrail/caller_callee.hpp"

#include <unordered_map>

#include "flat_map.hpp"
#include "memtrail/export.hpp"

namespace memtrail {

std::uint32_t CallerCallee::find(const std::string& name) const {
  for (std::uint32_t i = 0; i < functions.size(); ++i)
    if (functions[i].symbol.name == name) return i;
  return kNone;
}

std::size_t CallerCallee::edge_count() const {
  std::size_t n = 0;
  for (const FunctionCosts& f : functions) n += f.callees.size();
  return n;
}

std::size_t CallerCallee::memory_bytes() const {
  std::size_t bytes = functions.capacity() * sizeof(FunctionCosts);
  for (const FunctionCosts& f : functions)
    bytes += f.symbol.name.capacity() + f.symbol.file.capacity() + f.symbol.module.capacity() +
             (f.callers.capacity() + f.callees.capacity()) * sizeof(CallEdge);
  return bytes;
}

namespace {

constexpr std::size_t kUncounted = ~std::size_t{0};

struct Edge {
  std::uint32_t caller = 0, callee = 0;
  TreeCosts inclusive, self;
  std::size_t counted_for = kUncounted;  // the last site added
};

class Builder {
 public:
  explicit Builder(CallerCallee& out) : out_(out) {}

  // Adds the site numbered `site` (distinct per call) with its costs.
  void add(const Site& s, std::size_t site) {
    const TreeCosts cost = site_costs(s);
    out_.total += cost;
    ids_.clear();
    if (s.frames.empty()) ids_.push_back(function("(no stack)", nullptr));
    for (const Frame& f : s.frames) ids_.push_back(function(f));
    out_.functions[ids_[0]].self += cost;
    for (std::size_t i = 0; i < ids_.size(); ++i) {
      if (counted_for_[ids_[i]] != site) {
        counted_for_[ids_[i]] = site;
        out_.functions[ids_[i]].inclusive += cost;
      }
      if (i + 1 == ids_.size()) break;
      Edge& e = edge(ids_[i + 1], ids_[i]);
      if (i == 0) e.self += cost;  // the callee allocated itself
      if (e.counted_for == site) continue;
      e.counted_for = site;
      e.inclusive += cost;
    }
  }

  // Hands each edge to both of its ends.
  void finish() {
    for (const Edge& e : edges_) {
      out_.functions[e.callee].callers.push_back({e.caller, e.inclusive, e.self});
      out_.functions[e.caller].callees.push_back({e.callee, e.inclusive, e.self});
    }
  }

 private:
  // Interned once per Frame object (the sites share them) and once per name.
  std::uint32_t function(const Frame& f) {
    auto [id, fresh] = by_frame_.try_emplace(reinterpret_cast<std::uintptr_t>(&f));
    if (fresh) *id = function(folded_frame_name(f), &f);
    return *id;
  }
  std::uint32_t function(const std::string& name, const Frame* where) {
    const auto next = static_cast<std::uint32_t>(out_.functions.size());
    auto [it, fresh] = by_name_.try_emplace(name, next);
    if (fresh) {
      FunctionCosts fc;
      fc.symbol.name = name;
      if (where) {
        fc.symbol.file = where->file;
        fc.symbol.line = where->line;
        fc.symbol.module = where->module;
      }
      out_.functions.push_back(std::move(fc));
      counted_for_.push_back(kUncounted);
    }
    return it->second;
  }
  Edge& edge(std::uint32_t caller, std::uint32_t callee) {
    const std::uint64_t key = (std::uint64_t{caller} << 32) | callee;
    auto [index, fresh] = edge_index_.try_emplace(key);
    if (fresh) {
      *index = static_cast<std::uint32_t>(edges_.size());
      edges_.push_back({caller, callee, {}, {}, kUncounted});
    }
    return edges_[*index];
  }

  CallerCallee& out_;
  detail::AddressMap<std::uint32_t> by_frame_;  // Frame address -> function
  std::unordered_map<std::string, std::uint32_t> by_name_;
  std::vector<std::size_t> counted_for_;          // by function: the last site added
  detail::AddressMap<std::uint32_t> edge_index_;  // caller << 32 | callee -> edges_
  std::vector<Edge> edges_;
  std::vector<std::uint32_t> ids_;  // the current site's functions, innermost first
};

bool counts(const Analysis& a, const Site& s) {
  const PoolStats* p = a.pool(s.pool);
  return !(p && p->upstream) && !(site_costs(s) == TreeCosts{});
}

}  // namespace

CallerCallee build_caller_callee(const Analysis& a, const std::function<bool()>& keep_going) {
  CallerCallee out;
  Builder builder(out);
  for (std::size_t i = 0; i < a.sites.size(); ++i) {
    if (keep_going && (i + 1) % 4096 == 0 && !keep_going()) return {};
    if (counts(a, a.sites[i])) builder.add(a.sites[i], i);
  }
  builder.finish();
  return out;
}

}  // namespace memtrail
