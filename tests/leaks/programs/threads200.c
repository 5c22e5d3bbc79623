// Expected (Valgrind memcheck): definitely lost 200 blocks / 160,800 B;
// indirectly lost 0; possibly lost 0; still reachable 0.
// memtrail: direct 200 / 160800, indirect 0, reachable 0.
// LSan: Direct 200 / 160800.
// 200 threads each allocate 64 blocks, hand them to the next thread through a
// growing (realloc'd) mailbox, free what the previous thread handed them, and
// leak one block of (t+1)*8 bytes: 8 * (1 + ... + 200) = 160,800 B. Mailboxes
// and freed blocks leave the leaked blocks' neighbours full of stale pointers.
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "leak_common.h"

enum { kThreads = 200, kBlocks = 64 };

struct Mailbox {
  pthread_mutex_t lock;
  void** items;
  size_t count, capacity;
};

static struct Mailbox g_boxes[kThreads];

static void post(struct Mailbox* box, void* item) {
  pthread_mutex_lock(&box->lock);
  if (box->count == box->capacity) {
    box->capacity = box->capacity ? box->capacity * 2 : 4;
    box->items = (void**)realloc(box->items, box->capacity * sizeof(void*));
  }
  box->items[box->count++] = item;
  pthread_mutex_unlock(&box->lock);
}

static void drain(struct Mailbox* box) {
  pthread_mutex_lock(&box->lock);
  for (size_t i = 0; i < box->count; ++i) free(box->items[i]);
  free(box->items);
  box->items = NULL;
  box->count = box->capacity = 0;
  pthread_mutex_unlock(&box->lock);
}

__attribute__((noinline)) static void leak_one(long t) {
  char* p = (char*)malloc((size_t)(t + 1) * 8);
  memset(p, (int)t, (size_t)(t + 1) * 8);
  touch(p);
}

static void* body(void* arg) {
  long t = (long)arg;
  for (int i = 0; i < kBlocks; ++i) {
    void* b = malloc((size_t)(16 + 8 * (i % 12)));
    memset(b, 0, 16);
    post(&g_boxes[(t + 1) % kThreads], b);
  }
  leak_one(t);
  drain(&g_boxes[t]);
  return NULL;
}

int main(void) {
  pthread_t threads[kThreads];
  for (int t = 0; t < kThreads; ++t) pthread_mutex_init(&g_boxes[t].lock, NULL);
  for (long t = 0; t < kThreads; ++t) pthread_create(&threads[t], NULL, body, (void*)t);
  for (int t = 0; t < kThreads; ++t) pthread_join(threads[t], NULL);
  for (int t = 0; t < kThreads; ++t) drain(&g_boxes[t]);
  scrub_stack();
  return 0;
}
