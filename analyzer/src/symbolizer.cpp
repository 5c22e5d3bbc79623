// Offline symbolization with elfutils libdwfl: one Dwfl per module, reported
// at its recorded load address, so modules that reused each other's address
// range after dlclose/dlopen never confuse the lookup.
#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <unordered_map>
#include <utility>

#include "dwarf_scopes.hpp"
#include "memtrail/analysis.hpp"
#include "module_open.hpp"
#include "symbol_table.hpp"

namespace memtrail {

namespace {

std::string demangle(const char* name) {
  if (name == nullptr) return {};
  if (name[0] == '_' && name[1] == 'Z') {
    int status = 0;
    char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    if (status == 0 && out) {
      std::string s(out);
      std::free(out);
      return s;
    }
    std::free(out);
  }
  return name;
}

// Name of a subprogram or inlined_subroutine DIE, following abstract_origin
// and specification; the linkage name is preferred (it demangles to the full
// signature).
std::string die_function_name(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  for (int at : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name})
    if (dwarf_attr_integrate(die, at, &attr))
      if (const char* s = dwarf_formstring(&attr)) return demangle(s);
  return {};
}

}  // namespace

std::string Frame::describe() const {
  char buf[64];
  if (!function.empty()) {
    std::string s = function;
    if (!file.empty()) {
      s += " at " + file;
      if (line) s += ":" + std::to_string(line);
    }
    if (inlined) s += " (inlined)";
    return s;
  }
  if (!module.empty()) {
    std::snprintf(buf, sizeof buf, "+0x%llx", static_cast<unsigned long long>(offset));
    return module + buf;
  }
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(address));
  return buf;
}

struct Symbolizer::Impl {
  struct Module {
    ModuleInfo info;
    bool tried = false;
    std::unique_ptr<Dwfl, detail::DwflDeleter> dwfl;  // null: unusable, module+offset only
    Dwfl_Module* mod = nullptr;
    std::unique_ptr<SymbolTable> symbols;  // built on the module's first lookup
    ScopeIndex scopes;                     // each unit indexed on its first lookup
  };
  std::vector<Module> modules;
  std::vector<detail::OpenedModule> preopened;  // adopt_preopened(): taken by open()
  bool enabled = true;
  std::unordered_map<std::uint64_t, std::vector<Frame>> cache;  // key: ip, low bit = return address
  std::vector<std::string> warnings;
  std::vector<Dwarf_Die> scope_buffer;  // lookup's, kept to reuse its memory

  Module* module_for(std::uint64_t ip) {
    return const_cast<Module*>(std::as_const(*this).module_for(ip));
  }
  const Module* module_for(std::uint64_t ip) const {
    const Module* best = nullptr;
    for (const auto& m : modules)
      if (ip >= m.info.start && ip < m.info.end && (!best || m.info.id > best->info.id)) best = &m;
    return best;
  }

  void open(Module& m) {
    m.tried = true;
    detail::OpenedModule opened;
    auto pre = std::find_if(preopened.begin(), preopened.end(),
                            [&](const detail::OpenedModule& p) { return p.info == m.info; });
    if (pre != preopened.end()) {
      opened = std::move(*pre);
      preopened.erase(pre);
    } else {
      opened = detail::open_module(m.info, false);
    }
    if (!opened.warning.empty()) warnings.push_back(std::move(opened.warning));
    m.dwfl = std::move(opened.dwfl);
    m.mod = opened.mod;
    m.symbols = std::move(opened.symbols);
  }

  std::vector<Frame> lookup(std::uint64_t ip, bool return_address) {
    Frame base;
    base.address = ip;
    Module* m = module_for(ip);
    if (!m) return {base};
    base.module = m->info.path;
    base.offset = ip - m->info.load_address;
    if (!enabled) return {base};
    if (!m->tried) open(*m);
    if (!m->mod) return {base};
    // A return address points after the call; ip-1 is inside it, so the
    // line and the inlining chain are those of the call itself.
    Dwarf_Addr pc = return_address && ip > 0 ? ip - 1 : ip;
    const char* sym_name = m->symbols->name_at(pc);  // dwfl_module_addrinfo's answer
    std::string file;
    int line = 0;
    if (Dwfl_Line* l = dwfl_module_getsrc(m->mod, pc))
      if (const char* f = dwfl_lineinfo(l, nullptr, &line, nullptr, nullptr, nullptr)) file = f;

    std::vector<Frame> frames;
    Dwarf_Addr bias = 0;
    Dwarf_Die* cudie = dwfl_module_addrdie(m->mod, pc, &bias);
    std::vector<Dwarf_Die>& scopes = scope_buffer;
    int n = cudie ? m->scopes.scopes(cudie, pc - bias, scopes) : 0;
    Dwarf_Files* files = nullptr;
    size_t nfiles = 0;
    bool have_files = cudie && dwarf_getsrcfiles(cudie, &files, &nfiles) == 0;
    for (int i = 0; i < n; ++i) {
      int tag = dwarf_tag(&scopes[i]);
      if (tag == DW_TAG_inlined_subroutine) {
        Frame f = base;
        f.function = die_function_name(&scopes[i]);
        f.file = file;
        f.line = static_cast<std::uint32_t>(line);
        f.inlined = true;
        frames.push_back(f);
        // The caller's location is the inlined call site.
        Dwarf_Attribute attr;
        Dwarf_Word value = 0;
        file.clear();
        line = 0;
        if (have_files && dwarf_attr(&scopes[i], DW_AT_call_file, &attr) &&
            dwarf_formudata(&attr, &value) == 0 && value < nfiles)
          if (const char* f2 = dwarf_filesrc(files, value, nullptr, nullptr)) file = f2;
        if (dwarf_attr(&scopes[i], DW_AT_call_line, &attr) && dwarf_formudata(&attr, &value) == 0)
          line = static_cast<int>(value);
      } else if (tag == DW_TAG_subprogram) {
        break;
      }
    }
    Frame outer = base;
    outer.function = sym_name ? demangle(sym_name) : std::string();
    if (outer.function.empty() && n > 0)
      for (int i = 0; i < n && outer.function.empty(); ++i)
        if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
          outer.function = die_function_name(&scopes[i]);
    outer.file = file;
    outer.line = static_cast<std::uint32_t>(line);
    frames.push_back(outer);
    return frames;
  }
};

Symbolizer::Symbolizer() : impl_(std::make_unique<Impl>()) {}
Symbolizer::~Symbolizer() = default;

void Symbolizer::add_module(const ModuleInfo& module) {
  for (auto& m : impl_->modules)
    if (m.info.id == module.id) {
      m = Impl::Module{module, false, nullptr, nullptr, nullptr, {}};
      impl_->cache.clear();
      return;
    }
  impl_->modules.push_back(Impl::Module{module, false, nullptr, nullptr, nullptr, {}});
}

void Symbolizer::set_enabled(bool enabled) {
  if (impl_->enabled != enabled) impl_->cache.clear();
  impl_->enabled = enabled;
}

const std::vector<Frame>& Symbolizer::resolve(std::uint64_t ip, bool return_address) {
  std::uint64_t key = (ip << 1) | (return_address ? 1 : 0);
  auto it = impl_->cache.find(key);
  if (it != impl_->cache.end()) return it->second;
  return impl_->cache.emplace(key, impl_->lookup(ip, return_address)).first->second;
}

void Symbolizer::adopt_preopened(std::vector<detail::OpenedModule> modules) {
  for (auto& m : modules) impl_->preopened.push_back(std::move(m));
}

bool Symbolizer::read_module_of(std::uint64_t ip) const {
  const Impl::Module* m = impl_->module_for(ip);
  return m && m->mod;
}

const std::vector<std::string>& Symbolizer::warnings() const {
  return impl_->warnings;
}

}  // namespace memtrail
