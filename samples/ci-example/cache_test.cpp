// Per-test memory limits with memtrail/gtest.hpp (like pytest-memray's
// limit_memory / limit_leaks markers).
#include <memtrail/gtest.hpp>

#include <memory>
#include <vector>

namespace {

struct Cache {
  std::vector<std::unique_ptr<char[]>> entries;
  void add(std::size_t bytes) { entries.emplace_back(new char[bytes]); }
};

__attribute__((noinline)) void remember_forever(std::size_t bytes) {
  static std::vector<char*>* leaked = new std::vector<char*>;  // never freed
  leaked->push_back(new char[bytes]);
}

}  // namespace

TEST(Cache, LimitMemoryPasses) {
  MEMTRAIL_LIMIT_MEMORY("1 MiB");
  Cache c;
  for (int i = 0; i < 10; ++i) c.add(10 * 1024);
}

TEST(Cache, LimitMemoryFails) {
  MEMTRAIL_LIMIT_MEMORY("1 MiB");
  Cache c;
  for (int i = 0; i < 10; ++i) c.add(200 * 1024);  // 2000 KiB live at once
}

TEST(Cache, LimitLeaksPasses) {
  MEMTRAIL_LIMIT_LEAKS("1 KiB");
  Cache c;
  c.add(64 * 1024);  // freed with the cache
}

TEST(Cache, LimitLeaksFails) {
  MEMTRAIL_LIMIT_LEAKS("1 KiB");
  remember_forever(8 * 1024);
}
