// The frame source stage of the read pipeline: the trace file, its header,
// and its chunk frames one after another, each checked (header and payload
// crc32, plausible sizes, a zstd frame declaring the raw size) before any
// byte of it is decompressed. A file cut mid-frame stops cleanly there.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "memtrail/trace_file.hpp"

namespace memtrail::reader {

std::uint32_t crc32_of(const void* data, std::size_t n);

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};

// One chunk's frame, checked (header and payload crc32, sizes); the payload
// still compressed.
struct Frame {
  std::uint64_t offset = 0;  // of the frame in the file
  std::uint64_t raw = 0;     // payload bytes once decompressed
  std::uint32_t count = 0;   // declared events
  std::size_t stored_size = 0;
  std::string stored;  // stored_size payload bytes, then the trailer
};

enum class FrameKind { data, end, stop, eof };

struct FrameSource {
  std::string path;
  std::unique_ptr<std::FILE, FileCloser> file;
  std::uint64_t file_size = 0;
  std::uint64_t data_offset = 0;  // first chunk
  std::string header_error;
  TraceHeader header;

  // Opens `path` and reads its header; header_error says why not.
  void read_header();
  // Reads and checks the frame at `offset` and advances past it. `data` and
  // `end` fill `f`; `stop` fills `stop` (ok + dropped bytes for a cut file,
  // or the error); `eof` means no bytes are left. The file position must be
  // at `offset` (seek()).
  FrameKind next_frame(std::uint64_t& offset, Frame& f, ReadResult& stop);
  bool seek(std::uint64_t offset) {
    return std::fseek(file.get(), static_cast<long>(offset), SEEK_SET) == 0;
  }
  bool ends_with_end_marker() const;
  std::string at(std::uint64_t off) const { return " in chunk at byte " + std::to_string(off); }

 private:
  bool open_file();
  bool parse_payload(const char* body, std::uint64_t length);
};

}  // namespace memtrail::reader
