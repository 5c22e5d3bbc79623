// gdb batch calls into a running process (see attach_gdb.hpp).
#include "attach_gdb.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace memtrail::cli {

namespace {

bool is_executable(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// Runs argv with stdout+stderr captured; kills it after timeout_s.
bool run_captured(const std::vector<std::string>& args, int timeout_s, std::string* output,
                  int* status) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return false;
  pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) {
    // Its own process group: a Ctrl-C meant for memtrail must not kill gdb
    // in the middle of a call into the process.
    setpgid(0, 0);
    dup2(pipe_fds[1], 1);
    dup2(pipe_fds[1], 2);
    int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, 0);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  char buffer[4096];
  bool killed = false;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0 && !killed) {
      kill(child, SIGKILL);
      killed = true;
    }
    pollfd p{pipe_fds[0], POLLIN, 0};
    int ready = poll(&p, 1, killed ? 1000 : static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    output->append(buffer, static_cast<std::size_t>(n));
  }
  close(pipe_fds[0]);
  while (waitpid(child, status, 0) < 0 && errno == EINTR) {
  }
  return !killed;
}

// gdb's last "error-looking" line, for a message when a call did not print.
std::string last_error_line(const std::string& output) {
  std::istringstream in(output);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find("rror") != std::string::npos || line.find("No symbol") != std::string::npos ||
        line.find("ptrace") != std::string::npos || line.find("not permitted") != std::string::npos)
      last = line;
  return last;
}

}  // namespace

std::string find_gdb() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t colon = dirs.find(':', start);
    std::string dir =
        dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (!dir.empty() && is_executable(dir + "/gdb")) return dir + "/gdb";
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return "";
}

bool gdb_string_literal(const std::string& text, std::string* out) {
  for (char c : text)
    if (c == '"' || c == '\\' || c == '\n' || c == '\r' || static_cast<unsigned char>(c) < 0x20)
      return false;
  *out = "\"" + text + "\"";
  return true;
}

GdbResult run_gdb_calls(const std::string& gdb, pid_t pid, const std::vector<GdbCall>& calls,
                        int timeout_s) {
  // -nx: no user .gdbinit; no debuginfod downloads (nothing outside is
  // reachable, and a prompt would hang the batch run).
  std::vector<std::string> args = {gdb,   "-nx",
                                   "-q",  "-batch",
                                   "-p",  std::to_string(pid),
                                   "-ex", "set debuginfod enabled off",
                                   "-ex", "set confirm off",
                                   "-ex", "set pagination off"};
  for (const GdbCall& c : calls) {
    args.push_back("-ex");
    args.push_back("printf \"memtrail-value " + c.name + " %ld\\n\", " + c.expression);
  }
  GdbResult r;
  std::string output;
  int status = 0;
  if (!run_captured(args, timeout_s, &output, &status)) {
    r.error = "gdb did not finish in " + std::to_string(timeout_s) + " s";
    return r;
  }
  r.ran = true;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("memtrail-value ", 0) != 0) continue;
    std::istringstream fields(line.substr(15));
    std::string name;
    long value = 0;
    if (fields >> name >> value) r.values[name] = value;
  }
  if (r.values.size() < calls.size()) r.error = last_error_line(output);
  return r;
}

}  // namespace memtrail::cli
