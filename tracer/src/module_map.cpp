#include "module_map.hpp"

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

std::string hex(const unsigned char* p, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += kDigits[p[i] >> 4];
    out += kDigits[p[i] & 15];
  }
  return out;
}

// The NT_GNU_BUILD_ID note of a loaded object, from its PT_NOTE segments.
std::string build_id_of(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    const unsigned char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      auto* nh = reinterpret_cast<const ElfW(Nhdr)*>(p);
      std::size_t name_size = (nh->n_namesz + 3) & ~3u, desc_size = (nh->n_descsz + 3) & ~3u;
      const unsigned char* name = p + sizeof(ElfW(Nhdr));
      const unsigned char* desc = name + name_size;
      if (desc + desc_size > end) break;
      if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
          std::equal(name, name + 4, reinterpret_cast<const unsigned char*>("GNU")))
        return hex(desc, nh->n_descsz);
      p = desc + desc_size;
    }
  }
  return {};
}

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

// One loaded object of dl_iterate_phdr (without a PT_LOAD: skipped).
int collect_module(dl_phdr_info* info, std::vector<ModuleInfo>& out) {
  ModuleInfo m;
  m.path = info->dlpi_name ? info->dlpi_name : "";
  m.load_address = info->dlpi_addr;
  m.start = UINT64_MAX;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    m.start = std::min<std::uint64_t>(m.start, info->dlpi_addr + ph.p_vaddr);
    m.end = std::max<std::uint64_t>(m.end, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  if (m.start == UINT64_MAX) return 0;
  m.build_id = build_id_of(info);
  out.push_back(std::move(m));
  return 0;
}

}  // namespace

void ModuleMap::rescan(const NewModule& on_new) {
  // No exception may leave the callback: unwinding through glibc's frames
  // loads libgcc_s, which under a tight address-space limit fails fatally
  // ("libgcc_s.so.1 must be installed"). A failed allocation stops the walk
  // and is thrown again out here.
  struct Walk {
    std::vector<ModuleInfo> modules;
    bool out_of_memory = false;
  } walk;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) -> int {
        auto* w = static_cast<Walk*>(data);
        try {
          return collect_module(info, w->modules);
        } catch (const std::bad_alloc&) {
          w->out_of_memory = true;
          return 1;
        }
      },
      &walk);
  if (walk.out_of_memory) throw std::bad_alloc();
  std::vector<ModuleInfo>& now = walk.modules;
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
