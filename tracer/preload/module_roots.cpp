// The modules' writable segments without the loader's lock (module_roots.hpp).
#include "module_roots.hpp"

#include <elf.h>
#include <link.h>
#include <sys/auxv.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "leak_scan.hpp"
#include "memtrail/recorder.hpp"

namespace memtrail::preload {
namespace {

// A module's program headers hold at most this many entries here.
constexpr int kMaxHeaders = 64;

// Fixed storage: filled at start-up, read at exit, never the heap's.
constexpr int kMaxOwn = 16;
MemoryRange g_own[kMaxOwn];
int g_own_count = 0;
MemoryRange g_own_tls[kMaxOwn];
int g_own_tls_count = 0;

// One code address in each of our modules: the preload and the recorder.
std::uintptr_t own_code(int i) {
  return i == 0 ? reinterpret_cast<std::uintptr_t>(&run_leak_scan)
                : reinterpret_cast<std::uintptr_t>(&memtrail::flush);
}

bool module_contains(const dl_phdr_info* info, std::uintptr_t address) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && address >= begin && address < begin + ph.p_memsz) return true;
  }
  return false;
}

int remember_if_own(dl_phdr_info* info, std::size_t, void*) {
  if (!module_contains(info, own_code(0)) && !module_contains(info, own_code(1))) return 0;
  const auto tp = reinterpret_cast<std::uintptr_t>(__builtin_thread_pointer());
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_W) != 0 && g_own_count < kMaxOwn) {
      g_own[g_own_count++] = {begin, begin + ph.p_memsz};
    } else if (ph.p_type == PT_TLS && info->dlpi_tls_data != nullptr && g_own_tls_count < kMaxOwn) {
      // Static TLS sits at the same offset from every thread's pointer.
      auto data_at = reinterpret_cast<std::uintptr_t>(info->dlpi_tls_data);
      g_own_tls[g_own_tls_count++] = {data_at - tp, data_at - tp + ph.p_memsz};
    }
  }
  return 0;
}

// A module's program headers, read through `reader`: from its ELF header,
// which its first segment maps at its load address; a program linked at a
// fixed address (load address 0) has them in the auxiliary vector.
int read_headers(const link_map& module, bool is_program, MemoryReader& reader, ElfW(Phdr) * out) {
  std::uintptr_t at = 0;
  std::size_t count = 0;
  ElfW(Ehdr) header;
  if (module.l_addr != 0 && reader.read(module.l_addr, &header, sizeof header) == sizeof header &&
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0 &&
      header.e_phentsize == sizeof(ElfW(Phdr))) {
    at = module.l_addr + header.e_phoff;
    count = header.e_phnum;
  } else if (is_program && module.l_addr == 0) {
    at = getauxval(AT_PHDR);
    count = getauxval(AT_PHNUM);
  }
  if (at == 0 || count == 0 || count > kMaxHeaders) return 0;
  std::size_t bytes = count * sizeof(ElfW(Phdr));
  return reader.read(at, out, bytes) == bytes ? static_cast<int>(count) : 0;
}

// The module's file: its name in the linker's list, or /proc/self/exe for
// the program (whose name there is empty). Empty when unreadable.
std::string module_path(const link_map& module, bool is_program, MemoryReader& reader) {
  if (is_program) return "/proc/self/exe";
  if (module.l_name == nullptr) return {};
  char name[4096];
  std::size_t got = reader.read(reinterpret_cast<std::uintptr_t>(module.l_name), name, sizeof name);
  const char* end = static_cast<const char*>(std::memchr(name, '\0', got));
  return end != nullptr ? std::string(name, static_cast<std::size_t>(end - name)) : std::string();
}

// The bytes that identify the loaded file: the ELF header (in the segment
// mapped from offset 0), the program headers and the notes (build ID).
std::vector<ImageCheck> identity_checks(const link_map& module, const ElfW(Phdr) * headers,
                                        int count) {
  constexpr std::uint32_t kMaxCheck = 4096;
  std::vector<ImageCheck> checks;
  for (int i = 0; i < count; ++i) {
    const auto& ph = headers[i];
    const std::uintptr_t at = module.l_addr + ph.p_vaddr;
    const auto length = static_cast<std::uint32_t>(std::min<std::uint64_t>(ph.p_filesz, kMaxCheck));
    if (ph.p_type == PT_LOAD && ph.p_offset == 0 && ph.p_filesz >= sizeof(ElfW(Ehdr)))
      checks.push_back({at, 0, sizeof(ElfW(Ehdr))});
    else if (ph.p_type == PT_PHDR || ph.p_type == PT_NOTE)
      checks.push_back({at, ph.p_offset, length});
  }
  return checks;
}

}  // namespace

void remember_own_modules() {
  g_own_count = 0;
  g_own_tls_count = 0;
  dl_iterate_phdr(remember_if_own, nullptr);
}

ModuleRoots module_roots(MemoryReader& reader) {
  ModuleRoots roots;
  roots.own.assign(g_own, g_own + g_own_count);
  roots.own_tls.assign(g_own_tls, g_own_tls + g_own_tls_count);
  std::uintptr_t next = reinterpret_cast<std::uintptr_t>(_r_debug.r_map);
  // A bound on the walk: a list left cyclic by a stopped dlopen ends too.
  for (int modules = 0; next != 0 && modules < 100000; ++modules) {
    link_map module;
    if (reader.read(next, &module, sizeof module) != sizeof module) break;
    ElfW(Phdr) headers[kMaxHeaders];
    int count = read_headers(module, modules == 0, reader, headers);
    std::string path;
    for (int i = 0; i < count; ++i) {
      const auto& ph = headers[i];
      if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W) == 0) continue;
      std::uintptr_t begin = module.l_addr + ph.p_vaddr;
      roots.writable.push_back({begin, begin + ph.p_memsz});
      if (path.empty()) path = module_path(module, modules == 0, reader);
      if (!path.empty() && ph.p_filesz > 0)
        roots.images.push_back(
            {begin, ph.p_filesz, ph.p_offset, path, identity_checks(module, headers, count)});
    }
    next = reinterpret_cast<std::uintptr_t>(module.l_next);
  }
  return roots;
}

}  // namespace memtrail::preload
