// Expected: exits 0 at once, traced as untraced; memtrail: nothing lost
// (the 48-byte block the blocked thread's frame holds is reachable, as are
// setenv's blocks).
// A thread holds the dynamic linker's lock forever and the process ends
// meanwhile (issue 27 item 2): the tracer's writer and its exit scan must
// not wait for that lock.
//   loader_lock_forever iterate: inside a dl_iterate_phdr callback (the
//     loader's write lock); main returns.
//   loader_lock_forever dlopen: inside a dlopen'd library's constructor
//     (libctorblock.so, the loader's main lock); main calls _exit, as exit()
//     would wait for that lock in _dl_fini even untraced.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leak_common.h"

static int g_pipe[2];

static int block_in_callback(struct dl_phdr_info* info, size_t size, void* data) {
  (void)info;
  (void)size;
  (void)data;
  void* volatile held = malloc(48);
  memset(held, 7, 48);
  (void)!write(g_pipe[1], "i", 1);
  for (;;) pause();
  return 1;
}

static void* worker(void* arg) {
  if (arg != NULL) {
    dlopen((const char*)arg, RTLD_NOW);  // never returns
  } else {
    dl_iterate_phdr(block_in_callback, NULL);
  }
  return NULL;
}

int main(int argc, char** argv) {
  const int in_dlopen = argc > 1 && strcmp(argv[1], "dlopen") == 0;
  if (pipe(g_pipe) != 0) return 2;
  char fd[16];
  snprintf(fd, sizeof fd, "%d", g_pipe[1]);
  setenv("LOADER_LOCK_FD", fd, 1);
  // The library sits beside the program.
  char library[4096];
  ssize_t n = readlink("/proc/self/exe", library, sizeof library - 32);
  if (n <= 0) return 2;
  library[n] = '\0';
  strcpy(strrchr(library, '/') + 1, "libctorblock.so");
  pthread_t t;
  pthread_create(&t, NULL, worker, in_dlopen ? library : NULL);
  char c;
  if (read(g_pipe[0], &c, 1) != 1) return 2;
  scrub_stack();
  if (in_dlopen) _exit(0);
  return 0;
}
