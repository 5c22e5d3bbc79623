// Issue 27 item 4: a forked child strdup's three strings, then execs a
// small program (exec_target, beside this one), which frees what it
// allocates. Valgrind --trace-children=yes classifies no image that exec'd:
// the child's report is the exec'd program's (nothing live); the parent
// holds nothing either.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leak_common.h"

static char target[4096];

int main(int argc, char** argv) {
  (void)argc;
  // exec_target_<opt> lies beside this program (leak_exec_strdup_<opt>).
  const char* self = argv[0];
  const char* opt = strrchr(self, '_');
  snprintf(target, sizeof target, "./leak_exec_target%s", opt ? opt : "_O0");
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    for (int i = 0; i < 3; ++i) touch(strdup("a string the exec replaces"));
    char* args[] = {target, NULL};
    execv(target, args);
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  scrub_stack();
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
