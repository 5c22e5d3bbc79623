// The read-ahead chunk stage of the read pipeline (read_ahead(), read_fed()).
#pragma once

#include <zstd.h>

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>

#include "assert_levels.hpp"
#include "reader/chunk_decoder.hpp"
#include "reader/read_pipeline.hpp"

namespace memtrail {

// The read-ahead of read_ahead() and read_fed(): frames read, checked and
// decompressed one chunk ahead of the decoder into two slots, one being
// decoded, one being filled. One filler at a time (the reader's own thread,
// or the caller's through ChunkFeed::fill()); chunks are taken in file order
// and a chunk's frame or zstd error is reported when its turn comes.
struct TraceReader::AheadSlots {
  struct Ready {
    reader::FrameKind kind = reader::FrameKind::eof;
    reader::Frame frame;
    ReadResult stop;
    std::uint64_t next_offset = 0;  // past the frame
    std::string payload;            // decompressed (kind data, no error)
    std::string error;              // the zstd error (kind data)
  };
  static constexpr std::size_t kSlots = 2;
  Ready slots[kSlots];
  std::mutex mu;
  std::condition_variable cv;
  std::size_t produced = 0, consumed = 0;  // under mu
  bool quit = false;                       // under mu: the decoder is done
  bool finished = false;                   // under mu: the last slot is filled
  Impl* impl = nullptr;                    // under mu: set when the read starts
  std::uint64_t offset = 0;                // the filler's
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  std::function<void()> slot_freed;

  AheadSlots() = default;
  AheadSlots(const AheadSlots&) = delete;
  AheadSlots& operator=(const AheadSlots&) = delete;
  ~AheadSlots() { ZSTD_freeDCtx(dctx); }

  bool fillable_locked() const {
    return impl && !quit && !finished && produced - consumed < kSlots;
  }
  bool fillable() {
    std::lock_guard lock(mu);
    return fillable_locked();
  }
  // Fills the next slot if one is free; false when there was nothing to do.
  bool fill() {
    std::size_t n;
    {
      std::lock_guard lock(mu);
      if (!fillable_locked()) return false;
      n = produced;
    }
    Ready& c = slots[n % kSlots];
    c.stop = ReadResult{};
    c.error.clear();
    c.kind = impl->source.next_frame(offset, c.frame, c.stop);
    c.next_offset = offset;
    if (c.kind == reader::FrameKind::data) {
      try {
        reader::decompress_into(dctx, c.frame, c.payload);
      } catch (const reader::DecodeError& e) {
        c.error = e.what;
      }
    }
    {
      std::lock_guard lock(mu);
      produced = n + 1;
      finished = c.kind != reader::FrameKind::data || !c.error.empty();
    }
    cv.notify_all();
    return true;
  }
  // The reader's own filler thread: fills until the last chunk or quit.
  void fill_until_done() {
    for (;;) {
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return quit || finished || produced - consumed < kSlots; });
        if (quit || finished) return;
      }
      fill();
    }
  }
  // The decoder: the next filled slot, or null once quit.
  Ready* next_ready() {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return quit || produced > consumed; });
    return produced > consumed ? &slots[consumed % kSlots] : nullptr;
  }
  void release() {
    {
      std::lock_guard lock(mu);
      MEMTRAIL_ASSERT_INTERNAL(consumed < produced);
      ++consumed;
    }
    cv.notify_all();
    if (slot_freed) slot_freed();  // no lock held: the hook may take the caller's
  }
  void start(Impl& m) {
    {
      std::lock_guard lock(mu);
      impl = &m;
      offset = m.source.data_offset;
    }
    if (slot_freed) slot_freed();
  }
  void stop() {
    {
      std::lock_guard lock(mu);
      quit = true;
    }
    cv.notify_all();
  }
};

}  // namespace memtrail
