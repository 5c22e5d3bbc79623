// The process's loaded objects, from the linker's lists read without its
// lock (link_map_walk.hpp) or else dl_iterate_phdr: path, load address,
// PT_LOAD extent and GNU build id. Rescanned on dlopen/dlclose notice and when
// a stack ip falls outside every known module; each new (path, load address)
// gets an id and is reported once.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "memtrail/event.hpp"

namespace memtrail::runtime {

class ModuleMap {
 public:
  using NewModule = std::function<void(const ModuleInfo&)>;

  // Re-reads the loaded objects; reports the ones not seen before.
  void rescan(const NewModule& on_new);
  bool contains(std::uint64_t ip) const;
  std::size_t size() const { return modules_.size(); }

 private:
  std::vector<ModuleInfo> modules_;  // every module ever seen, by id - 1
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges_;  // sorted [start, end) of current
};

}  // namespace memtrail::runtime
