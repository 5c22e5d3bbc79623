// Children made by system() and popen() (issue 26, item 9): glibc starts
// /bin/sh with its internal posix_spawn and environ, which no interposer
// sees. A program that took the tracing variables out of its environment
// first (clearenv, unsetenv, an environ array of its own) must still have
// its shell, and what the shell runs, traced or said missing; and must not
// be able to tell: its environment reads the same after the call. Usage:
//   system_child clearenv PROGRAM   clearenv(), then system(PROGRAM)
//   system_child unsetenv PROGRAM   unsetenv("LD_PRELOAD"), then popen(PROGRAM)
//   system_child ownenv PROGRAM     environ = an array of its own, then system
//   system_child keepenv PROGRAM    the environment untouched, then popen
//   system_child threads PROGRAM    unsetenv("LD_PRELOAD"), then 4 threads
//                                   calling system(PROGRAM) 3 times each
//   system_child inplace COMMAND    unsetenv("LD_PRELOAD"), then a thread
//                                   calls system(COMMAND) while main, 100 ms
//                                   in, unsets one variable and changes
//                                   another (glibc changes the array in place)
//   system_child added COMMAND      the same, main adding a variable (glibc
//                                   makes a new array)
//   system_child fork COMMAND       the same, main forking a child that
//                                   prints whether it sees LD_PRELOAD
// inplace, added and fork then print the three variables' values.
// Prints the child's output, "child ok" / "child failed", then what it reads
// of its own environment after the call ("environment unchanged by the call,
// LD_PRELOAD unset").
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

static char* own_environment[] = {"SYSTEM_CHILD=1", "PATH=/usr/bin:/bin", NULL};

// popen's output, copied to ours; the command's exit status.
static int run_popen(const char* program) {
  FILE* pipe = popen(program, "r");
  if (pipe == NULL) return -1;
  char line[256];
  while (fgets(line, sizeof line, pipe) != NULL) fputs(line, stdout);
  return pclose(pipe);
}

enum { kThreads = 4, kCallsPerThread = 3 };

// Calls system(program) kCallsPerThread times; the failures, as a pointer.
static void* call_system(void* program) {
  intptr_t failures = 0;
  for (int i = 0; i < kCallsPerThread; ++i) {
    int status = system(program);
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
  }
  return (void*)failures;
}

// system() from several threads at once: their calls overlap.
static int run_threads(const char* program) {
  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; ++i) pthread_create(&threads[i], NULL, call_system, (void*)program);
  intptr_t failures = 0;
  for (int i = 0; i < kThreads; ++i) {
    void* failed = NULL;
    pthread_join(threads[i], &failed);
    failures += (intptr_t)failed;
  }
  return failures == 0 ? 0 : -1;
}

static void* call_system_once(void* command) {
  int status = system(command);
  return (void*)(intptr_t)(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// Changes the environment while another thread's system() runs (most
// likely: the command should take longer than 100 ms), then prints it.
static int change_during_call(const char* how, const char* command) {
  setenv("GONE", "1", 1);
  setenv("CHANGED", "old", 1);
  pthread_t thread;
  pthread_create(&thread, NULL, call_system_once, (void*)command);
  usleep(100 * 1000);
  if (strcmp(how, "inplace") == 0) {
    unsetenv("GONE");
    setenv("CHANGED", "new", 1);
  } else if (strcmp(how, "fork") == 0) {
    pid_t child = fork();
    if (child == 0) {
      printf("forked child: LD_PRELOAD %s\n", getenv("LD_PRELOAD") ? "set" : "unset");
      fflush(stdout);
      _exit(0);
    }
    waitpid(child, NULL, 0);
  } else {
    setenv("ADDED", "1", 1);
  }
  void* ok = NULL;
  pthread_join(thread, &ok);
  printf("GONE=%s CHANGED=%s ADDED=%s\n", getenv("GONE") ? getenv("GONE") : "(unset)",
         getenv("CHANGED"), getenv("ADDED") ? getenv("ADDED") : "(unset)");
  return ok ? 0 : -1;
}

// A copy of the environment's entries (pointers), to tell after the call
// whether anything of it changed.
static char** snapshot(void) {
  int n = 0;
  while (environ != NULL && environ[n] != NULL) ++n;
  char** copy = calloc((size_t)n + 1, sizeof(char*));
  for (int i = 0; i < n; ++i) copy[i] = environ[i];
  return copy;
}

static int same_environment(char** before, char** copy) {
  if (environ != before) return 0;
  int i = 0;
  for (; copy[i] != NULL; ++i)
    if (environ == NULL || environ[i] != copy[i]) return 0;
  return environ == NULL || environ[i] == NULL;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const char* how = argv[1];
  const char* program = argv[2];
  fflush(stdout);
  if (strcmp(how, "clearenv") == 0)
    clearenv();
  else if (strcmp(how, "unsetenv") == 0 || strcmp(how, "threads") == 0 ||
           strcmp(how, "inplace") == 0 || strcmp(how, "added") == 0 || strcmp(how, "fork") == 0)
    unsetenv("LD_PRELOAD");
  else if (strcmp(how, "ownenv") == 0)
    environ = own_environment;
  else if (strcmp(how, "keepenv") != 0)
    return 2;
  char** before = environ;
  char** copy = snapshot();
  int use_popen = strcmp(how, "unsetenv") == 0 || strcmp(how, "keepenv") == 0;
  if (strcmp(how, "inplace") == 0 || strcmp(how, "added") == 0 || strcmp(how, "fork") == 0) {
    int status = change_during_call(how, program);
    printf("child %s, LD_PRELOAD %s\n", status == 0 ? "ok" : "failed",
           getenv("LD_PRELOAD") ? "set" : "unset");
    return 0;
  }
  int status = strcmp(how, "threads") == 0 ? run_threads(program)
               : use_popen                 ? run_popen(program)
                                           : system(program);
  printf("child %s\n",
         status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok" : "failed");
  printf("environment %s by the call, LD_PRELOAD %s\n",
         same_environment(before, copy) ? "unchanged" : "changed",
         getenv("LD_PRELOAD") ? "set" : "unset");
  free(copy);
  return 0;
}
