// events_needing_model (model_scan.hpp) tells the decoder after which event
// no alloc reads the address model. Too low an answer would decode a
// candidate-coded alloc from a model left stale (the round trips of
// test_predictors with the model switched off mid-chunk catch that end to
// end); these check the scan itself on hand-made OPS streams: records are
// skipped field by field (their bytes never count as events), frees by
// reference and allocs by explicit address do not count, and a stream the
// decoder would fail on asks for the model everywhere.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "model_scan.hpp"
#include "record_layout.hpp"

namespace memtrail::format {
namespace {

constexpr std::uint8_t kAlloc = 1, kFree = 2, kReuse = 3;

std::uint64_t scan(const std::string& ops) {
  return events_needing_model(ByteSource(ops.data(), ops.size()));
}
std::string ev(std::uint8_t op, std::uint8_t mask = 0) {
  return std::string{char(op), char(mask)};
}

TEST(ModelScan, NoCandidateAllocNeedsNoModel) {
  EXPECT_EQ(scan(""), 0u);
  // Explicit addresses, a free by reference, a time step back: no candidate.
  EXPECT_EQ(scan(ev(kAlloc, kMaskAddr) + ev(kFree | kOpAddrRef) + ev(kAlloc | kOpTimeBack) +
                 ev(kReuse, kMaskAddr)),
            0u);
}

TEST(ModelScan, CountsUpToTheLastCandidateAlloc) {
  EXPECT_EQ(scan(ev(kAlloc | kOpAddrRef)), 1u);
  EXPECT_EQ(scan(ev(kAlloc) + ev(kFree) + ev(kAlloc | kOpAddrRef) + ev(kFree | kOpAddrRef)), 3u);
  EXPECT_EQ(scan(ev(kReuse | kOpAddrRef | kOpTimeBack, 0xff) + ev(kAlloc | kOpAddrRef) + ev(kFree) +
                 ev(kReuse | kOpAddrRef) + ev(kAlloc) + ev(kFree)),
            4u);
}

TEST(ModelScan, RecordsAreSkippedNotCounted) {
  // Each record's bytes hold what would read as a candidate alloc op.
  const std::string cand = ev(kAlloc | kOpAddrRef);
  std::string records;
  records += char(kRecordBit | kTagString) + std::string("\x01\x02") + cand;
  records +=
      char(kRecordBit | kTagModule) + std::string("\x02\x02") + cand + "\x21\x21\x21\x02" + cand;
  records += char(kRecordBit | kTagThread) + std::string("\x03\x21\x02") + cand;
  records += char(kRecordBit | kTagPool) + std::string("\x04\x21\x02") + cand + "\x21\x21\x21";
  records += char(kRecordBit | kTagStackNode) + std::string("\x05\x21\xa1\x21");
  records += char(kRecordBit | kTagStackNodeDelta) + std::string("\x21\x21\xa1\x21");
  records += char(kRecordBit | kTagScope) + std::string("\x06\x02") + cand + "\x21\x21";
  records += char(kRecordBit | kTagThreadSwitch) + std::string("\x21");
  EXPECT_EQ(scan(records), 0u);
  EXPECT_EQ(scan(ev(kFree) + records + ev(kAlloc | kOpAddrRef) + records + ev(kAlloc)), 2u);
}

// record_layout.hpp is the one definition of the records: what the writer
// writes by it, the scan skips to the byte and the decoder reads back.
template <RecordTag Tag, class... Values>
void expect_skipped_exactly(const Values&... values) {
  std::string bytes;
  ByteSink out{bytes};
  write_record_fields<Tag>(out, values...);
  ByteSource skip(bytes.data(), bytes.size());
  EXPECT_TRUE(skip_record(skip, Tag)) << int(Tag);
  EXPECT_TRUE(skip.empty()) << int(Tag);
  // One byte short: the scan, like the decoder, cannot read the record.
  ByteSource cut(bytes.data(), bytes.size() - 1);
  EXPECT_FALSE(skip_record(cut, Tag)) << int(Tag);
}

TEST(ModelScan, SkipsExactlyWhatTheWriterWrites) {
  const std::string path(300, 'p');  // a length over one varint byte
  expect_skipped_exactly<kTagString>(std::uint32_t{70000}, std::string_view("name"));
  expect_skipped_exactly<kTagModule>(std::uint32_t{2}, path, std::uint64_t{0x7f0000000000},
                                     std::uint64_t{0x7f0000001000}, std::uint64_t{1} << 63,
                                     std::string("0a1b"));
  expect_skipped_exactly<kTagThread>(std::uint32_t{3}, std::uint64_t{123456}, std::string("t"));
  expect_skipped_exactly<kTagPool>(std::uint32_t{4}, std::uint32_t{1}, std::string("cuda"),
                                   PoolKind::other, MemorySpace::mmap, std::int32_t{-1});
  expect_skipped_exactly<kTagStackNode>(std::uint32_t{5}, std::uint32_t{4},
                                        std::uint64_t{0xffffffffff600000});
  expect_skipped_exactly<kTagStackNodeDelta>(std::uint32_t{0xffffffff}, std::uint32_t{1},
                                             std::uint64_t{0xffffffffff600000});
  expect_skipped_exactly<kTagScope>(std::uint32_t{6}, std::string("epoch"), ScopeKind::iteration,
                                    std::uint32_t{4});
  expect_skipped_exactly<kTagThreadSwitch>(std::uint32_t{0xffffffff});
}

TEST(ModelScan, DecoderReadsBackWhatTheWriterWrites) {
  std::string bytes;
  ByteSink out{bytes};
  write_record_fields<kTagPool>(out, std::uint32_t{9}, std::uint32_t{2}, std::string("pool"),
                                PoolKind::other, MemorySpace::mmap, std::int32_t{-7});
  ByteSource in(bytes.data(), bytes.size());
  std::uint32_t id = 0, parent = 0;
  std::string_view name;
  std::uint8_t kind = 0, space = 0;
  std::int64_t device = 0;
  ASSERT_TRUE(read_record_fields<kTagPool>(in, id, parent, name, kind, space, device));
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(id, 9u);
  EXPECT_EQ(parent, 2u);
  EXPECT_EQ(name, "pool");
  EXPECT_EQ(kind, static_cast<std::uint8_t>(PoolKind::other));
  EXPECT_EQ(space, static_cast<std::uint8_t>(MemorySpace::mmap));
  EXPECT_EQ(device, -7);
}

TEST(ModelScan, UnreadableStreamsKeepTheModelEverywhere) {
  EXPECT_EQ(scan(std::string(1, char(kAlloc))), kModelForAll);          // no mask
  EXPECT_EQ(scan(ev(kAlloc) + char(kRecordBit | 0x7f)), kModelForAll);  // unknown tag
  EXPECT_EQ(scan(ev(kAlloc | kOpAddrRef) + char(kRecordBit | kTagString) + "\x01\x05" + "ab"),
            kModelForAll);  // string past the end
  EXPECT_EQ(scan(std::string(1, char(kRecordBit | kTagThreadSwitch)) + "\xff\xff\xff\xff\x7f"),
            kModelForAll);  // thread id over 32 bits, as the decoder rejects it
}

}  // namespace
}  // namespace memtrail::format
