// One ELF file reported to libdwfl offline at a fixed base, as the
// symbolizer reports a module: the analyzer's symbol tests (symbol table,
// DWARF scopes) compare their answers with libdwfl's on it.
#pragma once

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace memtrail::test {

inline const Dwfl_Callbacks kCallbacks = {dwfl_build_id_find_elf, dwfl_standard_find_debuginfo,
                                          dwfl_offline_section_address, nullptr};
inline constexpr std::uint64_t kBase = 0x7f0000000000;

struct OpenModule {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* mod = nullptr;
  explicit OpenModule(const std::string& path) {
    dwfl = dwfl_begin(&kCallbacks);
    dwfl_report_begin(dwfl);
    mod = dwfl_report_elf(dwfl, path.c_str(), path.c_str(), -1, kBase, false);
    dwfl_report_end(dwfl, nullptr, nullptr);
  }
  ~OpenModule() { dwfl_end(dwfl); }
  const char* libdwfl_name(std::uint64_t pc) const {
    GElf_Off off;
    GElf_Sym sym;
    return dwfl_module_addrinfo(mod, pc, &off, &sym, nullptr, nullptr, nullptr);
  }
  // Every symbol's value and end, as libdwfl reads them.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> symbol_ranges() const {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
    int n = dwfl_module_getsymtab(mod);
    for (int i = 1; i < n; ++i) {
      GElf_Sym sym;
      GElf_Addr value;
      if (dwfl_module_getsym_info(mod, i, &sym, &value, nullptr, nullptr, nullptr))
        out.emplace_back(value, value + sym.st_size);
    }
    return out;
  }
};

}  // namespace memtrail::test
