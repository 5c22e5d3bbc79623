// The read-ahead stage: decoding the chunks another thread (the reader's
// own, or the caller's through ChunkFeed) read and decompressed ahead.
#include "reader/read_ahead.hpp"

#include <utility>

namespace memtrail {

void TraceReader::Impl::read_chunks_ahead(reader::DirectSink& sink, ReadResult& r,
                                          AheadSlots& ahead) {
  for (;;) {
    AheadSlots::Ready* c = ahead.next_ready();
    if (c == nullptr) {  // the feed was stopped: the caller stopped reading
      r.ok = true;
      return;
    }
    if (ends_read(c->kind, c->frame, c->stop, c->next_offset, r)) return;
    if (!c->error.empty()) {
      r.error = error_at(c->error, c->frame.offset);
      return;
    }
    sink.flush();  // the events of earlier chunks come before the chunk's start
    sink.v.on_chunk(c->frame.offset);
    // The payload moves in and out: both buffers keep their capacity.
    decoder.payload.swap(c->payload);
    bool more = decode_chunk(c->frame, sink, r);
    decoder.payload.swap(c->payload);
    if (!more) return;
    ahead.release();
  }
}

ChunkFeed::ChunkFeed() : slots_(std::make_unique<TraceReader::AheadSlots>()) {}
ChunkFeed::~ChunkFeed() = default;
bool ChunkFeed::fill() {
  return slots_->fill();
}
bool ChunkFeed::fillable() {
  return slots_->fillable();
}
void ChunkFeed::on_slot_freed(std::function<void()> hook) {
  slots_->slot_freed = std::move(hook);
}
void ChunkFeed::stop() {
  slots_->stop();
}
std::uint64_t ChunkFeed::bytes_read() const {
  return slots_->offset;  // the filler's own: read on the filler's thread
}

}  // namespace memtrail
