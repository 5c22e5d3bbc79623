// Recognising AddressSanitizer binaries (run_asan.hpp).
#include "run_asan.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

namespace memtrail::cli {

namespace {

std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    auto colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) return "";
    dirs.remove_prefix(colon + 1);
  }
}

// True when the 64-bit ELF image [data, data + size) has a dynamic symbol
// named __asan_init (gcc's instrumented code calls it from the shared
// runtime; clang's static runtime exports it).
bool names_asan_init(const unsigned char* data, std::size_t size) {
  if (size < sizeof(Elf64_Ehdr) || std::memcmp(data, ELFMAG, SELFMAG) != 0 ||
      data[EI_CLASS] != ELFCLASS64)
    return false;
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(data);
  if (eh->e_shoff == 0 || eh->e_shoff + eh->e_shnum * sizeof(Elf64_Shdr) > size) return false;
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(data + eh->e_shoff);
  for (int i = 0; i < eh->e_shnum; ++i) {
    const Elf64_Shdr& symtab = sections[i];
    if (symtab.sh_type != SHT_DYNSYM || symtab.sh_link >= eh->e_shnum) continue;
    const Elf64_Shdr& strtab = sections[symtab.sh_link];
    if (symtab.sh_offset + symtab.sh_size > size || strtab.sh_offset + strtab.sh_size > size)
      return false;
    const auto* syms = reinterpret_cast<const Elf64_Sym*>(data + symtab.sh_offset);
    const char* names = reinterpret_cast<const char*>(data + strtab.sh_offset);
    for (std::size_t s = 0; s < symtab.sh_size / sizeof(Elf64_Sym); ++s) {
      if (syms[s].st_name >= strtab.sh_size) continue;
      std::string_view name(names + syms[s].st_name,
                            strnlen(names + syms[s].st_name, strtab.sh_size - syms[s].st_name));
      if (name == "__asan_init") return true;
    }
  }
  return false;
}

}  // namespace

std::string asan_refusal(const std::string& program) {
  std::string path = find_program(program);
  if (path.empty()) return "";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  struct stat st;
  bool asan = false;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    void* image =
        ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (image != MAP_FAILED) {
      asan = names_asan_init(static_cast<const unsigned char*>(image),
                             static_cast<std::size_t>(st.st_size));
      ::munmap(image, static_cast<std::size_t>(st.st_size));
    }
  }
  ::close(fd);
  if (!asan) return "";
  return "'" + program +
         "' is built with AddressSanitizer (-fsanitize=address), which cannot run under an "
         "LD_PRELOAD tracer: its runtime replaces malloc and must be the first library loaded, "
         "and aborts when memtrail's comes first; run it untraced (ASan reports leaks itself) "
         "or build it without -fsanitize=address";
}

}  // namespace memtrail::cli
