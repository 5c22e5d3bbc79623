// TraceReader::read_fed() the way the analyzer drives it: the read runs on a
// second thread while this one reads the chunks ahead (ChunkFeed::fill())
// whenever the feed says a slot may be free. Shared by the reader tests and
// the fuzz target, which compare it with read().
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "memtrail/trace_file.hpp"

namespace memtrail::test {

inline ReadResult read_fed_here(const std::string& path, TraceVisitor& v) {
  TraceReader reader(path);
  ChunkFeed feed;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false, poked = false;
  feed.on_slot_freed([&] {
    std::lock_guard lock(mu);
    poked = true;
    cv.notify_all();
  });
  ReadResult r;
  std::thread decoder([&] {
    r = reader.read_fed(v, feed);
    std::lock_guard lock(mu);
    done = true;
    cv.notify_all();
  });
  for (;;) {
    while (feed.fill()) {
    }
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return done || poked; });
    if (done) break;
    poked = false;
  }
  decoder.join();
  return r;
}

}  // namespace memtrail::test
