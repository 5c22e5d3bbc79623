// The loaded objects, read from the dynamic linker's lists (_r_debug and,
// with dlmopen namespaces, its r_next chain) without the loader's lock.
//
// dl_iterate_phdr takes that lock, and a program thread may hold it for as
// long as it likes: inside a dl_iterate_phdr callback of its own (a plugin
// walker, libunwind) or a dlopen'd library's constructor. The writer thread
// that waited for it drained nothing meanwhile, every flush timed out, and
// the exit leak scan classified a live set that lacked the program's last
// events (issue 27 item 2). Read as debuggers read them, every word through
// process_vm_readv, so a list a dlclose is changing can only lose or miss a
// module (picked up by a later rescan), never fault the writer.
#pragma once

#include <link.h>

#include <cstdint>
#include <string>
#include <vector>

namespace memtrail::runtime {

struct LoadedObject {
  std::string name;  // as the link map has it ("" for the program)
  std::uint64_t load_address = 0;
  std::vector<ElfW(Phdr)> headers;
  std::string build_id;  // hex, from its PT_NOTE segments
};

// False when this process cannot read its own memory by process_vm_readv
// (seccomp, an old kernel): then use dl_iterate_phdr.
bool loaded_objects_without_lock(std::vector<LoadedObject>* out);

// The NT_GNU_BUILD_ID of a module whose notes are readable at `notes` (the
// PT_NOTE segment's bytes).
std::string build_id_in_notes(const unsigned char* notes, std::size_t size);

}  // namespace memtrail::runtime
