// Host upstreams: the system heap, anonymous mmap and file-backed mmap.
#pragma once

#include <string>

#include "memtrail/alloc/resource.hpp"

namespace memtrail::alloc {

// aligned_alloc/free. Capacity: physical memory of the machine.
class SystemHeapResource final : public Upstream {
 public:
  explicit SystemHeapResource(std::string name = "system heap");
  std::uint64_t capacity() const override;

 protected:
  void* acquire(std::size_t bytes, std::size_t alignment, UpstreamFailure* why) override;
  void give_back(void* p, std::size_t bytes, std::size_t alignment) noexcept override;
};

// Anonymous private mmap per segment (page aligned; larger alignments are
// honoured by over-mapping and trimming).
class MmapResource final : public Upstream {
 public:
  explicit MmapResource(std::string name = "mmap");
  std::uint64_t capacity() const override;

 protected:
  void* acquire(std::size_t bytes, std::size_t alignment, UpstreamFailure* why) override;
  void give_back(void* p, std::size_t bytes, std::size_t alignment) noexcept override;
};

// Segments backed by one file: each segment is a fresh range of the file,
// grown with ftruncate and mapped MAP_SHARED (ND4J's mmap workspaces). The
// file is created (or truncated) by the constructor, which throws
// std::runtime_error with one line if it cannot. Freed ranges are punched out
// of the file so it stays sparse.
class FileMmapResource final : public Upstream {
 public:
  explicit FileMmapResource(std::string path, std::string name = "file mmap");
  ~FileMmapResource() override;
  std::uint64_t capacity() const override;
  const std::string& path() const { return path_; }
  bool supports_address_reservation() const override { return false; }

 protected:
  void* acquire(std::size_t bytes, std::size_t alignment, UpstreamFailure* why) override;
  void give_back(void* p, std::size_t bytes, std::size_t alignment) noexcept override;

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t file_end_ = 0;  // next free offset
  struct Mapping;
  Mapping* mappings_ = nullptr;  // address -> file offset
};

}  // namespace memtrail::alloc
