// A thread that interns a new string on each call (a mark of its own
// text, as a Python program interns each new frame) gets SIGTERM from
// another thread 200 ms in, most likely while it holds the recorder's
// string table. The trace must end whole, with the signal recorded.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

#define MEMTRAIL_C_API_DLSYM
#include "memtrail/c_api.h"

static pthread_t g_main_thread;

static void* send_term(void* arg) {
  (void)arg;
  struct timespec wait = {0, 200 * 1000 * 1000};
  nanosleep(&wait, NULL);
  pthread_kill(g_main_thread, SIGTERM);
  return NULL;
}

int main(void) {
  g_main_thread = pthread_self();
  pthread_t sender;
  if (pthread_create(&sender, NULL, send_term, NULL) != 0) return 1;
  char text[64];
  for (unsigned long i = 0;; ++i) {
    snprintf(text, sizeof text, "a mark of its own text %lu", i);
    memtrail_dl_mark(text);
  }
}
