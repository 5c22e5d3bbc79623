// The trace file's header and chunk frames (frame_source.hpp).
#include "reader/frame_source.hpp"

#include <sys/stat.h>
#include <zlib.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>

#include "byte_io.hpp"
#include "format_layout.hpp"
#include "memtrail/size.hpp"

namespace memtrail::reader {

using namespace format;

std::uint32_t crc32_of(const void* data, std::size_t n) {
  return static_cast<std::uint32_t>(
      ::crc32(0, static_cast<const Bytef*>(data), static_cast<uInt>(n)));
}

// Opens `path` as a regular file and measures it; false: header_error says why.
bool FrameSource::open_file() {
  // Checked before opening: opening a FIFO blocks until it has a writer, and
  // the reader seeks (and parallel reads reopen the file), which a pipe,
  // socket or device cannot do.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    header_error = path + (S_ISDIR(st.st_mode) ? ": is a directory, not a trace"
                           : S_ISFIFO(st.st_mode)
                               ? ": is a pipe; traces are read from regular files only (save it "
                                 "to a file first)"
                               : ": not a regular file; traces are read from regular files only");
    return false;
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    header_error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  file.reset(f);
  if (std::fseek(f, 0, SEEK_END) == 0) {
    long end = std::ftell(f);
    file_size = end > 0 ? static_cast<std::uint64_t>(end) : 0;
    std::fseek(f, 0, SEEK_SET);
  }
  return true;
}

void FrameSource::read_header() {
  if (!open_file()) return;
  std::FILE* f = file.get();
  unsigned char fixed[16];
  std::size_t got = std::fread(fixed, 1, sizeof fixed, f);
  if (got < sizeof kMagic || std::memcmp(fixed, kMagic, sizeof kMagic) != 0) {
    header_error = path + ": not a memtrail trace (bad magic)";
    return;
  }
  if (got < sizeof fixed) {
    header_error = path + ": truncated header (" + std::to_string(file_size) + " bytes)";
    return;
  }
  ByteSource src(reinterpret_cast<const char*>(fixed) + 8, 8);
  std::uint64_t version, flags, length;
  src.fixed(version, 2);
  src.fixed(flags, 2);
  src.fixed(length, 4);
  header.version = static_cast<std::uint16_t>(version);
  if (flags != 0 && version == kTraceFormatVersion) {
    header_error = path + ": unsupported header flags " + std::to_string(flags);
    return;
  }
  if (version != kTraceFormatVersion) {
    header_error = path + ": unsupported version " + std::to_string(version) +
                   " (this build reads version " + std::to_string(kTraceFormatVersion) + ")";
    return;
  }
  if (length > kMaxHeaderPayload || 16 + length + 4 > file_size) {
    header_error = path + ": truncated or corrupt header (payload of " + std::to_string(length) +
                   " bytes at byte 16)";
    return;
  }
  std::string body(length + 4, '\0');
  if (std::fread(body.data(), 1, body.size(), f) != body.size()) {
    header_error = path + ": truncated header";
    return;
  }
  ByteSource crc_src(body.data() + length, 4);
  std::uint64_t crc;
  crc_src.fixed(crc, 4);
  std::uint32_t expected = static_cast<std::uint32_t>(
      ::crc32(crc32_of(fixed + 8, 8), reinterpret_cast<const Bytef*>(body.data()),
              static_cast<uInt>(length)));
  if (crc != expected) {
    header_error = path + ": checksum mismatch in header at byte 16";
    return;
  }
  if (parse_payload(body.data(), length)) data_offset = 16 + length + 4;
}

// The header's checked payload into `header`; false: header_error says why.
bool FrameSource::parse_payload(const char* body, std::uint64_t length) {
  ByteSource b(body, length);
  std::uint64_t pid = 0, ppid = 0, rt = 0, mono = 0, clock = 0;
  bool ok = b.fixed(pid, 4) && b.fixed(ppid, 4) && b.fixed(rt, 8) && b.fixed(mono, 8) &&
            b.fixed(clock, 4);
  std::string* strs[] = {&header.command_line, &header.executable, &header.hostname};
  for (std::string* s : strs) {
    std::uint64_t n;
    ByteSource sub;
    ok = ok && b.fixed(n, 4) && b.take(n, sub);
    if (ok) s->assign(body + (length - b.remaining() - n), n);
  }
  std::uint64_t resolution = 0;
  ok = ok && b.fixed(resolution, 4) && b.empty();
  if (!ok) {
    header_error = path + ": undecodable header at byte 16";
    return false;
  }
  header.pid = static_cast<std::uint32_t>(pid);
  header.ppid = static_cast<std::uint32_t>(ppid);
  header.start_realtime_ns = rt;
  header.start_monotonic_ns = mono;
  header.clock_id = static_cast<std::uint32_t>(clock);
  if (resolution == 0 || resolution > kMaxTimeResolution) {
    header_error = path + ": time resolution " + std::to_string(resolution) +
                   " ns in the header is outside 1..1000000000";
    return false;
  }
  header.time_resolution_ns = static_cast<std::uint32_t>(resolution);
  return true;
}

FrameKind FrameSource::next_frame(std::uint64_t& offset, Frame& f, ReadResult& stop) {
  if (offset >= file_size) return FrameKind::eof;
  auto cut = [&](std::uint64_t off) {
    stop.ok = true;
    stop.dropped_bytes = file_size - off;
    stop.warning = path + ": dropped " + count_text(stop.dropped_bytes, "byte") +
                   " after the last whole chunk";
    return FrameKind::stop;
  };
  auto fail = [&](std::string what) {
    stop.error = std::move(what);
    return FrameKind::stop;
  };
  std::FILE* file_ptr = file.get();
  unsigned char fh[kFrameHeaderBytes];
  if (file_size - offset < kFrameHeaderBytes) return cut(offset);
  if (std::fread(fh, 1, sizeof fh, file_ptr) != sizeof fh)
    return fail(path + ": read error" + at(offset));
  ByteSource h(reinterpret_cast<const char*>(fh), sizeof fh);
  std::uint64_t type = 0, stored = 0, raw = 0, count = 0, hcrc = 0;  // 17 bytes: all read
  h.fixed(type, 1);
  h.fixed(stored, 4);
  h.fixed(raw, 4);
  h.fixed(count, 4);
  h.fixed(hcrc, 4);
  if (hcrc != crc32_of(fh, 13))
    return fail(path + ": checksum mismatch" + at(offset) + " (frame header)");
  if (type != kChunkData && type != kChunkEnd)
    return fail(path + ": unknown chunk type " + std::to_string(type) + at(offset));
  if (raw > kMaxRawChunk || stored > ZSTD_compressBound(raw) ||
      (type == kChunkEnd && (stored != 0 || raw != 0)))
    return fail(path + ": implausible chunk size (" + std::to_string(stored) + " stored, " +
                std::to_string(raw) + " raw)" + at(offset));
  if (file_size - offset < kFrameHeaderBytes + stored + kFrameTrailerBytes) return cut(offset);
  f.stored.resize(stored + kFrameTrailerBytes);
  if (std::fread(f.stored.data(), 1, f.stored.size(), file_ptr) != f.stored.size())
    return fail(path + ": read error" + at(offset));
  ByteSource t(f.stored.data() + stored, kFrameTrailerBytes);
  std::uint64_t pcrc;
  t.fixed(pcrc, 4);
  if (pcrc != crc32_of(f.stored.data(), stored))
    return fail(path + ": checksum mismatch" + at(offset));
  f.offset = offset;
  f.raw = raw;
  f.count = static_cast<std::uint32_t>(count);
  f.stored_size = stored;
  offset += kFrameHeaderBytes + stored + kFrameTrailerBytes;
  if (type == kChunkEnd) return FrameKind::end;
  // The frame must declare exactly R bytes before R bytes are allocated.
  if (ZSTD_getFrameContentSize(f.stored.data(), stored) != raw)
    return fail(path + ": undecodable chunk (zstd frame does not declare " + std::to_string(raw) +
                " bytes)" + at(f.offset));
  return FrameKind::data;
}

bool FrameSource::ends_with_end_marker() const {
  constexpr int kEndFrameBytes = kFrameHeaderBytes + kFrameTrailerBytes;  // no payload
  if (!header_error.empty() || file_size < kEndFrameBytes) return false;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  unsigned char b[kEndFrameBytes];
  if (!file || std::fseek(file.get(), -kEndFrameBytes, SEEK_END) != 0 ||
      std::fread(b, 1, sizeof b, file.get()) != sizeof b)
    return false;
  ByteSource h(reinterpret_cast<const char*>(b), sizeof b);
  std::uint64_t type = 0, stored = 0, raw = 0, count = 0, hcrc = 0, pcrc = 0;
  h.fixed(type, 1);
  h.fixed(stored, 4);
  h.fixed(raw, 4);
  h.fixed(count, 4);
  h.fixed(hcrc, 4);
  h.fixed(pcrc, 4);
  return type == kChunkEnd && stored == 0 && raw == 0 && hcrc == crc32_of(b, 13) &&
         pcrc == crc32_of(b, 0);
}

}  // namespace memtrail::reader
