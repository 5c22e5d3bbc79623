// open_module() (module_open.hpp).
#include "module_open.hpp"

#include <elfutils/libdw.h>

#include <utility>

namespace memtrail::detail {

namespace {

const Dwfl_Callbacks kOfflineCallbacks = {
    dwfl_build_id_find_elf,
    dwfl_standard_find_debuginfo,
    dwfl_offline_section_address,
    nullptr,
};

std::string to_hex(const unsigned char* bits, int len) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < len; ++i) {
    s.push_back(digits[bits[i] >> 4]);
    s.push_back(digits[bits[i] & 15]);
  }
  return s;
}

}  // namespace

OpenedModule open_module(const ModuleInfo& info, bool load_dwarf) {
  OpenedModule m;
  m.info = info;
  const std::string& path = info.path;
  if (path.empty() || path[0] != '/') return m;  // [vdso], anonymous code
  std::unique_ptr<Dwfl, DwflDeleter> dwfl(dwfl_begin(&kOfflineCallbacks));
  if (!dwfl) return m;
  dwfl_report_begin(dwfl.get());
  Dwfl_Module* mod =
      dwfl_report_elf(dwfl.get(), path.c_str(), path.c_str(), -1, info.load_address, false);
  dwfl_report_end(dwfl.get(), nullptr, nullptr);
  if (!mod) {
    m.warning = path + ": cannot read (" + dwfl_errmsg(-1) + "); frames show module+offset";
    return m;
  }
  if (!info.build_id.empty()) {
    const unsigned char* bits = nullptr;
    GElf_Addr vaddr = 0;
    int len = dwfl_module_build_id(mod, &bits, &vaddr);
    std::string actual = len > 0 ? to_hex(bits, len) : std::string();
    if (actual != info.build_id) {
      m.warning = path + ": build id mismatch (trace " + info.build_id + ", file " +
                  (actual.empty() ? "none" : actual) + "); frames show module+offset";
      return m;
    }
  }
  m.dwfl = std::move(dwfl);
  m.mod = mod;
  m.symbols = std::make_unique<SymbolTable>(mod);
  if (load_dwarf) {
    Dwarf_Addr bias = 0;
    dwfl_module_getdwarf(mod, &bias);  // no DWARF is no error: names only
  }
  return m;
}

}  // namespace memtrail::detail
