// memtrail replay: runs memtrail-replay, found beside this binary, with the
// same arguments. Replay drives the allocator stack (and so the recorder),
// which the analyzer CLI does not link; the exec keeps its output, its exit
// code and its stdin (`... | memtrail replay`) exactly as they were.
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.hpp"

namespace memtrail::cli {
namespace {

// The directory of this binary ("." when /proc/self/exe cannot be read).
std::string own_directory() {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return ".";
  std::string path(self, static_cast<std::size_t>(n));
  return path.substr(0, path.rfind('/'));
}

}  // namespace

int cmd_replay(int argc, char** argv) {
  std::string replay = own_directory() + "/memtrail-replay";
  std::vector<char*> args(argv, argv + argc);
  args[0] = replay.data();
  args.push_back(nullptr);
  execv(replay.c_str(), args.data());
  const int error = errno;
  std::fprintf(stderr, "memtrail: replay needs memtrail-replay next to this binary (%s): %s\n",
               replay.c_str(), error == ENOENT ? "not found" : std::strerror(error));
  return 2;
}

}  // namespace memtrail::cli
