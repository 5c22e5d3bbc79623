// cross_thread: frees on another thread than the allocating one, as in
// producer/consumer pipelines. THREADS threads form a ring; each allocates
// BLOCKS blocks of 16 B..8 KiB and hands them, in batches of 64, to the next
// thread, which frees them. Every free crosses threads. A thread whose
// successor has 256 blocks waiting frees its own mail until there is room,
// and one whose successor has finished frees its batches itself, so the live
// set stays bounded however the threads are scheduled.
//
//   cross_thread THREADS BLOCKS
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "workload.hpp"

namespace {

constexpr std::size_t kBatch = 64;
constexpr std::size_t kMaxWaiting = 256;

struct Mailbox {
  std::mutex mutex;
  std::vector<void*> blocks;
  std::atomic<std::size_t> waiting{0};
  std::atomic<bool> owner_done{false};
};

__attribute__((noinline)) void* produce(workload::Rng& rng) {
  void* p = std::malloc(workload::log_uniform_size(rng, 4, 13));
  workload::touch(p);
  return p;
}

void free_all(std::vector<void*>& blocks) {
  for (void* p : blocks) std::free(p);
  blocks.clear();
}

// Frees what the previous thread handed over.
void drain(Mailbox& mine, std::vector<void*>& scratch) {
  {
    std::lock_guard<std::mutex> lock(mine.mutex);
    scratch.swap(mine.blocks);
    mine.waiting.store(0, std::memory_order_relaxed);
  }
  free_all(scratch);
}

// Waits (freeing its own mail, so the ring keeps moving) while `next` is
// full and its owner still running. Once that owner has finished, the batch
// is freed here: handed to a mailbox nobody drains until main's final sweep,
// every remaining batch of the ring piled up there, so the live set (and the
// RSS the suite compares) grew with how unevenly the threads were scheduled
// (under a tracer, 36 -> 127 MiB of glibc arenas in the last moments of a
// 64-thread run). What a finished owner got before it finished, main frees.
void hand_over(Mailbox& mine, Mailbox& next, std::vector<void*>& batch,
               std::vector<void*>& scratch) {
  while (next.waiting.load(std::memory_order_relaxed) > kMaxWaiting && !next.owner_done.load()) {
    drain(mine, scratch);
    std::this_thread::yield();
  }
  if (next.owner_done.load()) {
    free_all(batch);
    return;
  }
  std::lock_guard<std::mutex> lock(next.mutex);
  next.blocks.insert(next.blocks.end(), batch.begin(), batch.end());
  next.waiting.store(next.blocks.size(), std::memory_order_relaxed);
  batch.clear();
}

void worker(std::vector<Mailbox>& boxes, std::size_t index, long blocks) {
  workload::Rng rng{0x63726f7373ull + index};
  Mailbox& mine = boxes[index];
  Mailbox& next = boxes[(index + 1) % boxes.size()];
  std::vector<void*> batch, scratch;
  for (long i = 0; i < blocks; ++i) {
    batch.push_back(produce(rng));
    if (batch.size() < kBatch && i + 1 < blocks) continue;
    hand_over(mine, next, batch, scratch);
    drain(mine, scratch);
  }
  mine.owner_done.store(true);
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "cross_thread THREADS BLOCKS";
  workload::too_many_args(argc, 2, usage);
  auto threads = static_cast<std::size_t>(workload::arg(argc, argv, 1, 64, usage));
  long blocks = workload::arg(argc, argv, 2, 20000, usage);
  std::vector<Mailbox> boxes(threads);
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t)
    pool.emplace_back([&boxes, t, blocks] { worker(boxes, t, blocks); });
  for (auto& t : pool) t.join();
  std::vector<void*> scratch;
  for (auto& box : boxes) drain(box, scratch);  // what nobody drained after the last hand-over
  workload::report("cross_thread",
                   static_cast<std::uint64_t>(threads) * static_cast<std::uint64_t>(blocks));
  return 0;
}
