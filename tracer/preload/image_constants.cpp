// Root words that are their module file's constants (image_constants.hpp).
#include "image_constants.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace memtrail::preload {

FileImageConstants::FileImageConstants(std::vector<ImageSegment> segments, MemoryReader& reader)
    : reader_(reader) {
  for (ImageSegment& s : segments) segments_.push_back({std::move(s), -2});
}

FileImageConstants::~FileImageConstants() {
  for (const Open& o : segments_)
    if (o.fd >= 0) close(o.fd);
}

bool FileImageConstants::holds_file_value(std::uintptr_t at, std::uint64_t value) {
  for (Open& o : segments_) {
    const ImageSegment& s = o.segment;
    if (at < s.begin || at + 8 > s.begin + s.file_bytes) continue;
    // A module whose file is gone fails open(): the program's errno stays.
    const int saved_errno = errno;
    int fd = file_of(o);
    std::uint64_t word = 0;
    bool same =
        fd >= 0 && read_file_word(fd, s.file_offset + (at - s.begin), &word) && word == value;
    errno = saved_errno;
    return same;
  }
  return false;
}

int FileImageConstants::file_of(Open& o) {
  if (o.fd != -2) return o.fd;
  o.fd = open(o.segment.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (o.fd >= 0 && !same_as_loaded(o.fd, o.segment)) {
    close(o.fd);
    o.fd = -1;
  }
  return o.fd;
}

// The file at the module's path is the one loaded when its headers and
// notes (the build ID) are the bytes mapped in memory.
bool FileImageConstants::same_as_loaded(int fd, const ImageSegment& segment) {
  if (segment.checks.empty()) return false;
  unsigned char in_file[256], in_memory[256];
  for (const ImageCheck& c : segment.checks) {
    for (std::uint32_t done = 0; done < c.length;) {
      std::size_t n = std::min<std::size_t>(sizeof in_file, c.length - done);
      if (pread(fd, in_file, n, static_cast<off_t>(c.file_offset + done)) !=
              static_cast<ssize_t>(n) ||
          reader_.read(c.at + done, in_memory, n) != n || std::memcmp(in_file, in_memory, n) != 0)
        return false;
      done += static_cast<std::uint32_t>(n);
    }
  }
  return true;
}

// Segments start at the same offset within a page in memory and in the
// file, so an aligned word never straddles two of the file's pages.
bool FileImageConstants::read_file_word(int fd, std::uint64_t offset, std::uint64_t* out) {
  const std::uint64_t page = offset & ~std::uint64_t{sizeof page_ - 1};
  if (fd != page_fd_ || page != page_offset_) {
    ssize_t n = pread(fd, page_, sizeof page_, static_cast<off_t>(page));
    page_fd_ = fd;
    page_offset_ = page;
    page_bytes_ = n > 0 ? static_cast<std::size_t>(n) : 0;
  }
  const std::uint64_t in_page = offset - page;
  if (in_page + 8 > page_bytes_) return false;
  std::memcpy(out, page_ + in_page, 8);
  return true;
}

}  // namespace memtrail::preload
