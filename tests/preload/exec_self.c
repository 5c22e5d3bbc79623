// Execs itself once, keeping its pid, after a failed exec in between:
//   image 1: 7 x malloc(12345) (kept), execv("/nonexistent") fails,
//            3 x malloc(23456) (kept), execv(self, "second")
//   image 2: 5 x malloc(54321) (kept), exit 0
// Under `memtrail run -o t.%p.mtr` that is three traces of one pid, each
// with exactly its own blocks, and none replacing another.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void* volatile kept[16];

static void allocate(int count, size_t size) {
  for (int i = 0; i < count; ++i) kept[i] = malloc(size);
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "second") == 0) {
    allocate(5, 54321);
    printf("second image, pid %d\n", (int)getpid());
    return 0;
  }
  allocate(7, 12345);
  char* missing[] = {"/nonexistent/memtrail-exec-test", NULL};
  execv(missing[0], missing);  // fails: tracing goes on in a new file
  allocate(3, 23456);
  printf("first image, pid %d\n", (int)getpid());
  fflush(stdout);
  char* again[] = {argv[0], "second", NULL};
  execv("/proc/self/exe", again);
  perror("execv");
  return 1;
}
