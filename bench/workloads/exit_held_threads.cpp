// Exit with many threads holding heap blocks: what the exit-time leak scan's
// stop-the-world costs (bench/bench_exit_scan.sh, docs/BENCHMARKS.md).
//
//   exit_held_threads [THREADS=64] [BLOCKS=256]
//
// Each thread builds a list of BLOCKS 64-byte blocks, keeps its head on its
// stack and waits in a barrier that never fills; once all are waiting, main
// prints the realtime clock in ns ("exit_at N") and returns.
#include <pthread.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

struct Node {
  Node* next;
  char payload[56];
};

pthread_barrier_t g_ready;
pthread_barrier_t g_never;  // one more party than ever arrives
int g_blocks = 256;

void* holder(void*) {
  Node* head = nullptr;
  for (int i = 0; i < g_blocks; ++i) head = new Node{head, {}};
  pthread_barrier_wait(&g_ready);
  pthread_barrier_wait(&g_never);
  asm volatile("" : : "r"(head) : "memory");
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 64;
  if (argc > 2) g_blocks = std::atoi(argv[2]);
  pthread_barrier_init(&g_ready, nullptr, threads + 1);
  pthread_barrier_init(&g_never, nullptr, threads + 1);
  std::vector<pthread_t> ids(threads);
  for (pthread_t& id : ids) pthread_create(&id, nullptr, holder, nullptr);
  pthread_barrier_wait(&g_ready);
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  std::printf("exit_at %lld\n", now.tv_sec * 1000000000LL + now.tv_nsec);
  std::fflush(stdout);
  return 0;
}
