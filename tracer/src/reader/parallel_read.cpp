// Chunks are decodable alone (docs/trace-format.md): `decoders` worker
// threads decompress and decode the next chunks into DecodedChunks while the
// calling thread replays the oldest one into the visitor, checking table
// references in file order. At most decoders + 1 chunks are in flight, each
// buffering at most max_buffered_events events (a larger chunk is decoded
// again by the calling thread when its turn comes), so memory stays bounded
// by a few decoded chunks, and the visitor sees exactly what read() would
// show it, errors included.
#include <algorithm>
#include <atomic>
#include <bit>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "reader/parallel_read.hpp"
#include "reader/read_pipeline.hpp"

namespace memtrail {

namespace {

using reader::DecodeError;

struct Job {
  reader::Frame frame;
  reader::DecodedChunk chunk;
  bool done = false;  // under the pool's mu
};

// The worker threads and their queue. Destroyed (workers stopped and
// joined) before the jobs they may still be decoding.
class DecoderPool {
 public:
  DecoderPool(unsigned decoders, std::uint64_t time_resolution, std::size_t max_events)
      : time_resolution_(time_resolution), max_events_(max_events) {
    for (unsigned i = 0; i < decoders; ++i) threads_.emplace_back([this] { work(); });
  }
  ~DecoderPool() {
    abort_ = true;
    {
      std::lock_guard lock(mu_);
      quit_ = true;
    }
    work_cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  void submit(Job* j) {
    j->done = false;
    {
      std::lock_guard lock(mu_);
      todo_.push_back(j);
    }
    work_cv_.notify_one();
  }
  void wait(Job& j) {
    std::unique_lock lock(mu_);
    done_cv_.wait(lock, [&] { return j.done; });
  }

 private:
  void work() {
    reader::ChunkDecoder d;
    for (;;) {
      Job* j;
      {
        std::unique_lock lock(mu_);
        work_cv_.wait(lock, [&] { return quit_ || !todo_.empty(); });
        if (quit_) return;
        j = todo_.front();
        todo_.pop_front();
      }
      decode(d, *j);
      {
        std::lock_guard lock(mu_);
        j->done = true;
      }
      done_cv_.notify_one();
    }
  }
  void decode(reader::ChunkDecoder& d, Job& j) {
    j.chunk.clear();
    // Every event takes at least two payload bytes (op and mask). Reserving
    // a power of two up front, kept from chunk to chunk, stops the buffer
    // from regrowing (and faulting fresh pages) for every chunk.
    j.chunk.events.reserve(
        std::bit_ceil(std::min<std::uint64_t>({j.frame.count, j.frame.raw / 2, max_events_})));
    try {
      d.decompress(j.frame);
      reader::BufferSink sink{j.chunk, abort_, max_events_, {}};
      // Stopped early without an abort: the chunk holds more events than a
      // buffer may (a hostile file can pack 2^25 into one chunk).
      if (!d.decode(j.frame, time_resolution_, sink)) j.chunk.overflow = true;
    } catch (const DecodeError& e) {
      j.chunk.error = e.what;
    }
  }

  const std::uint64_t time_resolution_;
  const std::size_t max_events_;
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<Job*> todo_;  // under mu_
  bool quit_ = false;      // under mu_
  std::atomic<bool> abort_{false};
  std::vector<std::thread> threads_;
};

}  // namespace

void TraceReader::Impl::read_chunks_parallel(reader::DirectSink& sink, ReadResult& r,
                                             unsigned decoders, std::size_t max_buffered_events) {
  // Declared before the pool: the workers may still be decoding them when a
  // return path unwinds, so they must outlive the join.
  std::deque<std::unique_ptr<Job>> in_flight;  // file order
  std::vector<std::unique_ptr<Job>> spare;     // recycled with their buffers
  const std::uint64_t time_resolution = source.header.time_resolution_ns;
  DecoderPool pool(decoders, time_resolution, max_buffered_events);
  struct Flusher {  // the buffered events go out on every return path
    reader::DirectSink& sink;
    ~Flusher() { sink.flush(); }
  } flusher{sink};
  std::uint64_t offset = source.data_offset;
  reader::FrameKind last = reader::FrameKind::data;
  reader::Frame end_frame;
  ReadResult stop;
  for (;;) {
    while (last == reader::FrameKind::data && in_flight.size() < decoders + 1) {
      std::unique_ptr<Job> j = spare.empty() ? std::make_unique<Job>() : std::move(spare.back());
      if (!spare.empty()) spare.pop_back();
      last = source.next_frame(offset, j->frame, stop);
      if (last != reader::FrameKind::data) {
        end_frame = std::move(j->frame);
        break;
      }
      pool.submit(j.get());
      in_flight.push_back(std::move(j));
    }
    if (in_flight.empty()) break;
    Job& j = *in_flight.front();
    pool.wait(j);
    try {
      bool more;
      if (j.chunk.overflow) {  // decoded here, straight into the visitor
        decoder.decompress(j.frame);
        more = decoder.decode(j.frame, time_resolution, sink);
      } else {
        more = replay(j.chunk, sink);
      }
      if (!more) {
        r.ok = true;  // the visitor stopped reading inside this chunk
        return;
      }
      ++r.chunks;
    } catch (const DecodeError& e) {
      r.error = error_at(e.what, j.frame.offset);
      return;
    }
    spare.push_back(std::move(in_flight.front()));
    in_flight.pop_front();
  }
  ends_read(last == reader::FrameKind::data ? reader::FrameKind::eof : last, end_frame, stop,
            offset, r);
}

}  // namespace memtrail
