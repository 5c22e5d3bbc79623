// The MMAP location of a workspace: a temp file mapped MAP_SHARED, unlinked
// and unmapped when this object dies (so also when a workspace constructor
// or the scope using it throws). File-backed pages are the kernel's to page
// out, so the buffer is not charged to MEMTRAIL_MAX_BYTES (ND4J's mmap
// workspaces are outside JavaCPP's counted bytes too).
#pragma once

#include <cstdint>
#include <string>

namespace memtrail::alloc::detail {

class WorkspaceMmapFile {
 public:
  // Creates <dir>/memtrail-ws-<id>-XXXXXX of `bytes`; dir "" = $TMPDIR or
  // /tmp. Throws std::runtime_error with one line on failure.
  WorkspaceMmapFile(const std::string& dir, const std::string& id, std::uint64_t bytes);
  ~WorkspaceMmapFile();
  WorkspaceMmapFile(const WorkspaceMmapFile&) = delete;
  WorkspaceMmapFile& operator=(const WorkspaceMmapFile&) = delete;
  void* data() const { return data_; }
  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  void* data_ = nullptr;
  std::uint64_t size_ = 0;
};

}  // namespace memtrail::alloc::detail
