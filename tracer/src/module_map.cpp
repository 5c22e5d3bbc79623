#include "module_map.hpp"

#include "link_map_walk.hpp"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

namespace memtrail::runtime {

namespace {

std::string main_executable() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

// The file mapped at `address`, from /proc/self/maps: the kernel names it by
// its absolute path whatever spelling dlopen was given and wherever the
// process has chdir'ed since. Empty if not found.
std::string mapped_file_at(std::uint64_t address) {
  std::FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return {};
  std::string found;
  char line[PATH_MAX + 128];
  while (found.empty() && std::fgets(line, sizeof line, maps)) {
    unsigned long long begin = 0, end = 0;
    int path_at = 0;
    if (std::sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &begin, &end, &path_at) < 2) continue;
    if (address < begin || address >= end || line[path_at] != '/') continue;
    found = line + path_at;
    if (!found.empty() && found.back() == '\n') found.pop_back();
  }
  std::fclose(maps);
  return found;
}

// dlopen("./libplugin.so") leaves a relative name in the link map; the
// symbolizer runs later, elsewhere. Record the absolute path of the mapped
// file (the build id still vouches that it is the same file).
std::string absolute_path(const std::string& name, std::uint64_t mapped_address) {
  // A name without a slash (linux-vdso.so.1) is no file; ld.so keeps the
  // path it found for a library it searched for.
  if (name.front() == '/' || name.find('/') == std::string::npos) return name;
  std::string mapped = mapped_file_at(mapped_address);
  if (!mapped.empty()) return mapped;
  char resolved[PATH_MAX];
  return ::realpath(name.c_str(), resolved) ? std::string(resolved) : name;
}

// One loaded object of dl_iterate_phdr, read under the loader's lock.
int copy_object(dl_phdr_info* info, std::vector<LoadedObject>& out) {
  LoadedObject o;
  o.name = info->dlpi_name ? info->dlpi_name : "";
  o.load_address = info->dlpi_addr;
  o.headers.assign(info->dlpi_phdr, info->dlpi_phdr + info->dlpi_phnum);
  for (const ElfW(Phdr) & ph : o.headers) {
    if (ph.p_type != PT_NOTE || !o.build_id.empty()) continue;
    o.build_id = build_id_in_notes(
        reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr), ph.p_memsz);
  }
  out.push_back(std::move(o));
  return 0;
}

// The loaded objects by dl_iterate_phdr, which waits for the loader's lock:
// only where this process cannot read itself by process_vm_readv.
std::vector<LoadedObject> objects_under_lock() {
  // No exception may leave the callback: unwinding through glibc's frames
  // loads libgcc_s, which under a tight address-space limit fails fatally
  // ("libgcc_s.so.1 must be installed"). A failed allocation stops the walk
  // and is thrown again out here.
  struct Walk {
    std::vector<LoadedObject> objects;
    bool out_of_memory = false;
  } walk;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) -> int {
        auto* w = static_cast<Walk*>(data);
        try {
          return copy_object(info, w->objects);
        } catch (const std::bad_alloc&) {
          w->out_of_memory = true;
          return 1;
        }
      },
      &walk);
  if (walk.out_of_memory) throw std::bad_alloc();
  return std::move(walk.objects);
}

// A module of a loaded object (none without a PT_LOAD).
bool module_of(LoadedObject& o, ModuleInfo* m) {
  m->path = std::move(o.name);
  m->load_address = o.load_address;
  m->start = UINT64_MAX;
  for (const ElfW(Phdr) & ph : o.headers) {
    if (ph.p_type != PT_LOAD) continue;
    m->start = std::min<std::uint64_t>(m->start, o.load_address + ph.p_vaddr);
    m->end = std::max<std::uint64_t>(m->end, o.load_address + ph.p_vaddr + ph.p_memsz);
  }
  m->build_id = std::move(o.build_id);
  return m->start != UINT64_MAX;
}

}  // namespace

void ModuleMap::rescan(const NewModule& on_new) {
  std::vector<LoadedObject> objects;
  if (!loaded_objects_without_lock(&objects)) objects = objects_under_lock();
  std::vector<ModuleInfo> now;
  for (LoadedObject& o : objects) {
    ModuleInfo m;
    if (module_of(o, &m)) now.push_back(std::move(m));
  }
  ranges_.clear();
  for (ModuleInfo& m : now) {
    if (m.path.empty()) m.path = main_executable();  // the first entry is the program itself
    if (!m.path.empty()) m.path = absolute_path(m.path, m.start);
    ranges_.emplace_back(m.start, m.end);
    auto known = std::find_if(modules_.begin(), modules_.end(), [&](const ModuleInfo& k) {
      return k.path == m.path && k.load_address == m.load_address && k.start == m.start;
    });
    if (known != modules_.end()) continue;
    m.id = static_cast<std::uint32_t>(modules_.size() + 1);
    modules_.push_back(m);
    on_new(m);
  }
  std::sort(ranges_.begin(), ranges_.end());
}

bool ModuleMap::contains(std::uint64_t ip) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(),
                             std::make_pair(ip, std::uint64_t(UINT64_MAX)));
  if (it == ranges_.begin()) return false;
  --it;
  return ip >= it->first && ip < it->second;
}

}  // namespace memtrail::runtime
