// Which frames are roots when the process ends (expected classes from
// Valgrind memcheck, which scans only the live part of each stack):
//
//   exit_paths          main returns: the 123-byte malloc block and the
//                       200-byte posix_memalign block, held only in main's
//                       now dead frame, are direct leaks.
//   exit_paths exit     a function called from main calls exit() while a
//                       local holds a 77-byte block: reachable. A 55-byte
//                       block dropped in a returned, deeper frame: direct.
//   exit_paths thread   the same from a second thread (99 B reachable,
//                       55 B direct) while main waits in pthread_join.
//   exit_paths _exit    main calls _exit() holding 99 B (reachable) after a
//                       deeper frame dropped 55 B (direct).
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Leaves a pointer to a 55-byte block ~600 bytes below the caller's frame,
// deeper than any frame the caller makes afterwards.
__attribute__((noinline)) static void drop_deep(void) {
  char pad[512];
  memset(pad, 0, sizeof pad);
  void* volatile dropped = malloc(55);
  (void)dropped;
  __asm__ volatile("" : : "r"(pad) : "memory");
}

__attribute__((noinline)) static void exit_holding(void* block) {
  void* volatile held = block;
  (void)held;
  exit(0);
}

static void* thread_main(void* arg) {
  (void)arg;
  drop_deep();
  exit_holding(malloc(99));
  return NULL;
}

static int run_mode(const char* mode) {
  if (strcmp(mode, "exit") == 0) {
    drop_deep();
    exit_holding(malloc(77));
  }
  if (strcmp(mode, "thread") == 0) {
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, NULL) != 0) return 2;
    pthread_join(t, NULL);
    return 3;  // not reached: the thread exits the process
  }
  if (strcmp(mode, "_exit") == 0) {
    drop_deep();
    void* volatile held = malloc(99);
    (void)held;
    _exit(0);
  }
  return 2;
}

// "return": main's frame stays small, as in the program that found the bug,
// so the dead slots lie where the exit machinery's frames may not overwrite
// them.
int main(int argc, char** argv) {
  if (argc > 1) return run_mode(argv[1]);
  char* volatile p = (char*)malloc(123);
  memset(p, 1, 123);
  void* a = NULL;
  if (posix_memalign(&a, 64, 200) != 0) return 2;
  memset(a, 2, 200);
  return p[3] == 1 && ((char*)a)[7] == 2 ? 0 : 1;
}
