// Reads the dynamic linker's lists without its lock (link_map_walk.hpp).
#include "link_map_walk.hpp"

#include <elf.h>
#include <sys/auxv.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace memtrail::runtime {
namespace {

// Bounds on what is read: a list left cyclic or a name left unterminated by
// a dlclose in progress ends the walk there.
constexpr int kMaxObjects = 100000;
constexpr int kMaxNamespaces = 256;
constexpr int kMaxHeaders = 256;
constexpr std::size_t kMaxName = 4096;
constexpr std::size_t kMaxNotes = 65536;

// Copies `length` bytes at `address` of this process; false if any of it is
// not mapped readable (never a fault).
bool read_memory(std::uint64_t address, void* out, std::size_t length) {
  iovec local{out, length};
  iovec remote{reinterpret_cast<void*>(address), length};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(length);
}

template <typename T>
bool read_object(std::uint64_t address, T* out) {
  return read_memory(address, out, sizeof *out);
}

bool read_string(std::uint64_t address, std::string* out) {
  out->clear();
  char chunk[64];
  while (out->size() < kMaxName) {
    // A chunk may cross into an unmapped page: then byte by byte.
    std::size_t n = sizeof chunk;
    if (!read_memory(address, chunk, n)) {
      n = 1;
      if (!read_memory(address, chunk, 1)) return false;
    }
    const char* end = static_cast<const char*>(std::memchr(chunk, 0, n));
    if (end != nullptr) {
      out->append(chunk, static_cast<std::size_t>(end - chunk));
      return true;
    }
    out->append(chunk, n);
    address += n;
  }
  return false;
}

// A module's program headers: from its ELF header, which its first segment
// maps at its load address; a program linked at a fixed address (load
// address 0) has them in the auxiliary vector.
bool read_headers(const link_map& module, bool is_program, std::vector<ElfW(Phdr)>* out) {
  std::uint64_t at = 0;
  std::size_t count = 0;
  ElfW(Ehdr) header;
  if (module.l_addr != 0 && read_object(module.l_addr, &header) &&
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0 &&
      header.e_phentsize == sizeof(ElfW(Phdr))) {
    at = module.l_addr + header.e_phoff;
    count = header.e_phnum;
  } else if (is_program && module.l_addr == 0) {
    at = getauxval(AT_PHDR);
    count = getauxval(AT_PHNUM);
  }
  if (at == 0 || count == 0 || count > kMaxHeaders) return false;
  out->resize(count);
  return read_memory(at, out->data(), count * sizeof(ElfW(Phdr)));
}

std::string build_id_of(const LoadedObject& object) {
  std::vector<unsigned char> notes;
  for (const auto& ph : object.headers) {
    if (ph.p_type != PT_NOTE || ph.p_memsz == 0 || ph.p_memsz > kMaxNotes) continue;
    notes.resize(ph.p_memsz);
    if (!read_memory(object.load_address + ph.p_vaddr, notes.data(), notes.size())) continue;
    std::string id = build_id_in_notes(notes.data(), notes.size());
    if (!id.empty()) return id;
  }
  return {};
}

// One namespace's list, from its first link map.
void walk_list(std::uint64_t next, bool base_namespace, std::vector<LoadedObject>* out) {
  for (int i = 0; next != 0 && i < kMaxObjects; ++i) {
    link_map module;
    if (!read_object(next, &module)) return;
    next = reinterpret_cast<std::uint64_t>(module.l_next);
    LoadedObject object;
    object.load_address = module.l_addr;
    if (!read_headers(module, base_namespace && i == 0, &object.headers)) continue;
    if (module.l_name != nullptr &&
        !read_string(reinterpret_cast<std::uint64_t>(module.l_name), &object.name))
      continue;
    object.build_id = build_id_of(object);
    out->push_back(std::move(object));
  }
}

}  // namespace

std::string build_id_in_notes(const unsigned char* p, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const unsigned char* end = p + size;
  while (p + sizeof(ElfW(Nhdr)) <= end) {
    ElfW(Nhdr) nh;
    std::memcpy(&nh, p, sizeof nh);
    std::size_t name_size = (nh.n_namesz + 3) & ~3u, desc_size = (nh.n_descsz + 3) & ~3u;
    const unsigned char* name = p + sizeof(ElfW(Nhdr));
    const unsigned char* desc = name + name_size;
    if (name_size > size || desc_size > size || desc + desc_size > end) break;
    if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
      std::string out;
      for (std::size_t i = 0; i < nh.n_descsz; ++i) {
        out += kDigits[desc[i] >> 4];
        out += kDigits[desc[i] & 15];
      }
      return out;
    }
    p = desc + desc_size;
  }
  return {};
}

bool loaded_objects_without_lock(std::vector<LoadedObject>* out) {
  out->clear();
  const int saved_errno = errno;
  r_debug base;
  bool readable = read_object(reinterpret_cast<std::uint64_t>(&_r_debug), &base);
  errno = saved_errno;
  if (!readable) return false;
  // glibc 2.35+: r_version 2 chains one r_debug_extended per namespace.
  std::uint64_t at = reinterpret_cast<std::uint64_t>(&_r_debug);
  for (int ns = 0; at != 0 && ns < kMaxNamespaces; ++ns) {
    r_debug_extended d;
    std::memset(&d, 0, sizeof d);
    if (!read_memory(at, &d, ns == 0 && base.r_version < 2 ? sizeof(r_debug) : sizeof d)) break;
    walk_list(reinterpret_cast<std::uint64_t>(d.base.r_map), ns == 0, out);
    at = d.base.r_version >= 2 ? reinterpret_cast<std::uint64_t>(d.r_next) : 0;
  }
  errno = saved_errno;
  return true;
}

}  // namespace memtrail::runtime
