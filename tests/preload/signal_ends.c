/* Ends in the way argv[1] names, after allocating (and leaking) a few
 * blocks, so tests can compare a traced run with an untraced one:
 *   abort | segv | term           die of SIGABRT / SIGSEGV / SIGTERM
 *   own-term                      own SIGTERM handler: prints, exits 3
 *   default-again                 handler set, then SIG_DFL again; SIGTERM
 *   sleep                         prints "ready PID", sleeps up to 30 s
 *   churn                         prints "ready PID", allocates and frees
 *                                 flat out for up to 30 s
 *   count-int                     prints "ready PID", counts SIGINTs for
 *                                 300 ms after the first (5 s at most)
 *   dispositions                  prints what sigaction()/signal() report
 *   signalfd                      blocks SIGTERM, prints "ready PID", reads
 *                                 it from a signalfd, prints, exits 0
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t g_count = 0;

static void on_term(int sig) {
  (void)sig;
  static const char text[] = "caught SIGTERM\n";
  ssize_t n = write(1, text, sizeof text - 1);
  (void)n;
  exit(3);
}

static void on_int(int sig) {
  (void)sig;
  ++g_count;
}

static void nap_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

/* malloc/free flat out, 64 blocks live at a time, for up to `ms`. */
static void churn_ms(int ms) {
  void* ring[64] = {0};
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (unsigned long i = 0;; ++i) {
    free(ring[i % 64]);
    ring[i % 64] = malloc(16 + i % 1000);
    if (i % 4096 != 0) continue;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 > ms) return;
  }
}

static const char* name(void (*h)(int)) {
  return h == SIG_DFL ? "default" : h == SIG_IGN ? "ignore" : "handler";
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  void* volatile blocks[3];
  for (int i = 0; i < 3; ++i) blocks[i] = malloc(1000 + (size_t)i);  // left live
  printf("start %s\n", mode);
  fflush(stdout);
  if (strcmp(mode, "abort") == 0) abort();
  if (strcmp(mode, "segv") == 0) *(volatile int*)blocks[0] = *(volatile int*)(argv[argc]);
  if (strcmp(mode, "term") == 0) kill(getpid(), SIGTERM);
  if (strcmp(mode, "own-term") == 0) {
    signal(SIGTERM, on_term);
    kill(getpid(), SIGTERM);
  }
  if (strcmp(mode, "default-again") == 0) {
    signal(SIGTERM, on_term);
    signal(SIGTERM, SIG_DFL);
    kill(getpid(), SIGTERM);
  }
  if (strcmp(mode, "sleep") == 0) {
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    nap_ms(30000);
  }
  if (strcmp(mode, "churn") == 0) {
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    churn_ms(30000);
  }
  if (strcmp(mode, "count-int") == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_int;
    sigaction(SIGINT, &sa, NULL);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    for (int waited = 0; g_count == 0 && waited < 5000; waited += 10) nap_ms(10);
    nap_ms(300);
    printf("SIGINT received %d times\n", (int)g_count);
  }
  if (strcmp(mode, "signalfd") == 0) {
    /* Blocked all along (unlike sigwait, which unblocks it while waiting):
     * the kernel gives it to any thread that does not block it. */
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, NULL);
    int fd = signalfd(-1, &term, 0);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    struct signalfd_siginfo info;
    if (read(fd, &info, sizeof info) == (ssize_t)sizeof info)
      printf("signalfd read signal %u\n", info.ssi_signo);
  }
  if (strcmp(mode, "dispositions") == 0) {
    int sigs[] = {SIGINT, SIGTERM, SIGSEGV, SIGHUP, SIGUSR1};
    for (int i = 0; i < 5; ++i) {
      struct sigaction old;
      sigaction(sigs[i], NULL, &old);
      printf("%d %s flags %d", sigs[i], name(old.sa_handler), old.sa_flags & SA_SIGINFO);
      void (*was)(int) = signal(sigs[i], on_int);
      void (*now)(int) = signal(sigs[i], SIG_DFL);
      printf(" / %s %s\n", name(was), name(now));
    }
  }
  return 0;
}
