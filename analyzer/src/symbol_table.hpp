// Address -> ELF symbol name for one libdwfl module, by binary search.
//
// dwfl_module_addrinfo scans the module's whole symbol table on every call:
// a PyTorch trace (77,534 code addresses, libtorch_cpu's 34,926 exported
// symbols) spent 57 % of a 40 s report there. This table reads the symbols
// once (dwfl_module_getsym_info) and answers with the same name
// dwfl_module_addrinfo would give: the symbols whose [value, value + size)
// holds the address are found from a value-sorted array (a prefix maximum
// of the ends bounds the search back), and libdwfl's preference among them
// is applied in its order (globals first, locals only when no global holds
// the address; the closest start, then GLOBAL > WEAK > LOCAL, then the
// smaller size, else the first found). The rare cases that depend on its
// rules for size-0 labels (an address whose nearest symbol below is a label
// that nothing sized passes, or a global label exactly at the address) are
// passed to dwfl_module_addrinfo itself.
#pragma once

#include <cstdint>
#include <vector>

#include <elfutils/libdwfl.h>

namespace memtrail {

class SymbolTable {
 public:
  explicit SymbolTable(Dwfl_Module* mod);
  // dwfl_module_addrinfo(mod, pc, ...)'s return value.
  const char* name_at(std::uint64_t pc) const;
  std::size_t size() const { return by_value_.size(); }

 private:
  struct Sym {
    std::uint64_t value, end;  // end = value + st_size
    std::uint64_t order;       // libdwfl's visiting order: (pass, index)
    int bind_rank;             // GLOBAL 3 > WEAK 2 > LOCAL 1 > other 0
    bool local_pass;           // seen in the second pass (locals)
    const char* name;
  };
  const Sym* best_holding(std::uint64_t pc, bool local_pass, std::size_t upper,
                          bool& overflow) const;
  const char* slow(std::uint64_t pc) const;

  Dwfl_Module* mod_;
  std::vector<Sym> by_value_;           // by value, then order
  std::vector<std::uint64_t> max_end_;  // max end of by_value_[0..i]
  bool two_passes_ = false;
};

}  // namespace memtrail
