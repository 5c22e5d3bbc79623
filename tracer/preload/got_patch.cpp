// GOT patching for `memtrail attach` (see got_patch.hpp).
#include "got_patch.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <mutex>

namespace memtrail::preload {

namespace {

// The allocation functions our interposers replace, by symbol name.
constexpr const char* kHooked[] = {
    "malloc", "free", "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc",
    "memalign", "valloc", "pvalloc",
    // The "mmap" pool's segments (hooks_system.cpp).
    "mmap", "mmap64", "munmap", "mremap",
    // operator new / delete: plain, array, nothrow, aligned, sized.
    "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t", "_ZnwmSt11align_val_t",
    "_ZnamSt11align_val_t", "_ZnwmSt11align_val_tRKSt9nothrow_t",
    "_ZnamSt11align_val_tRKSt9nothrow_t", "_ZdlPv", "_ZdaPv", "_ZdlPvm", "_ZdaPvm",
    "_ZdlPvSt11align_val_t", "_ZdaPvSt11align_val_t", "_ZdlPvmSt11align_val_t",
    "_ZdaPvmSt11align_val_t", "_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t",
    "_ZdlPvSt11align_val_tRKSt9nothrow_t", "_ZdaPvSt11align_val_tRKSt9nothrow_t"};
constexpr std::size_t kHookCount = sizeof kHooked / sizeof kHooked[0];
// kHooked[kFirstMmapHook .. kFirstMmapHook + 4) are the mmap family.
constexpr int kFirstMmapHook = 10;

void* g_hook[kHookCount];  // our interposer for each name

// A written slot and what it held; restored on detach. Static storage: the
// patching runs inside the target, where allocating would be traced.
struct Patched {
  void** slot;
  void* original;
  void* hook;  // what we wrote: a slot holding something else is left alone
  bool relro;  // made writable for the write only
};
constexpr std::size_t kMaxPatched = 8192;
Patched g_patched[kMaxPatched];
std::size_t g_patched_count = 0;
std::mutex g_mutex;

int hook_index(const char* name) {
  for (std::size_t i = 0; i < kHookCount; ++i)
    if (std::strcmp(name, kHooked[i]) == 0) return static_cast<int>(i);
  return -1;
}

bool find_hooks() {
  Dl_info self;
  if (dladdr(reinterpret_cast<void*>(&find_hooks), &self) == 0 || self.dli_fname == nullptr)
    return false;
  // A handle to ourselves: dlsym on it finds our definitions first.
  void* handle = dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  for (std::size_t i = 0; i < kHookCount; ++i) g_hook[i] = dlsym(handle, kHooked[i]);
  dlclose(handle);
  return g_hook[0] != nullptr && g_hook[1] != nullptr;
}

// Writes `value` into `slot`, making its page writable for the write when
// RELRO left it read-only.
bool write_slot(void** slot, void* value, bool relro) {
  if (!relro) {
    __atomic_store_n(slot, value, __ATOMIC_RELEASE);
    return true;
  }
  long page = sysconf(_SC_PAGESIZE);
  auto base = reinterpret_cast<std::uintptr_t>(slot) & ~static_cast<std::uintptr_t>(page - 1);
  void* start = reinterpret_cast<void*>(base);
  if (mprotect(start, static_cast<std::size_t>(page), PROT_READ | PROT_WRITE) != 0) return false;
  __atomic_store_n(slot, value, __ATOMIC_RELEASE);
  mprotect(start, static_cast<std::size_t>(page), PROT_READ);
  return true;
}

struct Module {
  ElfW(Addr) base = 0;
  const ElfW(Phdr) * phdr = nullptr;
  ElfW(Half) phnum = 0;
};

bool in_relro(const Module& m, std::uintptr_t address) {
  for (ElfW(Half) i = 0; i < m.phnum; ++i) {
    const ElfW(Phdr)& p = m.phdr[i];
    if (p.p_type != PT_GNU_RELRO) continue;
    std::uintptr_t begin = m.base + p.p_vaddr;
    if (address >= begin && address < begin + p.p_memsz) return true;
  }
  return false;
}

// route_own_modules_to_interposers(): heap functions only, for good (not
// recorded for restore_allocation_slots).
bool g_routing = false;

// route_named_slots(): these names, these targets, instead of the hooks.
const char* const* g_named = nullptr;
void* const* g_named_targets = nullptr;
int g_named_count = 0;

// What a slot naming `name` should hold; nullptr: leave it.
void* target_for(const char* name) {
  if (g_named_count > 0) {
    for (int i = 0; i < g_named_count; ++i)
      if (std::strcmp(name, g_named[i]) == 0) return g_named_targets[i];
    return nullptr;
  }
  int hook = hook_index(name);
  if (hook < 0) return nullptr;
  if (g_routing && hook >= kFirstMmapHook && hook < kFirstMmapHook + 4) return nullptr;
  return g_hook[hook];
}

// Patches the RELA table [rela, rela + bytes) of module `m`.
int patch_table(const Module& m, const ElfW(Rela) * rela, std::size_t bytes,
                const ElfW(Sym) * symtab, const char* strtab) {
  int written = 0;
  for (std::size_t i = 0; i < bytes / sizeof(ElfW(Rela)); ++i) {
    auto type = ELF64_R_TYPE(rela[i].r_info);
    if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
    const ElfW(Sym)& sym = symtab[ELF64_R_SYM(rela[i].r_info)];
    void* target = target_for(strtab + sym.st_name);
    if (target == nullptr) continue;
    auto** slot = reinterpret_cast<void**>(m.base + rela[i].r_offset);
    void* current = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (current == target || (!g_routing && g_patched_count == kMaxPatched)) continue;
    bool relro = in_relro(m, reinterpret_cast<std::uintptr_t>(slot));
    if (!write_slot(slot, target, relro)) continue;
    if (!g_routing) g_patched[g_patched_count++] = {slot, current, target, relro};
    ++written;
  }
  return written;
}

struct Walk {
  ElfW(Addr) self_base = 0;
  int written = 0;
  // Routing: patch only the modules this says (by an address inside them).
  bool (*wanted)(std::uint64_t address) = nullptr;
};

std::uint64_t first_load_address(const dl_phdr_info* info) {
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_LOAD) return info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
  return 0;
}

int patch_module(dl_phdr_info* info, std::size_t, void* data) {
  auto* walk = static_cast<Walk*>(data);
  const char* name = info->dlpi_name ? info->dlpi_name : "";
  if (walk->wanted != nullptr) {
    if (!walk->wanted(first_load_address(info))) return 0;
  } else if (info->dlpi_addr == walk->self_base) {  // ourselves
    return 0;
  }
  // ld.so and the vDSO.
  if (std::strstr(name, "/ld-linux") != nullptr || std::strstr(name, "linux-vdso") != nullptr)
    return 0;
  Module m{info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum};
  const ElfW(Dyn)* dyn = nullptr;
  for (ElfW(Half) i = 0; i < m.phnum; ++i)
    if (m.phdr[i].p_type == PT_DYNAMIC)
      dyn = reinterpret_cast<const ElfW(Dyn)*>(m.base + m.phdr[i].p_vaddr);
  if (dyn == nullptr) return 0;
  const ElfW(Sym)* symtab = nullptr;
  const char* strtab = nullptr;
  const ElfW(Rela)* jmprel = nullptr;
  const ElfW(Rela)* rela = nullptr;
  std::size_t jmprel_bytes = 0, rela_bytes = 0;
  // ld.so has already relocated the d_ptr entries to addresses.
  for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB:
        symtab = reinterpret_cast<const ElfW(Sym)*>(d->d_un.d_ptr);
        break;
      case DT_STRTAB:
        strtab = reinterpret_cast<const char*>(d->d_un.d_ptr);
        break;
      case DT_JMPREL:
        jmprel = reinterpret_cast<const ElfW(Rela)*>(d->d_un.d_ptr);
        break;
      case DT_PLTRELSZ:
        jmprel_bytes = d->d_un.d_val;
        break;
      case DT_RELA:
        rela = reinterpret_cast<const ElfW(Rela)*>(d->d_un.d_ptr);
        break;
      case DT_RELASZ:
        rela_bytes = d->d_un.d_val;
        break;
      default:
        break;
    }
  }
  if (symtab == nullptr || strtab == nullptr) return 0;
  if (jmprel) walk->written += patch_table(m, jmprel, jmprel_bytes, symtab, strtab);
  if (rela) walk->written += patch_table(m, rela, rela_bytes, symtab, strtab);
  return 0;
}

}  // namespace

int patch_allocation_slots() {
  std::lock_guard lock(g_mutex);
  if (g_hook[0] == nullptr && !find_hooks()) return -1;
  Dl_info self;
  if (dladdr(reinterpret_cast<void*>(&find_hooks), &self) == 0) return -1;
  Walk walk{reinterpret_cast<ElfW(Addr)>(self.dli_fbase)};
  dl_iterate_phdr(&patch_module, &walk);
  return walk.written;
}

int route_modules_to_interposers(bool (*wanted)(std::uint64_t address)) {
  std::lock_guard lock(g_mutex);
  if (g_hook[0] == nullptr && !find_hooks()) return -1;
  Walk walk;
  walk.wanted = wanted;
  g_routing = true;
  dl_iterate_phdr(&patch_module, &walk);
  g_routing = false;
  return walk.written;
}

int route_named_slots(bool (*wanted)(std::uint64_t address), const char* const* names,
                      void* const* targets, int count) {
  std::lock_guard lock(g_mutex);
  Walk walk;
  walk.wanted = wanted;
  g_routing = true;
  g_named = names;
  g_named_targets = targets;
  g_named_count = count;
  dl_iterate_phdr(&patch_module, &walk);
  g_named_count = 0;
  g_routing = false;
  return walk.written;
}

// True when `address` lies in a loaded module's PT_LOAD segment: a module
// dlclose'd since it was patched is unmapped, and its slots must not be
// written (nor read).
static bool in_loaded_module(std::uintptr_t address) {
  struct Find {
    std::uintptr_t address;
    bool found = false;
  } find{address};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* f = static_cast<Find*>(data);
        for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& p = info->dlpi_phdr[i];
          std::uintptr_t begin = info->dlpi_addr + p.p_vaddr;
          if (p.p_type == PT_LOAD && f->address >= begin && f->address < begin + p.p_memsz) {
            f->found = true;
            return 1;
          }
        }
        return 0;
      },
      &find);
  return find.found;
}

int module_generation() {
  unsigned long long generation = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        *static_cast<unsigned long long*>(data) = info->dlpi_adds;
        return 1;  // every module reports the same counters
      },
      &generation);
  return static_cast<int>(generation);
}

int restore_allocation_slots() {
  std::lock_guard lock(g_mutex);
  int restored = 0;
  // Newest first: of two entries for one slot (a module unloaded and another
  // loaded there), the newest restores it and the older finds no hook.
  while (g_patched_count > 0) {
    Patched& p = g_patched[--g_patched_count];
    auto address = reinterpret_cast<std::uintptr_t>(p.slot);
    if (!in_loaded_module(address) || __atomic_load_n(p.slot, __ATOMIC_ACQUIRE) != p.hook) continue;
    if (write_slot(p.slot, p.original, p.relro)) ++restored;
  }
  return restored;
}

}  // namespace memtrail::preload
