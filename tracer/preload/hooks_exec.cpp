// The exec family. An exec replaces the image but keeps the pid, so without
// these the events still buffered were lost and the next image's trace, named
// by the same "%p", replaced this one. Each interposer finishes the trace
// first (stop_for_exec), marks the new image's environment with
// MEMTRAIL_EXEC_PID=<pid>.<seq> so it takes a fresh file name, and, if the exec
// fails, resumes tracing into a new file. A vfork child (another pid sharing
// our memory) must not touch the parent's trace: it only announces the image
// it execs (with system calls, no lock, no heap) and gives the environment
// back its tracing variables. posix_spawn: hooks_spawn.cpp.
#include <alloca.h>
#include <dlfcn.h>
#include <errno.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "memtrail/detail/exec.hpp"
#include "next_symbol.hpp"
#include "preload_state.hpp"
#include "program_entry.hpp"
#include "tracing_environment.hpp"

extern char** environ;

using namespace memtrail::preload;

namespace {

using ExecveFn = int (*)(const char*, char* const[], char* const[]);
using FexecveFn = int (*)(int, char* const[], char* const[]);
using ExecveatFn = int (*)(int, const char*, char* const[], char* const[], int);

// Resolved before the program runs (resolve_exec_functions): a lazy dlsym
// would clear a pending dlerror(), and in a vfork child it would take the
// loader's lock and perhaps allocate, in the parent's memory.
std::atomic<ExecveFn> g_execve{nullptr}, g_execvpe{nullptr};
std::atomic<FexecveFn> g_fexecve{nullptr};
std::atomic<ExecveatFn> g_execveat{nullptr};

[[gnu::constructor]] void resolve_exec_functions() {
  next_symbol(g_execve, "execve");
  next_symbol(g_execvpe, "execvpe");
  next_symbol(g_fexecve, "fexecve");
  next_symbol(g_execveat, "execveat");
}

constexpr char kMarker[] = "MEMTRAIL_EXEC_PID=";

// The tracing environment as the program started with it (LD_PRELOAD with
// this library, the MEMTRAIL_* variables `memtrail run` set), kept so that
// an exec whose environment lost them (env -u LD_PRELOAD, clearenv(), a
// sanitised environment) gets them back: the new image is traced as every
// other one is, rather than silently not. Static storage: no allocation.
constexpr std::size_t kSavedBytes = 16384;
constexpr std::size_t kMaxSaved = 32;
char g_saved_text[kSavedBytes];
const char* g_saved[kMaxSaved];  // "NAME=value"
std::size_t g_saved_count = 0;

bool save_entry(const char* entry) {
  static std::size_t used = 0;
  std::size_t n = std::strlen(entry) + 1;
  if (g_saved_count == kMaxSaved || used + n > kSavedBytes) return false;
  std::memcpy(g_saved_text + used, entry, n);
  g_saved[g_saved_count++] = g_saved_text + used;
  used += n;
  return true;
}

// Length of "NAME=" in `entry` (0 if it has no '=').
std::size_t name_length(const char* entry) {
  const char* eq = std::strchr(entry, '=');
  return eq ? static_cast<std::size_t>(eq - entry) + 1 : 0;
}

bool has_variable(char* const* envp, const char* saved) {
  std::size_t n = name_length(saved);
  for (std::size_t i = 0; envp && envp[i]; ++i)
    if (std::strncmp(envp[i], saved, n) == 0) return true;
  return false;
}

// The most entries a vfork child's environment with the tracing variables
// back may have: it is built on the interposer's stack (a vfork child must
// not allocate), which may be small.
constexpr std::size_t kMaxOnStack = 1024;

// How many entries the caller must lend ExecScope (alloca) for the
// environment of a vfork child's exec: 0 when it needs none (not a vfork
// child, not following, nothing missing) or when it would not fit.
std::size_t vfork_environment_entries(char* const* envp) {
  if (getpid() == g_traced_pid || !following_new_images() || !environment_lacks_tracing(envp))
    return 0;
  std::size_t n = traced_environment_entries(envp);
  return n <= kMaxOnStack ? n : 0;
}

// One exec attempt: finishes the trace before it, restarts tracing if the
// exec returns (it failed). `envp()` is the environment the image gets.
// `room`: vfork_environment_entries(envp) entries on the caller's stack, or
// null.
class ExecScope {
 public:
  ExecScope(const char* path, char* const* envp, char** room) : envp_(const_cast<char**>(envp)) {
    if (getpid() != g_traced_pid) {  // vfork child: not our trace
      prepare_other_process(path, envp, room);
      return;
    }
    // Only when the next image is meant to be traced (the environment to
    // trace it was saved: not under --no-follow or attach). Now, while the
    // writer still holds the run's list.
    if (g_saved_count != 0) memtrail::detail::announce_exec(path);
    stopped_ = memtrail::detail::stop_for_exec();
    if (!stopped_) return;
    // Exec is rare and this image is about to be replaced: malloc is fine.
    marked_ = static_cast<char**>(std::malloc(traced_environment_entries(envp) * sizeof(char*)));
    if (!marked_) return;
    std::snprintf(marker_, sizeof marker_, "%s%d.%d", kMarker, static_cast<int>(getpid()),
                  memtrail::detail::next_image_sequence());
    build_traced_environment(envp, marked_, marker_);
    envp_ = marked_;
  }
  ~ExecScope() {  // only reached when the exec failed
    int saved = errno;
    if (other_pid_ != 0) {  // no image came: take the announcement back
      memtrail::detail::withdraw_image(other_pid_, 0, true);
      errno = saved;
      return;
    }
    std::free(marked_);
    if (stopped_) memtrail::detail::resume_after_failed_exec();
    errno = saved;
  }
  ExecScope(const ExecScope&) = delete;
  ExecScope& operator=(const ExecScope&) = delete;
  char* const* envp() const { return envp_; }

 private:
  // A vfork child (or a child of the clone system call) execs: a new pid,
  // whose image starts its trace at 0 when it can. Announced, so that an
  // image that cannot be traced is said missing; its environment gets the
  // tracing variables back in `room` (no heap: the memory is the parent's).
  void prepare_other_process(const char* path, char* const* envp, char** room) {
    if (!following_new_images()) return;
    if (room) {
      build_traced_environment(envp, room, nullptr);
      envp_ = room;
    }
    other_pid_ = static_cast<int>(getpid());
    memtrail::detail::announce_image(other_pid_, 0, path, true);
  }

  char** envp_;
  int other_pid_ = 0;
  char** marked_ = nullptr;
  bool stopped_ = false;
  char marker_[sizeof kMarker + 24] = {};
};

// The ExecScope `name` of an interposer, with the room it may need on the
// interposer's own stack.
#define MEMTRAIL_EXEC_SCOPE(name, path, envp)                                           \
  const std::size_t name##_room = vfork_environment_entries(envp);                      \
  char** name##_stack =                                                                 \
      name##_room ? static_cast<char**>(alloca(name##_room * sizeof(char*))) : nullptr; \
  ExecScope name(path, envp, name##_stack)

// argv of an execl-style call, on the caller's stack.
#define MEMTRAIL_COLLECT_ARGS(first, last_named, argv)                    \
  std::size_t argc_ = 1;                                                  \
  {                                                                       \
    va_list count;                                                        \
    va_start(count, last_named);                                          \
    while (va_arg(count, char*) != nullptr) ++argc_;                      \
    va_end(count);                                                        \
  }                                                                       \
  char** argv = static_cast<char**>(alloca((argc_ + 1) * sizeof(char*))); \
  argv[0] = const_cast<char*>(first);                                     \
  va_list args_;                                                          \
  va_start(args_, last_named);                                            \
  for (std::size_t i = 1; i <= argc_; ++i) argv[i] = va_arg(args_, char*);

}  // namespace

namespace memtrail::preload {

bool following_new_images() {
  return g_saved_count != 0;
}

bool environment_lacks_tracing(char* const* envp) {
  for (std::size_t i = 0; i < g_saved_count; ++i)
    if (!has_variable(envp, g_saved[i])) return true;
  return false;
}

std::size_t traced_environment_entries(char* const* envp) {
  std::size_t n = 0;
  while (envp && envp[n]) ++n;
  return n + g_saved_count + 2;
}

void build_traced_environment(char* const* envp, char** out, char* marker) {
  std::size_t k = 0;
  for (std::size_t i = 0; envp && envp[i]; ++i)
    if (!marker || std::strncmp(envp[i], kMarker, sizeof kMarker - 1) != 0) out[k++] = envp[i];
  // A variable the program removed comes back; one it changed (its own
  // LD_PRELOAD, say) is kept as it is.
  for (std::size_t i = 0; i < g_saved_count; ++i)
    if (!has_variable(envp, g_saved[i])) out[k++] = const_cast<char*>(g_saved[i]);
  if (marker) out[k++] = marker;
  out[k] = nullptr;
}

bool is_tracer_entry(const char* entry) {
  auto address = reinterpret_cast<std::uintptr_t>(entry);
  auto first = reinterpret_cast<std::uintptr_t>(g_saved_text);
  return address >= first && address < first + kSavedBytes;
}

void save_tracing_environment() {
  if (g_saved_count != 0) return;  // once per image
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, "LD_PRELOAD=", 11) == 0 ||
        (std::strncmp(*e, "MEMTRAIL_", 9) == 0 &&
         std::strncmp(*e, kMarker, sizeof kMarker - 1) != 0))
      save_entry(*e);
}

}  // namespace memtrail::preload

extern "C" {

MEMTRAIL_PROGRAM_ENTRY int execve(const char* path, char* const argv[], char* const envp[]) {
  ExecveFn real = next_symbol(g_execve, "execve");
  MEMTRAIL_EXEC_SCOPE(scope, path, envp);
  return real(path, argv, scope.envp());
}

MEMTRAIL_PROGRAM_ENTRY int execvpe(const char* file, char* const argv[], char* const envp[]) {
  ExecveFn real = next_symbol(g_execvpe, "execvpe");
  MEMTRAIL_EXEC_SCOPE(scope, file, envp);
  return real(file, argv, scope.envp());
}

MEMTRAIL_PROGRAM_ENTRY int fexecve(int fd, char* const argv[], char* const envp[]) {
  FexecveFn real = next_symbol(g_fexecve, "fexecve");
  char shown[32];
  std::snprintf(shown, sizeof shown, "descriptor %d", fd);
  MEMTRAIL_EXEC_SCOPE(scope, shown, envp);
  return real(fd, argv, scope.envp());
}

MEMTRAIL_PROGRAM_ENTRY int execveat(int dirfd, const char* path, char* const argv[],
                                    char* const envp[], int flags) {
  ExecveatFn real = next_symbol(g_execveat, "execveat");
  if (!real) {
    errno = ENOSYS;
    return -1;
  }
  MEMTRAIL_EXEC_SCOPE(scope, path, envp);
  return real(dirfd, path, argv, scope.envp(), flags);
}

// The environ-using forms go through the ones above (glibc's own call its
// internal __execve, which no interposer sees).
MEMTRAIL_PROGRAM_ENTRY int execv(const char* path, char* const argv[]) {
  return execve(path, argv, environ);
}

MEMTRAIL_PROGRAM_ENTRY int execvp(const char* file, char* const argv[]) {
  return execvpe(file, argv, environ);
}

MEMTRAIL_PROGRAM_ENTRY int execl(const char* path, const char* arg, ...) {
  MEMTRAIL_COLLECT_ARGS(arg, arg, argv)
  va_end(args_);
  return execve(path, argv, environ);
}

MEMTRAIL_PROGRAM_ENTRY int execlp(const char* file, const char* arg, ...) {
  MEMTRAIL_COLLECT_ARGS(arg, arg, argv)
  va_end(args_);
  return execvpe(file, argv, environ);
}

MEMTRAIL_PROGRAM_ENTRY int execle(const char* path, const char* arg, ...) {
  MEMTRAIL_COLLECT_ARGS(arg, arg, argv)
  char* const* envp = va_arg(args_, char* const*);  // after the terminating nullptr
  va_end(args_);
  return execve(path, argv, envp);
}

}  // extern "C"
