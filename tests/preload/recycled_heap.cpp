// recycled_heap [THREADS=200]: threads allocate blocks, hand them to each
// other through shared std::vector<void*> buffers (which grow, so glibc
// recycles their old arrays full of block addresses), free what they are
// handed, and each finally leaks one block of (t+1)*8 bytes whose bytes it
// never writes past the first. Valgrind and LSan: THREADS direct leaks,
// sum (t+1)*8 bytes (160,800 for 200), nothing indirect.
#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace {

constexpr int kRounds = 20;
constexpr int kBlocks = 40;
std::mutex g_lock;
std::vector<void*>* g_shared = nullptr;  // blocks waiting for any thread to free them

void* worker(void* arg) {
  const auto t = reinterpret_cast<std::uintptr_t>(arg);
  for (int r = 0; r < kRounds; ++r) {
    auto* mine = new std::vector<void*>();
    for (int b = 0; b < kBlocks; ++b) mine->push_back(std::malloc(8 + (t * 37 + b * 13) % 400));
    std::vector<void*> taken;
    {
      std::lock_guard guard(g_lock);
      for (void* p : *mine) g_shared->push_back(p);
      while (taken.size() < kBlocks && !g_shared->empty()) {
        taken.push_back(g_shared->back());
        g_shared->pop_back();
      }
      if (g_shared->capacity() > 4096) {  // let the buffer shrink and grow again
        auto* fresh = new std::vector<void*>(*g_shared);
        delete g_shared;
        g_shared = fresh;
      }
    }
    delete mine;
    for (void* p : taken) std::free(p);
  }
  auto* leaked = static_cast<char*>(std::malloc((t + 1) * 8));
  leaked[0] = 1;
  asm volatile("" : : "r"(leaked) : "memory");  // the compiler may not drop the leak
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 200;
  if (threads < 1 || threads > 4000) {
    std::fprintf(stderr, "recycled_heap: THREADS must be 1..4000\n");
    return 2;
  }
  g_shared = new std::vector<void*>();
  std::vector<pthread_t> ids(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t)
    pthread_create(&ids[t], nullptr, worker,
                   reinterpret_cast<void*>(static_cast<std::uintptr_t>(t)));
  for (pthread_t id : ids) pthread_join(id, nullptr);
  for (void* p : *g_shared) std::free(p);
  delete g_shared;
  return 0;
}
