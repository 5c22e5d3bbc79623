// Words of a module's writable segment that still hold the value its file
// gave them: link-time constants, never pointers the program stored.
//
// A module's .data comes from its file; only what the relocations and the
// program write at run time can hold the address of a heap block, which no
// linker knew. Yet a constant can equal such an address by chance: a
// program linked at a fixed address (non-PIE) has its brk heap just above
// its .bss, at low addresses chosen at random over 1 GiB each run, where
// 32-bit integers, bytecode and text live too. CPython 3.11's deep-frozen
// code objects alone put 666 distinct such values in python3.11's .data, so
// a 120 KiB block covered one in about 3% of runs and read "possibly lost"
// instead of "definitely lost", depending only on where the kernel put the
// heap. So a root word that points into a block but equals its file's bytes
// at the same offset is not followed (tests/leaks/programs/image_constant.c).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reachability.hpp"

namespace memtrail::preload {

// Bytes that are the same in memory and in the module's file when the file
// is the one loaded: its ELF header, program headers and notes (build ID).
struct ImageCheck {
  std::uintptr_t at = 0;
  std::uint64_t file_offset = 0;
  std::uint32_t length = 0;
};

// The part of a writable PT_LOAD segment that the file initialises:
// [begin, begin + file_bytes) in memory is [file_offset, ...) in `path`.
struct ImageSegment {
  std::uintptr_t begin = 0;
  std::uint64_t file_bytes = 0;
  std::uint64_t file_offset = 0;
  std::string path;  // the module's file; the program's is /proc/self/exe
  std::vector<ImageCheck> checks;
};

// Answers for the segments given, comparing with their files. A file that
// cannot be opened, or whose checks differ from memory (another build put
// at the same path since), answers false for all its words.
class FileImageConstants final : public ImageConstants {
 public:
  FileImageConstants(std::vector<ImageSegment> segments, MemoryReader& reader);
  ~FileImageConstants() override;
  FileImageConstants(const FileImageConstants&) = delete;
  FileImageConstants& operator=(const FileImageConstants&) = delete;

  bool holds_file_value(std::uintptr_t at, std::uint64_t value) override;

 private:
  struct Open {
    ImageSegment segment;
    int fd = -2;  // -2: not opened yet; -1: no usable file
  };
  int file_of(Open& open);
  bool same_as_loaded(int fd, const ImageSegment& segment);
  bool read_file_word(int fd, std::uint64_t offset, std::uint64_t* out);

  std::vector<Open> segments_;
  MemoryReader& reader_;
  // One page of one file, the last read: the words checked cluster.
  int page_fd_ = -1;
  std::uint64_t page_offset_ = 0;
  std::size_t page_bytes_ = 0;
  unsigned char page_[4096];
};

}  // namespace memtrail::preload
