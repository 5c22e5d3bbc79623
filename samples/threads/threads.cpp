// threads: hundreds of threads allocating blocks that other threads free.
//
//   threads [THREADS] [BLOCKS]     (default 300 threads x 1000 blocks)
//
// Thread i allocates BLOCKS blocks (sizes 16..1039 B, fixed pattern), hands
// them to thread (i + 1) % THREADS through a mailbox, and frees what thread
// i - 1 handed to it. Every block is freed on a thread other than the one
// that allocated it; nothing leaks. Output is one fixed line.
#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

struct Mailbox {
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
  std::vector<void*>* blocks = nullptr;  // set once by the producer
};

struct Worker {
  int index = 0;
  int block_count = 0;
  Mailbox* outbox = nullptr;  // read by the next thread
  Mailbox* inbox = nullptr;   // filled by the previous thread
  unsigned long long freed_bytes = 0;
};

void* run_worker(void* arg) {
  auto* w = static_cast<Worker*>(arg);
  auto* mine = new std::vector<void*>();
  mine->reserve(static_cast<std::size_t>(w->block_count));
  for (int b = 0; b < w->block_count; ++b) {
    std::size_t size = 16 + static_cast<std::size_t>((w->index * 131 + b * 17) % 1024);
    void* p = std::malloc(size);
    std::memset(p, w->index & 0xff, size);
    // Store the size in the block so the consumer can total what it frees.
    std::memcpy(p, &size, sizeof size);
    mine->push_back(p);
  }
  pthread_mutex_lock(&w->outbox->lock);
  w->outbox->blocks = mine;
  pthread_cond_signal(&w->outbox->ready);
  pthread_mutex_unlock(&w->outbox->lock);

  pthread_mutex_lock(&w->inbox->lock);
  while (w->inbox->blocks == nullptr) pthread_cond_wait(&w->inbox->ready, &w->inbox->lock);
  std::vector<void*>* theirs = w->inbox->blocks;
  pthread_mutex_unlock(&w->inbox->lock);
  for (void* p : *theirs) {
    std::size_t size;
    std::memcpy(&size, p, sizeof size);
    w->freed_bytes += size;
    std::free(p);
  }
  delete theirs;  // allocated by the previous thread, too
  return nullptr;
}

int parse_count(const char* text, const char* what) {
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || value < 1 || value > 100000) {
    std::fprintf(stderr, "threads: %s must be an integer in 1..100000, got '%s'\n", what, text);
    std::exit(2);
  }
  return static_cast<int>(value);
}

}  // namespace

int main(int argc, char** argv) {
  int thread_count = argc > 1 ? parse_count(argv[1], "THREADS") : 300;
  int block_count = argc > 2 ? parse_count(argv[2], "BLOCKS") : 1000;

  std::vector<Mailbox> boxes(static_cast<std::size_t>(thread_count));
  std::vector<Worker> workers(static_cast<std::size_t>(thread_count));
  std::vector<pthread_t> threads(static_cast<std::size_t>(thread_count));
  for (int i = 0; i < thread_count; ++i) {
    workers[i].index = i;
    workers[i].block_count = block_count;
    workers[i].outbox = &boxes[static_cast<std::size_t>(i)];
    workers[i].inbox = &boxes[static_cast<std::size_t>((i + thread_count - 1) % thread_count)];
  }
  // All threads must run at once (each waits for its predecessor's blocks).
  for (int i = 0; i < thread_count; ++i) {
    if (pthread_create(&threads[i], nullptr, run_worker, &workers[i]) != 0) {
      std::fprintf(stderr, "threads: pthread_create failed at thread %d\n", i);
      return 1;
    }
  }
  unsigned long long total = 0;
  for (int i = 0; i < thread_count; ++i) {
    pthread_join(threads[i], nullptr);
    total += workers[i].freed_bytes;
  }
  std::printf("threads: %d threads freed %d blocks each across threads, %llu bytes\n", thread_count,
              block_count, total);
  return 0;
}
