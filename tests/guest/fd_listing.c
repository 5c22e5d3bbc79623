// Prints its /proc/self/fd listing (each number and what it refers to: a
// device's path, a pipe's or socket's kind without its inode, "a regular
// file" for a file, whose name the test harness picks per run) and its
// lowest free descriptor, after it allocated through frames without unwind
// information on its main thread and on a new one (frames_without_cfi.c):
// a tracer's libunwind validates those frames' addresses, and untraced as
// traced the listing must be the same (issue 26, item 4: the validation
// pipe was two more entries). The blocks stay allocated: their stacks are
// what the parity test reads back from the trace.
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "descriptor_views.h"
#include "guest_observables.h"

void* outermost_without_cfi(size_t size);

enum { kBlocks = 16 };
static void* kept[2 * kBlocks];

static void* allocate_on_a_new_thread(void* arg) {
  (void)arg;
  // A new stack: pages the unwinder has not validated yet.
  for (int i = 0; i < kBlocks; ++i) kept[kBlocks + i] = outermost_without_cfi(64 + i);
  return NULL;
}

// "pipe:[1234]" -> "pipe:[]": the part a second run cannot repeat.
static void without_inode(char* target) {
  char* open = strchr(target, '[');
  char* close = open ? strchr(open, ']') : NULL;
  if (close) memmove(open + 1, close, strlen(close) + 1);
}

static int by_number(const void* a, const void* b) {
  return *(const int*)a - *(const int*)b;
}

static void print_listing(void) {
  DIR* d = opendir("/proc/self/fd");
  if (d == NULL) return;
  int numbers[1024], n = 0;
  for (struct dirent* e; (e = readdir(d)) != NULL && n < 1024;) {
    int fd = atoi(e->d_name);
    if (e->d_name[0] != '.' && fd != dirfd(d)) numbers[n++] = fd;
  }
  qsort(numbers, n, sizeof numbers[0], by_number);
  for (int i = 0; i < n; ++i) {
    char path[64], target[256];
    snprintf(path, sizeof path, "/proc/self/fd/%d", numbers[i]);
    ssize_t len = readlink(path, target, sizeof target - 1);
    target[len < 0 ? 0 : len] = '\0';
    struct stat st;
    if (fstat(numbers[i], &st) == 0 && S_ISREG(st.st_mode)) strcpy(target, "a regular file");
    without_inode(target);
    printf("fd %d -> %s\n", numbers[i], target);
  }
  closedir(d);
}

int main(void) {
  for (int i = 0; i < kBlocks; ++i) kept[i] = outermost_without_cfi(32 + i);
  pthread_t thread;
  if (pthread_create(&thread, NULL, allocate_on_a_new_thread, NULL) != 0 ||
      pthread_join(thread, NULL) != 0)
    return 1;
  print_listing();
  printf("lowest free descriptor: %d\n", lowest_free());
  guest_observe();
  return 0;
}
