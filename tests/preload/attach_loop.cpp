// A long-running program for the `memtrail attach` test, driven through its
// stdin so that what it allocates while attached is known exactly.
//   start: keeps 7 blocks of 1000 B, and 5 of 2000 B it frees later; "ready"
//   'a':   a step: 100 x malloc(48) and 10 x new char[24] (all kept), then
//          frees 40 of the mallocs and (once) the 5 start-up blocks; "done N"
//   'd':   dlopens argv[1] (dlopen_plugin), waits 1 s (memtrail patches new
//          modules within 20 ms), calls plugin_work (malloc 128 + 4242) and
//          plugin_shutdown (frees the 128); "plugin"
//   'u':   dlcloses it; "unloaded"
//   'm':   mmaps 3 anonymous regions of 64 KiB and munmaps the second;
//          "mapped" (the regions stay mapped)
//   'q':   exits 0
// Nothing else allocates between steps (stdout's buffer exists from "ready").
#include <dlfcn.h>
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace {

void* g_kept[7];
void* g_later[5];
void* g_step[1000][110];

__attribute__((noinline)) void* attach_loop_malloc(std::size_t n) {
  return std::malloc(n);
}

__attribute__((noinline)) void step(int n) {
  void** mine = g_step[n];
  for (int i = 0; i < 100; ++i) mine[i] = attach_loop_malloc(48);
  for (int i = 100; i < 110; ++i) mine[i] = new char[24];
  for (int i = 0; i < 40; ++i) std::free(mine[i]);
  for (void*& p : g_later) {
    std::free(p);
    p = nullptr;
  }
}

}  // namespace

void* g_plugin;

bool map_step() {
  void* region[3];
  for (void*& r : region) {
    r = mmap(nullptr, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED) return false;
  }
  return munmap(region[1], 65536) == 0;
}

bool plugin_step(const char* path) {
  g_plugin = dlopen(path, RTLD_NOW);
  if (g_plugin == nullptr) return false;
  sleep(1);
  auto work = reinterpret_cast<int (*)(int)>(dlsym(g_plugin, "plugin_work"));
  auto shutdown = reinterpret_cast<void (*)()>(dlsym(g_plugin, "plugin_shutdown"));
  if (work == nullptr || shutdown == nullptr) return false;
  work(1);
  shutdown();
  return true;
}

int main(int argc, char** argv) {
  for (void*& p : g_kept) p = std::malloc(1000);
  for (void*& p : g_later) p = std::malloc(2000);
  std::printf("ready\n");
  std::fflush(stdout);
  int steps = 0;
  char c = 0;
  while (true) {
    ssize_t n = read(0, &c, 1);
    if (n < 0 && errno == EINTR) continue;  // gdb's calls may interrupt the read
    if (n != 1) break;
    if (c == 'q') return 0;
    if (c == 'd' && argc > 1) {
      std::printf(plugin_step(argv[1]) ? "plugin\n" : "no plugin\n");
      std::fflush(stdout);
      continue;
    }
    if (c == 'm') {
      std::printf(map_step() ? "mapped\n" : "mmap failed\n");
      std::fflush(stdout);
      continue;
    }
    if (c == 'u' && g_plugin != nullptr) {
      dlclose(g_plugin);
      g_plugin = nullptr;
      std::printf("unloaded\n");
      std::fflush(stdout);
      continue;
    }
    if (c != 'a' || steps == 1000) continue;
    step(steps++);
    std::printf("done %d\n", steps);
    std::fflush(stdout);
  }
  return 0;
}
