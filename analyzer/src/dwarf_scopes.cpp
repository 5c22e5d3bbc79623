#include "dwarf_scopes.hpp"

#include <dwarf.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace memtrail {

namespace {

constexpr std::uint32_t kNone = UINT32_MAX;

// The tags whose children libdw's scope walk visits (libdw_visit_scopes.c).
bool may_have_scopes(int tag) {
  switch (tag) {
    case DW_TAG_compile_unit:
    case DW_TAG_module:
    case DW_TAG_lexical_block:
    case DW_TAG_with_stmt:
    case DW_TAG_catch_block:
    case DW_TAG_try_block:
    case DW_TAG_entry_point:
    case DW_TAG_inlined_subroutine:
    case DW_TAG_subprogram:
    case DW_TAG_namespace:
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
      return true;
    default:
      return false;
  }
}

// dwarf_getscopes itself, for what the index does not model.
int libdw_scopes(Dwarf_Die* cudie, Dwarf_Addr pc, std::vector<Dwarf_Die>& out) {
  Dwarf_Die* scopes = nullptr;
  int n = dwarf_getscopes(cudie, pc, &scopes);
  out.assign(scopes, scopes + std::max(n, 0));
  std::free(scopes);
  return n;
}

// dwarf_haspc as getscopes' pc_match reads it: 1 holds, 0 not; -1 is a
// libdw error that getscopes would stop on (left to libdw itself).
int holds(Dwarf_Die* die, Dwarf_Addr pc) {
  int r = dwarf_haspc(die, pc);
  if (r >= 0) return r;
  return dwarf_errno() == 0 ? 0 : -1;
}

}  // namespace

// DIEs are laid out in the walk's (pre)order: a walk's DIEs are sorted by
// address, and found by binary search.
static bool before(const Dwarf_Die& a, const void* addr) {
  return reinterpret_cast<std::uintptr_t>(a.addr) < reinterpret_cast<std::uintptr_t>(addr);
}

struct ScopeIndex::Unit {
  struct Node {
    Dwarf_Die die;
    std::uint32_t parent;  // index in `all`; kNone for the unit DIE
  };
  struct Range {
    Dwarf_Addr begin, end;
    std::uint32_t top;  // index in `tops`: lower = earlier in the unit
  };
  enum class Origin { error, elsewhere, found, unmodeled };

  bool modeled = true;  // false: every lookup goes to dwarf_getscopes
  Dwarf_Die root;
  std::vector<Dwarf_Die> tops;      // the unit DIE's children
  std::vector<Range> ranges;        // theirs, by begin
  std::vector<Dwarf_Addr> max_end;  // max end of ranges[0..i]
  // Every DIE libdw's search for an abstract definition can reach, walked
  // on the first definition that is not a top-level DIE (a lambda's, a
  // local class's): a whole unit is many times the top-level DIEs.
  std::vector<Node> all;
  bool walked = false;

  explicit Unit(Dwarf_Die* cudie) : root(*cudie) {
    modeled = dwarf_tag(cudie) == DW_TAG_compile_unit && read_top_level();
    if (modeled) sort_ranges();
  }

  bool read_top_level() {
    Dwarf_Die child;
    int r = dwarf_child(&root, &child);
    if (r != 0) return r > 0;
    do {
      if (dwarf_tag(&child) == DW_TAG_imported_unit) return false;  // dwz: left to libdw
      auto top = static_cast<std::uint32_t>(tops.size());
      tops.push_back(child);
      Dwarf_Addr base = 0, begin = 0, end = 0;
      std::ptrdiff_t off = 0;
      while ((off = dwarf_ranges(&child, off, &base, &begin, &end)) > 0)
        ranges.push_back(Range{begin, end, top});
      if (off < 0 && dwarf_errno() != 0) return false;
    } while ((r = dwarf_siblingof(&child, &child)) == 0);
    return r > 0;
  }

  void sort_ranges() {
    std::stable_sort(ranges.begin(), ranges.end(),
                     [](const Range& a, const Range& b) { return a.begin < b.begin; });
    max_end.resize(ranges.size());
    Dwarf_Addr m = 0;
    for (std::size_t i = 0; i < ranges.size(); ++i) max_end[i] = m = std::max(m, ranges[i].end);
  }

  // The first top-level DIE (in unit order) holding pc, or kNone.
  std::uint32_t top_level_at(Dwarf_Addr pc) const {
    auto upper = std::upper_bound(ranges.begin(), ranges.end(), pc,
                                  [](Dwarf_Addr a, const Range& r) { return a < r.begin; });
    std::uint32_t best = kNone;
    for (auto i = static_cast<std::size_t>(upper - ranges.begin()); i-- > 0 && max_end[i] > pc;)
      if (ranges[i].end > pc) best = std::min(best, ranges[i].top);
    return best;
  }

  // Below the top-level DIE: the first child holding pc, level by level.
  // false: a libdw error or an imported unit on the way.
  static bool descend(std::vector<Dwarf_Die>& chain, Dwarf_Addr pc) {
    for (;;) {
      Dwarf_Die* cur = &chain.back();
      if (!may_have_scopes(dwarf_tag(cur)) || dwarf_haschildren(cur) <= 0) return true;
      Dwarf_Die child;
      int r = dwarf_child(cur, &child);
      if (r != 0) return r > 0;
      int held = 0;
      do {
        if (dwarf_tag(&child) == DW_TAG_imported_unit) return false;
        held = holds(&child, pc);
        if (held < 0) return false;
      } while (held == 0 && (r = dwarf_siblingof(&child, &child)) == 0);
      if (held == 0) return r > 0;
      chain.push_back(child);
    }
  }

  // Every DIE below all[at] that libdw's scope walk visits, in its order.
  bool walk(std::uint32_t at) {
    Dwarf_Die child;
    int r = dwarf_child(&all[at].die, &child);
    if (r != 0) return r > 0;
    do {
      int tag = dwarf_tag(&child);
      if (tag == DW_TAG_imported_unit) return false;
      auto self = static_cast<std::uint32_t>(all.size());
      all.push_back(Node{child, at});
      if (may_have_scopes(tag) && dwarf_haschildren(&child) > 0 && !walk(self)) return false;
    } while ((r = dwarf_siblingof(&child, &child)) == 0);
    return r > 0;
  }

  // The scopes after the innermost inlined instance: those enclosing its
  // abstract definition (not the definition itself), out to the unit DIE.
  Origin append_origin_scopes(Dwarf_Die* inlined, std::vector<Dwarf_Die>& out) {
    Dwarf_Attribute attr_mem;
    Dwarf_Attribute* attr = dwarf_attr(inlined, DW_AT_abstract_origin, &attr_mem);
    Dwarf_Die origin;
    if (dwarf_formref_die(attr, &origin) == nullptr) return Origin::error;
    auto top = std::lower_bound(tops.begin(), tops.end(), origin.addr, before);
    if (top != tops.end() && top->addr == origin.addr) {
      out.push_back(root);
      return Origin::found;
    }
    if (!walked) {
      walked = true;
      all.push_back(Node{root, kNone});
      if (!walk(0)) all.clear();
    }
    if (all.empty()) return Origin::unmodeled;
    auto it = std::lower_bound(all.begin(), all.end(), origin.addr,
                               [](const Node& n, const void* addr) { return before(n.die, addr); });
    if (it == all.end() || it->die.addr != origin.addr) return Origin::elsewhere;
    for (std::uint32_t p = it->parent; p != kNone; p = all[p].parent) out.push_back(all[p].die);
    return Origin::found;
  }
};

ScopeIndex::ScopeIndex() = default;
ScopeIndex::~ScopeIndex() = default;
ScopeIndex::ScopeIndex(ScopeIndex&&) noexcept = default;
ScopeIndex& ScopeIndex::operator=(ScopeIndex&&) noexcept = default;

ScopeIndex::Unit& ScopeIndex::unit(Dwarf_Die* cudie) {
  auto& slot = units_[cudie->addr];
  if (!slot) slot = std::make_unique<Unit>(cudie);
  return *slot;
}

int ScopeIndex::scopes(Dwarf_Die* cudie, Dwarf_Addr pc, std::vector<Dwarf_Die>& out) {
  out.clear();
  if (cudie == nullptr) return -1;
  Unit& u = unit(cudie);
  if (!u.modeled) return libdw_scopes(cudie, pc, out);
  std::uint32_t top = u.top_level_at(pc);
  if (top == kNone) return 0;
  std::vector<Dwarf_Die> chain{u.root, u.tops[top]};  // outermost first
  if (!Unit::descend(chain, pc)) return libdw_scopes(cudie, pc, out);
  std::size_t inlined = 0;  // the innermost inlined instance's depth, 0: none
  for (std::size_t d = 1; d < chain.size(); ++d)
    if (dwarf_tag(&chain[d]) == DW_TAG_inlined_subroutine) inlined = d;
  out.assign(chain.rbegin(), chain.rend() - static_cast<std::ptrdiff_t>(inlined));
  if (inlined == 0) return static_cast<int>(out.size());
  switch (u.append_origin_scopes(&chain[inlined], out)) {
    case Unit::Origin::found:
      return static_cast<int>(out.size());
    case Unit::Origin::elsewhere:  // another unit's: dwarf_getscopes finds no scope
      out.clear();
      return 0;
    default:
      return libdw_scopes(cudie, pc, out);
  }
}

}  // namespace memtrail
