// Children made without fork (issue 26, item 9): glibc's posix_spawn
// (clone with CLONE_VM|CLONE_VFORK, its own internal execve) and vfork +
// execve. A child image that cannot be traced (static, set-user-ID) must be
// announced as a missing trace; one that can must be traced as always, and
// a spawn that fails must leave nothing announced. Usage:
//   spawn_child spawn PROGRAM     posix_spawn
//   spawn_child spawnp PROGRAM    posix_spawnp (PROGRAM looked up in PATH)
//   spawn_child vfork PROGRAM     vfork, then execve in the child
//   spawn_child setsid PROGRAM    posix_spawn with POSIX_SPAWN_SETSID and
//                                 file actions (stdin from /dev/null, a
//                                 closed descriptor)
//   spawn_child nopid PROGRAM     posix_spawn without a pid to fill in
//   spawn_child cleanenv PROGRAM  posix_spawn with an environment of one
//                                 variable (no LD_PRELOAD)
//   spawn_child vforkclean PROGRAM  vfork + execve with that environment
//   spawn_child vforksearch PROGRAM vfork, then execve of a path that does
//                                 not exist before PROGRAM (a PATH search)
// Prints "spawn failed: REASON" when the spawn fails, else the child's
// output and "child ok" / "child failed".
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

static int spawn_with_actions(pid_t* pid, const char* program, char** argv) {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addclose(&actions, 7);  // not open: ignored by glibc
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  int rc = posix_spawn(pid, program, &actions, &attr, argv, environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  return rc;
}

static char* clean_environment[] = {"SPAWN_CHILD=1", NULL};

// vfork's child may only call execve and _exit.
static int vfork_exec(pid_t* pid, const char* program, char** argv, char** env) {
  pid_t child = vfork();
  if (child == 0) {
    execve(program, argv, env);
    _exit(127);
  }
  if (child < 0) return errno;
  *pid = child;
  return 0;
}

static int vfork_search(pid_t* pid, const char* program, char** argv) {
  pid_t child = vfork();
  if (child == 0) {
    execve("/nonexistent/spawn_child_target", argv, environ);
    execve(program, argv, environ);
    _exit(127);
  }
  if (child < 0) return errno;
  *pid = child;
  return 0;
}

static int start(const char* how, const char* program, pid_t* pid) {
  char* argv[] = {(char*)program, NULL};
  if (strcmp(how, "spawn") == 0) return posix_spawn(pid, program, NULL, NULL, argv, environ);
  if (strcmp(how, "spawnp") == 0) return posix_spawnp(pid, program, NULL, NULL, argv, environ);
  if (strcmp(how, "vfork") == 0) return vfork_exec(pid, program, argv, environ);
  if (strcmp(how, "vforksearch") == 0) return vfork_search(pid, program, argv);
  if (strcmp(how, "vforkclean") == 0) return vfork_exec(pid, program, argv, clean_environment);
  if (strcmp(how, "setsid") == 0) return spawn_with_actions(pid, program, argv);
  if (strcmp(how, "cleanenv") == 0)
    return posix_spawn(pid, program, NULL, NULL, argv, clean_environment);
  if (strcmp(how, "nopid") == 0) {
    int rc = posix_spawn(NULL, program, NULL, NULL, argv, environ);
    *pid = -1;  // any child
    return rc;
  }
  return EINVAL;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  fflush(stdout);
  pid_t pid = 0;
  int rc = start(argv[1], argv[2], &pid);
  if (rc != 0) {
    printf("spawn failed: %s\n", strerror(rc));
    return 0;
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return 3;
  printf("child %s\n", WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok" : "failed");
  return 0;
}
