// dwarf_getscopes' answer from a per-compilation-unit index, built once.
//
// dwarf_getscopes walks the unit from its root for every address: it tests
// each top-level DIE's ranges (dwarf_haspc) until one holds the pc, and for
// a pc inside inlined code it then searches the unit again for the inlined
// function's abstract definition. On node's trace that walk was 39 % of a
// cold `memtrail report` (~0.19 s). This index reads a unit once: every DIE
// that walk can reach (with its parent, for the abstract definition's
// enclosing scopes) and the ranges of the top-level DIEs, sorted. A lookup
// is then a binary search plus the descent inside one function.
//
// The answer is dwarf_getscopes' exactly (same count, same DIEs, same
// order; tests/analyzer/test_dwarf_scopes.cpp compares them address by
// address): the first top-level DIE in unit order that holds the pc, the
// first child holding it at each level below (only into the tags libdw
// descends), and past the innermost inlined instance the scopes enclosing
// its abstract definition. Whatever the emulation does not model (a libdw
// error, an imported unit as dwz writes them) is answered by
// dwarf_getscopes itself.
#pragma once

#include <elfutils/libdw.h>

#include <memory>
#include <unordered_map>
#include <vector>

namespace memtrail {

class ScopeIndex {
 public:
  ScopeIndex();
  ~ScopeIndex();
  ScopeIndex(ScopeIndex&&) noexcept;
  ScopeIndex& operator=(ScopeIndex&&) noexcept;
  // dwarf_getscopes(cudie, pc, ...)'s return value; `out` holds its scopes,
  // innermost first, when that is > 0.
  int scopes(Dwarf_Die* cudie, Dwarf_Addr pc, std::vector<Dwarf_Die>& out);

 private:
  struct Unit;
  Unit& unit(Dwarf_Die* cudie);
  std::unordered_map<const void*, std::unique_ptr<Unit>> units_;  // by the unit DIE's address
};

}  // namespace memtrail
