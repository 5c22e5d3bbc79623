// A daemon's way with descriptors (issue 26, shape 4): it closes every
// descriptor above stderr, with close_range(3, ~0U) ("close_range") or a
// close() loop up to sysconf(_SC_OPEN_MAX) ("loop"), or puts a file on
// descriptor 1023 with dup2 ("dup2"), then opens its own files and
// allocates through a call chain. Built without unwind tables, so a
// tracer's libunwind steps its frames by frame pointer and validates them
// (once through a pipe the close-all closed): after the close-all it must
// still unwind. Prints what
// the program can tell: its files' numbers, the lowest free number, its
// descriptor counts by /proc/self/fd and by F_GETFD up to its limit.
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "descriptor_views.h"
#include "guest_observables.h"

// Distinct frames without unwind information (see the build flags).
__attribute__((noinline)) void* allocate_after_close_all(size_t size) {
  void* volatile block = malloc(size);
  return block;
}
__attribute__((noinline)) void* chain_after_close_all(int depth, size_t size) {
  void* block =
      depth == 0 ? allocate_after_close_all(size) : chain_after_close_all(depth - 1, size);
  __asm__ volatile("" ::: "memory");  // no tail call: each frame stays
  return block;
}

enum { kKept = 200 };
static void* kept[kKept];

static void* allocate_on_a_new_stack(void* arg) {
  (void)arg;
  for (int i = 0; i < kKept; ++i) kept[i] = chain_after_close_all(i % 8, 48 + i);
  return NULL;
}

static void write_line(int fd, const char* text) {
  if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) printf("write to %d failed\n", fd);
}

static int close_all(const char* how) {
  if (strcmp(how, "close_range") == 0) return (int)syscall(SYS_close_range, 3U, ~0U, 0);
  if (strcmp(how, "loop") == 0) {
    for (long fd = 3, top = sysconf(_SC_OPEN_MAX); fd < top; ++fd) close((int)fd);
    return 0;
  }
  if (strcmp(how, "dup2") == 0) {
    int file = open("on-1023.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (file < 0 || dup2(file, 1023) != 1023) return -1;
    close(file);
    write_line(1023, "written through 1023\n");
    return close(1023);
  }
  return -1;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int before = open("/dev/null", O_RDONLY);  // a daemon's inherited clutter
  for (int i = 0; i < 100; ++i) free(chain_after_close_all(i % 8, 32 + i));
  printf("close-all (%s): %d\n", argv[1], close_all(argv[1]));
  printf("the file opened before: %s\n", fcntl(before, F_GETFD) == -1 ? "closed" : "open");
  // On a new thread: its stack's pages are new to the unwinder, which
  // validates them before it reads them.
  pthread_t thread;
  if (pthread_create(&thread, NULL, allocate_on_a_new_stack, NULL) != 0 ||
      pthread_join(thread, NULL) != 0)
    return 1;
  int a = open("after-a.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int b = open("after-b.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  write_line(a, "file a\n");
  write_line(b, "file b\n");
  int listed = listed_descriptors(), counted = open_by_fcntl(), low = lowest_free();
  printf("files after the close-all: %d %d\n", a, b);
  printf("lowest free descriptor: %d\n", low);
  printf("observe fds_listed %d\nobserve fds_fcntl %d\n", listed, counted);
  for (int i = 0; i < kKept; ++i) free(kept[i]);
  guest_observe();
  return 0;
}
