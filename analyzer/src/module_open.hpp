// Opening one module of the traced process for symbolization: its ELF file
// through libdwfl (reported at its recorded load address), its build id
// checked, its symbol table sorted. The Symbolizer opens a module on its
// first lookup; the ModulePreloader (module_preloader.hpp) may have opened it
// already on another thread while the trace was read.
#pragma once

#include <elfutils/libdwfl.h>

#include <memory>
#include <string>

#include "memtrail/event.hpp"
#include "symbol_table.hpp"

namespace memtrail::detail {

struct DwflDeleter {
  void operator()(Dwfl* d) const { dwfl_end(d); }
};

struct OpenedModule {
  ModuleInfo info;
  std::unique_ptr<Dwfl, DwflDeleter> dwfl;  // null: unusable, module+offset only
  Dwfl_Module* mod = nullptr;
  std::unique_ptr<SymbolTable> symbols;
  // Why the file cannot be used ("cannot read", "build id mismatch"), or
  // empty. Said by the Symbolizer when it first looks into the module, so
  // warnings keep the order of the lookups wherever the module was opened.
  std::string warning;
};

// Reads `info`'s file. `load_dwarf` also loads its DWARF now (with
// compressed debug sections, libdw inflates them all here), which the first
// line lookup would otherwise do: the preloader's work ahead of the lookups.
// Touches no state but its own: modules may be opened on any thread, one
// thread per module at a time.
OpenedModule open_module(const ModuleInfo& info, bool load_dwarf);

}  // namespace memtrail::detail
