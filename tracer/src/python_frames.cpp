// Python frames for CPython 3.11 (python_frames.hpp). Reads the
// interpreter's own structures of the calling thread, as py-spy and austin
// do, without calling into Python: the thread state from the GIL state's
// thread-specific key, its _PyCFrame's current _PyInterpreterFrame, and
// down the `previous` chain. The layout below is CPython 3.11's
// (Include/internal/pycore_frame.h, cpython/code.h, cpython/unicodeobject.h;
// python_layout.hpp, checked against the headers by python_layout_test).
#include "python_frames.hpp"
#include "python_layout.hpp"

#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "memtrail/detail/own_mappings.hpp"
#include "memtrail/event.hpp"
#include "memtrail/recorder.hpp"

namespace memtrail::runtime::python {

bool g_enabled = false;

namespace {

using ThreadStateFn = void* (*)();
using Addr2LineFn = int (*)(void*, int);
ThreadStateFn g_thread_state = nullptr;          // PyGILState_GetThisThreadState
Addr2LineFn g_addr2line = nullptr;               // PyCode_Addr2Line
std::uintptr_t g_eval_low = 0, g_eval_high = 0;  // _PyEval_EvalFrameDefault

template <typename T>
T read(const void* base, std::size_t offset) {
  T value;
  std::memcpy(&value, static_cast<const char*>(base) + offset, sizeof value);
  return value;
}

// The UTF-8 text of a str object, when it has one without allocating
// (compact ASCII, or a UTF-8 copy Python already made); else "?".
const char* utf8_of(const void* str) {
  if (!str) return "?";
  auto state = read<std::uint32_t>(str, layout::kUnicodeState);
  bool compact = state >> 5 & 1, ascii = state >> 6 & 1;
  if (compact && ascii) return static_cast<const char*>(str) + layout::kAsciiData;
  if (compact) {
    auto utf8 = read<const char*>(str, layout::kCompactUtf8);
    if (utf8) return utf8;
  }
  return "?";
}

// (code object, instruction) -> the interned frame string, shared by all
// threads: written under no lock (id, check, then key with release), read
// with the key checked again after the id. A code object freed and another
// made at its address is told apart by `check` (its name, file, first line).
struct CacheEntry {
  std::atomic<std::uint64_t> key;
  std::atomic<std::uint64_t> check;
  std::atomic<std::uint32_t> id;
};
constexpr std::size_t kCacheEntries = 1 << 15;
CacheEntry* g_cache = nullptr;  // mmap'ed by detect()

std::uint64_t code_check(const void* code) {
  auto name = reinterpret_cast<std::uint64_t>(read<const void*>(code, layout::kCodeQualname));
  auto file = reinterpret_cast<std::uint64_t>(read<const void*>(code, layout::kCodeFilename));
  auto line = static_cast<std::uint64_t>(read<int>(code, layout::kCodeFirstLine));
  return (name * 0x9e3779b97f4a7c15ull) ^ (file * 0xc2b2ae3d27d4eb4full) ^ line;
}

void append(char*& out, const char* end, const char* text) {
  while (*text && out < end) *out++ = *text++;
}

// Interns "qualname\x1ffile\x1fline" for instruction `lasti` of `code`.
std::uint32_t intern_frame(const void* code, int lasti) {
  int line = g_addr2line(const_cast<void*>(code), lasti * 2);
  char text[768];
  char* out = text;
  const char* end = text + sizeof text - 16;
  append(out, end, utf8_of(read<const void*>(code, layout::kCodeQualname)));
  *out++ = '\x1f';
  append(out, end, utf8_of(read<const void*>(code, layout::kCodeFilename)));
  *out++ = '\x1f';
  char digits[16];
  int n = 0;
  unsigned v = line > 0 ? static_cast<unsigned>(line) : 0;
  do digits[n++] = static_cast<char>('0' + v % 10);
  while ((v /= 10) != 0);
  while (n) *out++ = digits[--n];
  return intern_string(std::string_view(text, static_cast<std::size_t>(out - text)));
}

std::uint32_t frame_id(const void* code, int lasti) {
  std::uint64_t key = (reinterpret_cast<std::uint64_t>(code) >> 3) << 20 |
                      (static_cast<std::uint64_t>(lasti) & 0xFFFFF);
  std::uint64_t check = code_check(code);
  CacheEntry& e = g_cache[(key * 0x9e3779b97f4a7c15ull) >> (64 - 15)];
  if (e.key.load(std::memory_order_acquire) == key &&
      e.check.load(std::memory_order_relaxed) == check) {
    std::uint32_t id = e.id.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (e.key.load(std::memory_order_relaxed) == key && id != 0) return id;
  }
  std::uint32_t id = intern_frame(code, lasti);
  if (lasti >= 0 && lasti < (1 << 20)) {
    e.key.store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    e.id.store(id, std::memory_order_relaxed);
    e.check.store(check, std::memory_order_relaxed);
    e.key.store(key, std::memory_order_release);
  }
  return id;
}

bool in_eval(std::uint64_t ip) {
  return ip - 1 - g_eval_low < g_eval_high - g_eval_low;
}

// True when a module whose file name starts with "python3" or "libpython3"
// is in the process (the executable through /proc/self/exe), so that
// detect() asks dlsym only where the symbols exist (a failed dlsym would
// leave an error for the program's dlerror()).
bool python_in_process() {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    const char* base = std::strrchr(exe, '/');
    base = base ? base + 1 : exe;
    if (std::strncmp(base, "python3", 7) == 0) return true;
  }
  return dl_iterate_phdr(
             [](dl_phdr_info* m, std::size_t, void*) -> int {
               const char* base = m->dlpi_name ? std::strrchr(m->dlpi_name, '/') : nullptr;
               base = base ? base + 1 : m->dlpi_name;
               return base && std::strncmp(base, "libpython3", 10) == 0;
             },
             nullptr) != 0;
}

}  // namespace

void detect() {
  static bool done = false;
  if (done) return;
  done = true;
  if (!python_in_process()) return;
  auto* version = static_cast<const unsigned long*>(dlsym(RTLD_DEFAULT, "Py_Version"));
  void* eval = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
  void* state = dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
  void* addr2line = dlsym(RTLD_DEFAULT, "PyCode_Addr2Line");
  if (!version || !eval || !state || !addr2line) {
    dlerror();  // ours, not the program's
    return;
  }
  if ((*version >> 16) != 0x030B) return;  // 3.11 only: the layout above is its
  Dl_info info;
  void* sym_entry = nullptr;
  if (!dladdr1(eval, &info, &sym_entry, RTLD_DL_SYMENT) || !sym_entry) return;
  const auto* sym = static_cast<const ElfW(Sym)*>(sym_entry);
  if (sym->st_size == 0) return;
  void* cache = mmap(nullptr, sizeof(CacheEntry) * kCacheEntries, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (cache == MAP_FAILED) return;
  detail::note_own_mapped(cache, sizeof(CacheEntry) * kCacheEntries, detail::OwnPurpose::other);
  g_cache = static_cast<CacheEntry*>(cache);  // zeroed: every key empty
  g_eval_low = reinterpret_cast<std::uintptr_t>(eval);
  g_eval_high = g_eval_low + sym->st_size;
  g_thread_state = reinterpret_cast<ThreadStateFn>(state);
  g_addr2line = reinterpret_cast<Addr2LineFn>(addr2line);
  g_enabled = true;
}

int splice(std::uint64_t* ips, int count, int capacity) {
  int evals = 0;
  for (int i = 0; i < count; ++i) evals += in_eval(ips[i]);
  if (evals == 0) return count;
  const void* tstate = g_thread_state();
  if (!tstate) return count;
  const void* cframe = read<const void*>(tstate, layout::kThreadCFrame);
  const void* frame = cframe ? read<const void*>(cframe, layout::kCFrameCurrent) : nullptr;
  // Python frames of each interpreter call, innermost first: group g holds
  // ids[start[g] .. start[g + 1]).
  constexpr int kMaxPython = 128, kMaxGroups = 64;
  std::uint64_t ids[kMaxPython];
  int start[kMaxGroups + 1];
  int groups = 0, total = 0;
  for (; groups < evals && groups < kMaxGroups && frame; ++groups) {
    start[groups] = total;
    for (int guard = 0; frame && guard < kMaxPython; ++guard) {
      const void* code = read<const void*>(frame, layout::kFrameCode);
      auto prev_instr = read<std::uintptr_t>(frame, layout::kFramePrevInstr);
      bool entry = read<std::uint8_t>(frame, layout::kFrameIsEntry) != 0;
      char owner = read<char>(frame, layout::kFrameOwner);
      frame = read<const void*>(frame, layout::kFramePrevious);
      if (!code) break;
      auto first = reinterpret_cast<std::uintptr_t>(code) + layout::kCodeUnits;
      int lasti = static_cast<int>(static_cast<std::intptr_t>(prev_instr - first) / 2);
      // A frame still being set up has run none of its own code (CPython's
      // _PyFrame_IsIncomplete): not shown, as Python's own tracebacks do.
      bool incomplete = owner != layout::kOwnedByGenerator &&
                        lasti < read<int>(code, layout::kCodeFirstTraceable);
      if (!incomplete && total < kMaxPython) ids[total++] = kPythonFrameTag | frame_id(code, lasti);
      if (entry) break;
    }
  }
  start[groups] = total;
  if (total == 0) return count;
  // Expand in place from the end: frame i moves up by the Python frames
  // inserted before it, so nothing is overwritten before it is read.
  int out = std::min(count + total, capacity);
  int group = evals;  // interpreter calls at or above position i, counted down
  int write = count + total;
  for (int i = count - 1; i >= 0; --i) {
    // The frames an interpreter call runs come just inside (before) it.
    std::uint64_t native = ips[i];
    if (--write < out) ips[write] = native;
    if (in_eval(native) && --group < groups)
      for (int k = start[group + 1] - 1; k >= start[group]; --k)
        if (--write < out) ips[write] = ids[k];
  }
  return out;
}

}  // namespace memtrail::runtime::python
