// libFuzzer target for TraceReader: any byte string is written to a file and
// read fully, with read(), read_parallel() and read_ahead(). The reader must return (ok or a
// one-line error), never crash, hang or allocate without bound. Build and run: see
// docs/trace-format.md.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "memtrail/trace_file.hpp"
#include "read_fed_here.hpp"

namespace {

struct CountingVisitor : memtrail::TraceVisitor {
  std::uint64_t n = 0;
  void on_event(const memtrail::Event& e) override { n += e.size & 1; }
  void on_string(std::uint32_t, std::string_view t) override { n += t.size(); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/memtrail-fuzz-" + std::to_string(::getpid()) + ".mtr";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  memtrail::TraceReader reader(path);
  CountingVisitor v;
  memtrail::ReadResult r = reader.read(v);
  if (!r.ok && r.error.empty()) __builtin_trap();                 // errors must say why
  if (r.error.find('\n') != std::string::npos) __builtin_trap();  // ... in one line
  // The parallel reader sees and says exactly the same.
  CountingVisitor pv;
  memtrail::ReadResult p = memtrail::TraceReader(path).read_parallel(pv, 2);
  if (p.ok != r.ok || p.error != r.error || p.events != r.events || p.chunks != r.chunks ||
      p.warning != r.warning || pv.n != v.n)
    __builtin_trap();
  // ... and so does the read with a read-ahead thread.
  CountingVisitor av;
  memtrail::ReadResult a = memtrail::TraceReader(path).read_ahead(av);
  if (a.ok != r.ok || a.error != r.error || a.events != r.events || a.chunks != r.chunks ||
      a.warning != r.warning || av.n != v.n)
    __builtin_trap();
  // ... and the read whose chunks this thread reads ahead (the analyzer's).
  CountingVisitor fv;
  memtrail::ReadResult fr = memtrail::test::read_fed_here(path, fv);
  if (fr.ok != r.ok || fr.error != r.error || fr.events != r.events || fr.chunks != r.chunks ||
      fr.warning != r.warning || fv.n != v.n)
    __builtin_trap();
  return 0;
}
