#include "workspace_mmap.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace memtrail::alloc::detail {
namespace {

std::string safe(const std::string& id) {
  std::string out;
  for (char c : id) out += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return out.substr(0, 40);
}

}  // namespace

WorkspaceMmapFile::WorkspaceMmapFile(const std::string& dir, const std::string& id,
                                     std::uint64_t bytes)
    : size_(bytes) {
  std::string where = dir;
  if (where.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    where = tmp && *tmp ? tmp : "/tmp";
  }
  std::string tmpl = where + "/memtrail-ws-" + safe(id) + "-XXXXXX";
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    throw std::runtime_error("memtrail: workspace [" + id + "]: cannot create MMAP file in '" +
                             where + "': " + std::strerror(errno));
  path_ = tmpl;
  std::string failure;
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    failure = std::string("ftruncate: ") + std::strerror(errno);
  } else {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
      failure = std::string("mmap: ") + std::strerror(errno);
    else
      data_ = p;
  }
  ::close(fd);
  if (!failure.empty()) {
    ::unlink(path_.c_str());
    throw std::runtime_error("memtrail: workspace [" + id + "]: MMAP file '" + path_ + "' of " +
                             std::to_string(bytes) + " bytes: " + failure);
  }
}

WorkspaceMmapFile::~WorkspaceMmapFile() {
  if (data_) ::munmap(data_, size_);
  ::unlink(path_.c_str());
}

}  // namespace memtrail::alloc::detail
