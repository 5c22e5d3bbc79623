// Session::open(): progress in bytes and stages, cancel in every stage, and
// every SessionError from a real bad file.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "session_test_util.hpp"
#include "temp_dir.hpp"

namespace memtrail {
namespace {

using test::session_options;
using test::TraceBuilder;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(SessionOpen, ProgressIsMonotonicBytesEndingAtTheFileSize) {
  TraceBuilder b(test::temp_trace("o-progress.mtr"));
  test::write_session_trace(b);
  const std::string& path = b.finish();
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  std::vector<LoadProgress> seen;
  OpenResult r = Session::open(path, session_options(), [&](const LoadProgress& p) {
    seen.push_back(p);
    return true;
  });
  ASSERT_TRUE(r.session) << r.message;
  EXPECT_EQ(r.session->file_bytes(), static_cast<std::uint64_t>(st.st_size));
  std::uint64_t last = 0, reading = 0;
  LoadStage stage = LoadStage::opening;
  for (const LoadProgress& p : seen) {
    EXPECT_GE(p.stage, stage);  // stages only move forward
    stage = p.stage;
    if (p.stage != LoadStage::reading) continue;
    ++reading;
    EXPECT_EQ(p.total, static_cast<std::uint64_t>(st.st_size));
    EXPECT_GE(p.done, last);
    last = p.done;
  }
  EXPECT_EQ(last, static_cast<std::uint64_t>(st.st_size));
  EXPECT_GE(reading, 6u);  // one report per chunk read, at least
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back().stage, LoadStage::done);
  EXPECT_STREQ(stage_name(LoadStage::reading), "reading events");
}

TEST(SessionOpen, CancelInEveryStage) {
  TraceBuilder b(test::temp_trace("o-cancel.mtr"));
  test::write_session_trace(b);
  const std::string& path = b.finish();
  for (LoadStage stop : {LoadStage::opening, LoadStage::reading, LoadStage::finishing,
                         LoadStage::symbolizing, LoadStage::done}) {
    OpenResult r = Session::open(path, session_options(),
                                 [&](const LoadProgress& p) { return p.stage != stop; });
    EXPECT_FALSE(r.session) << stage_name(stop);
    EXPECT_EQ(r.error, SessionError::cancelled) << stage_name(stop);
    EXPECT_EQ(r.message, path + ": cancelled");
  }
  // In the middle of reading: after the second chunk.
  int chunks = 0;
  OpenResult mid = Session::open(path, session_options(), [&](const LoadProgress& p) {
    return !(p.stage == LoadStage::reading && p.done > 0 && ++chunks == 2);
  });
  EXPECT_EQ(mid.error, SessionError::cancelled);
}

struct BadFile {
  std::string what;
  SessionError error;
  std::string message_part;
};

TEST(SessionOpen, EveryErrorFromARealBadFile) {
  test::TempDir dir("session-errors");
  ASSERT_FALSE(dir.path().empty());
  std::string good;
  {
    TraceBuilder b(dir / "good.mtr");
    test::write_session_trace(b);
    good = slurp(b.finish());
  }
  spit(dir / "text.mtr", "this is not a trace, only text\n");
  spit(dir / "cut.mtr", good.substr(0, good.size() - 30));
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x40;
  spit(dir / "flipped.mtr", flipped);
  std::string newer = good;
  newer[8] = 2;
  spit(dir / "newer.mtr", newer);
  spit(dir / "ok.mtr", good);
  ::mkdir((dir / "dir.mtr").c_str(), 0700);

  std::vector<BadFile> cases = {
      {"missing.mtr", SessionError::cannot_open, "cannot open"},
      {"dir.mtr", SessionError::cannot_open, "is a directory"},
      {"text.mtr", SessionError::not_a_trace, "not a memtrail trace"},
      {"cut.mtr", SessionError::truncated, "cut file"},
      {"flipped.mtr", SessionError::corrupt, "in chunk at byte"},
      {"newer.mtr", SessionError::unsupported_version, "unsupported version 2"},
  };
  for (const BadFile& c : cases) {
    OpenResult r = Session::open(dir / c.what, session_options());
    EXPECT_FALSE(r.session) << c.what;
    EXPECT_EQ(r.error, c.error) << c.what << ": " << error_name(r.error) << ": " << r.message;
    EXPECT_NE(r.message.find(c.message_part), std::string::npos) << r.message;
    EXPECT_EQ(r.message.find('\n'), std::string::npos) << r.message;
  }
  SessionOptions marks = session_options();
  marks.analysis.from_mark = "never";
  OpenResult m = Session::open(dir / "ok.mtr", marks);
  EXPECT_EQ(m.error, SessionError::mark_not_found) << m.message;
  EXPECT_NE(m.message.find("mark 'never' not found"), std::string::npos) << m.message;
  // A cut file with allow_partial opens, with a warning.
  SessionOptions partial = session_options();
  partial.analysis.allow_partial = true;
  OpenResult p = Session::open(dir / "cut.mtr", partial);
  EXPECT_TRUE(p.session) << p.message;
  EXPECT_NE(p.warning.find("cut file"), std::string::npos) << p.warning;
}

TEST(SessionOpen, AChangedFileIsAnErrorNotAWrongAnswer) {
  test::TempDir dir("session-changed");
  std::string path = dir / "t.mtr";
  {
    TraceBuilder b(dir / "src.mtr");
    test::write_session_trace(b);
    spit(path, slurp(b.finish()));
  }
  auto s = test::open_session(path);
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->segment_map(PoolId{2}, 450).error.empty());
  spit(path, "changed");
  EXPECT_NE(s->segment_map(PoolId{2}, 450).error.find("changed since it was opened"),
            std::string::npos);
}

}  // namespace
}  // namespace memtrail
