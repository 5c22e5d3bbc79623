// posix_spawn and posix_spawnp. glibc's child (clone with CLONE_VM |
// CLONE_VFORK) execs with its internal execve, which no interposer sees: a
// child image that cannot be traced (static, set-user-ID) went untraced
// without a word. So the parent announces the child's image in the run's
// list once the spawn succeeded (a failed spawn leaves nothing: glibc
// reports the child's failed exec as the call's error), and `memtrail run`
// says it is missing if its trace never appears. An environment the
// program stripped of the tracing variables gets them back, as an exec's
// does. Everything else the child gets is the program's, unchanged.
#include <spawn.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "memtrail/detail/exec.hpp"
#include "memtrail/detail/reentrancy.hpp"
#include "next_symbol.hpp"
#include "preload_state.hpp"
#include "program_entry.hpp"
#include "tracing_environment.hpp"

using namespace memtrail::preload;

namespace {

using SpawnFn = int (*)(pid_t*, const char*, const posix_spawn_file_actions_t*,
                        const posix_spawnattr_t*, char* const[], char* const[]);
std::atomic<SpawnFn> g_posix_spawn{nullptr}, g_posix_spawnp{nullptr};

// Before the program runs: a lazy dlsym would clear a pending dlerror().
[[gnu::constructor]] void resolve_spawn_functions() {
  next_symbol(g_posix_spawn, "posix_spawn");
  next_symbol(g_posix_spawnp, "posix_spawnp");
}

// The environment the child gets: `envp`, or a copy with the tracing
// variables back, on the tracer's own heap (not the program's).
class SpawnEnvironment {
 public:
  explicit SpawnEnvironment(char* const* envp) : envp_(envp) {
    if (!following_new_images() || !environment_lacks_tracing(envp)) return;
    memtrail::detail::ScopedInternal internal;
    built_ = static_cast<char**>(std::malloc(traced_environment_entries(envp) * sizeof(char*)));
    if (!built_) return;
    build_traced_environment(envp, built_, nullptr);
    envp_ = built_;
  }
  ~SpawnEnvironment() {
    if (!built_) return;
    memtrail::detail::ScopedInternal internal;
    std::free(built_);
  }
  SpawnEnvironment(const SpawnEnvironment&) = delete;
  SpawnEnvironment& operator=(const SpawnEnvironment&) = delete;
  char* const* get() const { return envp_; }

 private:
  char* const* envp_;
  char** built_ = nullptr;
};

int spawn_and_announce(SpawnFn real, pid_t* pid, const char* path,
                       const posix_spawn_file_actions_t* actions, const posix_spawnattr_t* attr,
                       char* const argv[], char* const envp[]) {
  pid_t child = 0;
  if (pid == nullptr) pid = &child;  // the announcement needs it
  SpawnEnvironment environment(envp);
  int rc = real(pid, path, actions, attr, argv, environment.get());
  // A new pid: its image's trace, when it makes one, is its first (0). A
  // caller that is not the traced process (a child of the fork system
  // call, which runs untraced) may have inherited the tracer's lock held:
  // system calls only there, as in a vfork child.
  if (rc == 0 && following_new_images())
    memtrail::detail::announce_image(static_cast<int>(*pid), 0, path, getpid() != g_traced_pid);
  return rc;
}

}  // namespace

extern "C" {

MEMTRAIL_PROGRAM_ENTRY int posix_spawn(pid_t* pid, const char* path,
                                       const posix_spawn_file_actions_t* actions,
                                       const posix_spawnattr_t* attr, char* const argv[],
                                       char* const envp[]) {
  return spawn_and_announce(next_symbol(g_posix_spawn, "posix_spawn"), pid, path, actions, attr,
                            argv, envp);
}

MEMTRAIL_PROGRAM_ENTRY int posix_spawnp(pid_t* pid, const char* file,
                                        const posix_spawn_file_actions_t* actions,
                                        const posix_spawnattr_t* attr, char* const argv[],
                                        char* const envp[]) {
  return spawn_and_announce(next_symbol(g_posix_spawnp, "posix_spawnp"), pid, file, actions, attr,
                            argv, envp);
}

}  // extern "C"
