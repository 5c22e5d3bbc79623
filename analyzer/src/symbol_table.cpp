#include "symbol_table.hpp"

#include <gelf.h>

#include <algorithm>

namespace memtrail {

namespace {

int bind_rank(const GElf_Sym& s) {
  switch (GELF_ST_BIND(s.st_info)) {
    case STB_GLOBAL:
      return 3;
    case STB_WEAK:
      return 2;
    case STB_LOCAL:
      return 1;
    default:
      return 0;
  }
}

// The symbols dwfl_module_addrinfo considers at all.
bool searchable(const char* name, const GElf_Sym& s) {
  int type = GELF_ST_TYPE(s.st_info);
  return name && name[0] != '\0' && s.st_shndx != SHN_UNDEF && type != STT_SECTION &&
         type != STT_FILE && type != STT_TLS;
}

}  // namespace

SymbolTable::SymbolTable(Dwfl_Module* mod) : mod_(mod) {
  int count = dwfl_module_getsymtab(mod);
  int first_global = count < 0 ? -1 : dwfl_module_getsymtab_first_global(mod);
  if (count < 0 || first_global < 0) return;
  // libdwfl visits [max(first_global, 1), count) first, then [1, first_global).
  two_passes_ = first_global > 1;
  for (int i = 1; i < count; ++i) {
    GElf_Sym sym;
    GElf_Addr value = 0;
    GElf_Word shndx = 0;
    const char* name = dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, nullptr, nullptr);
    if (!searchable(name, sym)) continue;
    bool local_pass = two_passes_ && i < first_global;
    by_value_.push_back(Sym{value, value + sym.st_size,
                            (std::uint64_t{local_pass} << 32) | static_cast<std::uint32_t>(i),
                            bind_rank(sym), local_pass, name});
  }
  std::sort(by_value_.begin(), by_value_.end(), [](const Sym& a, const Sym& b) {
    return a.value != b.value ? a.value < b.value : a.order < b.order;
  });
  max_end_.resize(by_value_.size());
  std::uint64_t m = 0;
  for (std::size_t i = 0; i < by_value_.size(); ++i)
    max_end_[i] = m = std::max(m, by_value_[i].end);
}

// libdwfl's choice among the sized symbols of one pass that hold pc, taken
// in its visiting order; by_value_[0..upper) are those at or below pc.
const SymbolTable::Sym* SymbolTable::best_holding(std::uint64_t pc, bool local_pass,
                                                  std::size_t upper, bool& overflow) const {
  const Sym* holding[64];
  std::size_t n = 0;
  for (std::size_t i = upper; i-- > 0 && max_end_[i] > pc;) {
    const Sym& s = by_value_[i];
    if (s.end > pc && s.end != s.value && s.local_pass == local_pass) {
      if (n == std::size(holding)) {  // pathological: let libdwfl decide
        overflow = true;
        return nullptr;
      }
      holding[n++] = &s;
    }
  }
  std::sort(holding, holding + n, [](const Sym* a, const Sym* b) { return a->order < b->order; });
  const Sym* best = nullptr;
  for (std::size_t k = 0; k < n; ++k) {
    const Sym* s = holding[k];
    std::uint64_t size = s->end - s->value, best_size = best ? best->end - best->value : 0;
    if (!best || best->value < s->value || best->bind_rank < s->bind_rank ||
        (best->value == s->value && ((best_size > size && best->bind_rank <= s->bind_rank) ||
                                     (best_size >= size && best->bind_rank < s->bind_rank))))
      best = s;
  }
  return best;
}

const char* SymbolTable::slow(std::uint64_t pc) const {
  GElf_Off off = 0;
  GElf_Sym sym;
  return dwfl_module_addrinfo(mod_, pc, &off, &sym, nullptr, nullptr, nullptr);
}

const char* SymbolTable::name_at(std::uint64_t pc) const {
  std::size_t upper = static_cast<std::size_t>(
      std::upper_bound(by_value_.begin(), by_value_.end(), pc,
                       [](std::uint64_t a, const Sym& s) { return a < s.value; }) -
      by_value_.begin());
  if (upper == 0) return nullptr;
  if (max_end_[upper - 1] > pc) {  // some sized symbol holds pc
    for (bool local_pass : {false, true}) {
      if (local_pass && !two_passes_) break;
      // libdwfl skips the locals when a global label sits exactly at pc.
      if (local_pass)
        for (std::size_t i = upper; i-- > 0 && by_value_[i].value == pc;)
          if (!by_value_[i].local_pass && by_value_[i].end == pc) return slow(pc);
      bool overflow = false;
      const Sym* s = best_holding(pc, local_pass, upper, overflow);
      if (overflow) return slow(pc);
      if (s) return s->name;
    }
  }
  // Nothing sized holds pc. A size-0 label can answer only if it is the
  // nearest symbol at or below pc and nothing visited ends past it.
  if (max_end_[upper - 1] == by_value_[upper - 1].value) return slow(pc);
  return nullptr;
}

}  // namespace memtrail
