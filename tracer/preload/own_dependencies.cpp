#include "own_dependencies.hpp"

#include <elf.h>
#include <link.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>

#include "linker_blocks.hpp"
#include "memtrail/detail/recording.hpp"

namespace memtrail::preload {

namespace {

constexpr int kMaxObjects = 512;

struct Object {
  const char* base = "";  // file name without directories (matches DT_NEEDED)
  std::uint64_t begin = UINT64_MAX, end = 0;
  const char* strtab = nullptr;
  const ElfW(Dyn) * dynamic = nullptr;
  bool tracer = false, we_need = false, program_needs = false;
};

struct Objects {
  Object list[kMaxObjects];
  int count = 0;
};

int collect(dl_phdr_info* info, std::size_t, void* data) {
  auto* objects = static_cast<Objects*>(data);
  if (objects->count == kMaxObjects) return 1;
  Object& o = objects->list[objects->count++];
  const char* name = info->dlpi_name ? info->dlpi_name : "";
  const char* slash = std::strrchr(name, '/');
  o.base = slash ? slash + 1 : name;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD) {
      o.begin = std::min<std::uint64_t>(o.begin, info->dlpi_addr + ph.p_vaddr);
      o.end = std::max<std::uint64_t>(o.end, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
    } else if (ph.p_type == PT_DYNAMIC) {
      o.dynamic = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + ph.p_vaddr);
    }
  }
  for (const ElfW(Dyn)* d = o.dynamic; d && d->d_tag != DT_NULL; ++d) {
    if (d->d_tag != DT_STRTAB) continue;
    // ld.so relocates DT_STRTAB in place on x86-64; the vdso's is not.
    std::uint64_t at = d->d_un.d_ptr;
    if (at < info->dlpi_addr) at += info->dlpi_addr;
    o.strtab = reinterpret_cast<const char*>(at);
  }
  return 0;
}

// Marks `o` and, depth first, every object its DT_NEEDED entries name.
void mark(Objects& objects, Object& o, bool Object::*flag) {
  if (o.*flag) return;
  o.*flag = true;
  if (o.strtab == nullptr) return;
  for (const ElfW(Dyn)* d = o.dynamic; d && d->d_tag != DT_NULL; ++d) {
    if (d->d_tag != DT_NEEDED) continue;
    const char* needed = o.strtab + d->d_un.d_val;
    for (int i = 0; i < objects.count; ++i)
      if (std::strcmp(objects.list[i].base, needed) == 0) mark(objects, objects.list[i], flag);
  }
}

bool contains(const Object& o, std::uint64_t address) {
  return address >= o.begin && address < o.end;
}

}  // namespace

OwnDependencies::OwnDependencies() {
  static Objects objects;  // 512 entries: too big for a constructor's stack
  objects.count = 0;
  dl_iterate_phdr(collect, &objects);
  auto self = reinterpret_cast<std::uint64_t>(&collect);
  auto recorder = reinterpret_cast<std::uint64_t>(&detail::record_with_frames);
  int tracers = 0;
  for (int i = 0; i < objects.count; ++i) {
    Object& o = objects.list[i];
    o.tracer = contains(o, self) || contains(o, recorder);
    if (o.tracer && tracers < 2) tracer_[tracers++] = {o.begin, o.end};
  }
  for (int i = 0; i < objects.count; ++i)
    if (objects.list[i].tracer) {
      objects.list[i].we_need = false;
      mark(objects, objects.list[i], &Object::we_need);
    }
  for (int i = 0; i < objects.count; ++i)
    if (!objects.list[i].we_need) mark(objects, objects.list[i], &Object::program_needs);
  for (int i = 0; i < objects.count && count_ < kMaxRanges; ++i) {
    const Object& o = objects.list[i];
    if (o.we_need && !o.program_needs && !o.tracer) only_ours_[count_++] = {o.begin, o.end};
  }
}

bool OwnDependencies::only_ours(std::uint64_t ip) const {
  for (int i = 0; i < count_; ++i)
    if (ip >= only_ours_[i].begin && ip < only_ours_[i].end) return true;
  return false;
}

bool OwnDependencies::in_tracer(std::uint64_t ip) const {
  for (const Range& r : tracer_)
    if (ip >= r.begin && ip < r.end) return true;
  return false;
}

bool early_caller_only_ours(const void* caller) {
  // Static storage, built in place: no allocation and no guard variable
  // (libstdc++, whose guard functions those are, may be what is starting).
  alignas(OwnDependencies) static unsigned char storage[sizeof(OwnDependencies)];
  static std::atomic<int> state{0};  // 0: not read, 1: being read, 2: read
  // ld.so's calls come while it still loads objects: never ours, and the
  // graph is read only after them. Unknown ld.so (run as a command): no
  // call is taken for ours.
  if (!linker_range_known_early() || linker_caller(caller)) return false;
  int s = state.load(std::memory_order_acquire);
  if (s == 0 && state.compare_exchange_strong(s, 1, std::memory_order_acq_rel)) {
    new (storage) OwnDependencies();
    state.store(2, std::memory_order_release);
    s = 2;
  }
  if (s != 2) return false;  // another thread is reading the graph
  return reinterpret_cast<const OwnDependencies*>(storage)->only_ours(
      reinterpret_cast<std::uint64_t>(caller));
}

}  // namespace memtrail::preload
