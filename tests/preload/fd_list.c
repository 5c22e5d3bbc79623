// Prints the descriptors open at start-up, one "fd N" line each, with
// "cloexec" when set. With an argument "exec", first execs itself (without
// the argument), so the list is the one an exec'd image inherits.
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "exec") == 0) {
    char* args[] = {argv[0], NULL};
    execv("/proc/self/exe", args);
    return 127;
  }
  int fds[4096], n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return 1;
  int own = dirfd(d);
  for (struct dirent* e; (e = readdir(d)) != NULL && n < 4096;)
    if (e->d_name[0] != '.' && atoi(e->d_name) != own) fds[n++] = atoi(e->d_name);
  closedir(d);
  for (int i = 0; i < n; ++i)
    printf("fd %d%s\n", fds[i], (fcntl(fds[i], F_GETFD) & FD_CLOEXEC) ? " cloexec" : "");
  return 0;
}
