// Exit-time root collection for the leak classifier.
//
// Roots, as in LeakSanitizer:
//   * writable PT_LOAD segments of every loaded module (.data, .bss, GOT),
//     except the recorder's and this library's own (their buffers hold copies
//     of every recent block address), glibc malloc's main arena
//     (glibc_main_arena.hpp: allocator state, with a stale chunk address)
//     and ld.so's address of its ld.so.cache mapping (linker_cache_pointer.hpp:
//     stale once the cache is unmapped);
//   * the exiting thread's stack from the stack pointer its program frame
//     had when it called exit() / _exit() (main's return calls exit() from
//     __libc_start_call_main, so main's dead frame is not scanned), plus that
//     frame's callee-saved registers (exit_frame.hpp). When no such frame is
//     found (the scan reached another way, or the unwind failed), from the
//     scanner's own stack pointer up after spilling the registers into a
//     jmp_buf there: dead frames below the exit machinery then still count;
//   * every other thread of the process (listed in /proc/self/task, whether
//     or not it ever recorded an event), held stopped for the whole scan:
//     its stack from the stack pointer it had when stopped (red zone
//     included) to the top of its recorded stack, or of the mapping that
//     holds its stack pointer when it recorded nothing, plus its general
//     registers (thread_stack_tops.hpp); its whole recorded stack when it
//     did not answer;
//   * the program's own anonymous read-write mappings (its mmap calls, not
//     the tracer's nor glibc malloc's: program_mappings.hpp), as Valgrind
//     scans its client's mappings: CPython's pymalloc arenas;
//   * every thread's static TLS block and descriptor around its thread
//     pointer (_dl_get_tls_static_info gives the size);
//   * blocks the dynamic linker allocated (see linker_blocks.hpp) and the
//     standard streams' buffers libc allocated (both the runtime's own).
// The scan never waits for the loader's locks, which a program thread may
// hold for good (inside a dl_iterate_phdr callback or a dlopen'd library's
// constructor): modules are read from the linker's list (module_roots.hpp),
// and what needs dlsym or dladdr was found at start-up (prepare_leak_scan).
// The live set, the stacks and the blocks are read while they are stopped. docs/tracing.md says
// shape by shape what is a root and where this departs from Valgrind or LeakSanitizer.
#include "leak_scan.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <string>
#include <vector>

#include "exit_frame.hpp"
#include "glibc_main_arena.hpp"
#include "image_constants.hpp"
#include "interior_heuristics.hpp"
#include "late_frees.hpp"
#include "linker_blocks.hpp"
#include "linker_cache_pointer.hpp"
#include "memtrail/detail/diagnostics.hpp"
#include "memtrail/detail/live_blocks.hpp"
#include "memtrail/detail/own_mappings.hpp"
#include "memtrail/detail/recording.hpp"
#include "memtrail/detail/reentrancy.hpp"
#include "memtrail/detail/session_state.hpp"
#include "memtrail/detail/thread_registry.hpp"
#include "module_roots.hpp"
#include "preload_state.hpp"
#include "program_mappings.hpp"
#include "python_data_words.hpp"
#include "reachability.hpp"
#include "scan_debug.hpp"
#include "start_snapshot.hpp"
#include "thread_stack_tops.hpp"

namespace memtrail::preload {
namespace {

// glibc's struct pthread on x86-64 (2.34 .. 2.36: 2368). The main thread's
// descriptor lies outside its stack, so this is its extent; other threads'
// descriptors are measured from their stacks.
constexpr std::uintptr_t kDefaultDescriptorExtent = kGlibcTcbSize;
// x86-64 code may keep data this far below its stack pointer.
constexpr std::uintptr_t kRedZone = 128;
// How long the scan waits for threads to stop (blocked signal: whole stack).
constexpr int kAnswerTimeoutMs = 200;

// The static TLS size, found at start-up (prepare_leak_scan).
std::size_t g_static_tls_size = 0;
// CPython 3.11's data-only types, when it is in the process (prepare_leak_scan).
PythonTypes g_python_types;
bool g_scan_prepared = false;

std::size_t static_tls_size() {
  using Fn = void (*)(std::size_t*, std::size_t*);
  auto fn = reinterpret_cast<Fn>(dlvsym(RTLD_DEFAULT, "_dl_get_tls_static_info", "GLIBC_PRIVATE"));
  if (fn == nullptr) fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info"));
  std::size_t size = 0, align = 0;
  if (fn != nullptr) fn(&size, &align);
  return size;
}

bool current_thread_stack(std::uintptr_t* low, std::uintptr_t* high) {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return false;
  void* address = nullptr;
  std::size_t size = 0;
  bool ok = pthread_attr_getstack(&attr, &address, &size) == 0;
  pthread_attr_destroy(&attr);
  *low = reinterpret_cast<std::uintptr_t>(address);
  *high = *low + size;
  return ok;
}

// The whole of a small /proc file (no fixed size: /proc/self/maps).
std::string read_proc_file(const char* path) {
  std::string text;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[16384];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, n);
  close(fd);
  return text;
}

// The mapping of /proc/self/maps text `maps` that holds `address`.
bool mapping_containing(const std::string& maps, std::uintptr_t address, MemoryRange* out) {
  for (std::size_t at = 0; at < maps.size();) {
    char* end = nullptr;
    std::uintptr_t begin = std::strtoull(maps.c_str() + at, &end, 16);
    std::uintptr_t stop = std::strtoull(end + 1, nullptr, 16);
    if (address >= begin && address < stop) {
      *out = {begin, stop};
      return true;
    }
    std::size_t newline = maps.find('\n', at);
    if (newline == std::string::npos) break;
    at = newline + 1;
  }
  return false;
}

const detail::ThreadRecord* record_of(const std::vector<detail::ThreadRecord>& threads,
                                      std::uint64_t tid) {
  for (const auto& t : threads)
    if (!t.exited && t.tid == tid) return &t;
  return nullptr;
}

// The part of a stopped thread's stack that is in use: from its stack pointer
// (red zone included) to the top of its recorded stack, or of the mapping
// that holds its stack pointer when it never recorded an event.
//
// A thread running on a malloc'd stack (makecontext) when it recorded
// nothing: that stack is a heap block, scanned once the block is reached,
// as before and as in LSan; the heap mapping around it is no root.
template <typename OnHeapBlock>
bool stack_in_use(const StoppedThread& stopped, const detail::ThreadRecord* record,
                  const std::string& maps, OnHeapBlock&& on_heap_block, MemoryRange* out) {
  std::uintptr_t sp = stopped.sp;
  if (record != nullptr && record->stack_high > record->stack_low) {
    if (!stopped.answered || sp <= record->stack_low || sp > record->stack_high) {
      *out = {record->stack_low, record->stack_high};  // whole: where it is is unknown
    } else {
      *out = {std::max(record->stack_low, sp - kRedZone), record->stack_high};
    }
    return true;
  }
  MemoryRange mapping;
  if (!stopped.answered || on_heap_block(sp) || !mapping_containing(maps, sp, &mapping))
    return false;
  *out = {std::max(mapping.begin, sp - kRedZone), mapping.end};
  return true;
}

// What the scan learns before it stops the other threads: what may take a
// lock a stopped thread could hold (the registry's mutex). The loader's
// locks it never takes: what needs them was found at start-up.
struct BeforeStop {
  ExitCaller exit_caller;
  std::vector<detail::ThreadRecord> threads;
  std::size_t tls_size = 0;
  std::uintptr_t self_high = 0;  // the caller's stack top when it recorded nothing
};

BeforeStop collect_before_stop() {
  BeforeStop b;
  b.exit_caller = find_exit_caller();
  b.threads = detail::thread_registry();
  b.tls_size = g_static_tls_size;
  std::uintptr_t low = 0;
  if (!current_thread_stack(&low, &b.self_high)) b.self_high = 0;
  return b;
}

// The buffer libc allocated for a standard stream (_IO_file_doallocate, on
// its first use): libc's own, like ld.so's blocks. Valgrind's
// __libc_freeres gives it back before the leak check and LSan ignores it;
// a buffer the program gave setvbuf (_IO_USER_BUF) stays the program's.
bool is_libc_stream_buffer(std::uint64_t address) {
  constexpr int kUserBuffer = 0x0001;  // glibc's _IO_USER_BUF
  for (FILE* stream : {stdin, stdout, stderr}) {
    if (stream == nullptr || (stream->_flags & kUserBuffer) != 0) continue;
    if (reinterpret_cast<std::uint64_t>(stream->_IO_buf_base) == address) return true;
  }
  return false;
}

// A glibc thread's descriptor ends where its stack mapping ends.
std::uintptr_t descriptor_extent_of(const std::vector<detail::ThreadRecord>& threads) {
  for (const auto& t : threads) {
    if (!t.exited && t.thread_pointer != 0 && t.stack_high > t.thread_pointer &&
        t.stack_high - t.thread_pointer < 16384 && t.thread_pointer > t.stack_low)
      return t.stack_high - t.thread_pointer;
  }
  return kDefaultDescriptorExtent;
}

// The exiting thread's stack in use, from `stack_top` up. A thread that
// calls exit() from a handler on an alternate signal stack (a program's
// SIGSEGV handler after a stack overflow) is below its own stack: the
// range up to its stack's top would span the address space in between.
// Then its whole stack and the alternate stack from `stack_top` up.
void add_exiting_stack(const detail::ThreadRecord* self, std::uintptr_t fallback_high,
                       std::uintptr_t stack_top, std::vector<MemoryRange>* ranges) {
  std::uintptr_t low = self != nullptr ? self->stack_low : 0;
  std::uintptr_t high = self != nullptr ? self->stack_high : fallback_high;
  stack_t alt{};
  bool on_alt = syscall(SYS_sigaltstack, nullptr, &alt) == 0 && (alt.ss_flags & SS_ONSTACK);
  auto alt_low = reinterpret_cast<std::uintptr_t>(alt.ss_sp);
  if (on_alt && stack_top >= alt_low && stack_top < alt_low + alt.ss_size) {
    ranges->push_back({stack_top, alt_low + alt.ss_size});
    if (high > low && low != 0) ranges->push_back({low, high});
    return;
  }
  if (high > stack_top) ranges->push_back({stack_top, high});
}

// The registers the program's exit() caller saved, as a root, when that
// caller sits above the scanner on the same stack; it then moves `stack_top`
// up to its stack pointer. Anything else (an unwind that went astray) keeps
// the fallback `stack_top` and no registers.
std::vector<MemoryRange> exit_caller_registers(const ExitCaller& exit_caller,
                                               std::uintptr_t* stack_top) {
  std::vector<MemoryRange> registers;
  if (exit_caller.found && exit_caller.sp > *stack_top) {
    *stack_top = exit_caller.sp;
    auto regs = reinterpret_cast<std::uintptr_t>(exit_caller.registers);
    registers.push_back(
        {regs, regs + exit_caller.register_count * sizeof(exit_caller.registers[0])});
  }
  return registers;
}

// ld.so's words that hold the address of its ld.so.cache mapping, mapped
// or gone since (linker_cache_pointer.hpp).
std::vector<MemoryRange> linker_cache_words(const ModuleRoots& modules, MemoryReader& reader) {
  const MemoryRange linker{g_linker_text.begin, g_linker_text.begin + g_linker_text.size};
  std::vector<MemoryRange> linker_data;
  for (const MemoryRange& r : modules.writable)
    if (r.begin >= linker.begin && r.end <= linker.end) linker_data.push_back(r);
  struct stat cache {};
  if (linker_data.empty() || stat("/etc/ld.so.cache", &cache) != 0) return {};
  return linker_cache_pointers(linker_data, static_cast<std::uint64_t>(cache.st_size), reader);
}

// The modules' writable segments and the program's anonymous mappings.
std::vector<MemoryRange> module_and_mapping_roots(const ModuleRoots& modules, MemoryReader& reader,
                                                  ScanDebug& debug) {
  // Not roots: our modules, glibc malloc's own state (its stale
  // last_remainder points into whatever block now covers that old chunk)
  // and ld.so's address of its cache file (stale the same way).
  std::vector<MemoryRange> not_roots = modules.own;
  if (heap_is_glibc() && glibc_main_arena().end != 0) not_roots.push_back(glibc_main_arena());
  for (const MemoryRange& r : linker_cache_words(modules, reader)) not_roots.push_back(r);
  std::vector<MemoryRange> roots = subtract_ranges(modules.writable, not_roots);
  debug.label("module data", 0, roots);
  // The program's anonymous read-write mappings (pymalloc's arenas), over
  // glibc's malloc only (program_mappings.hpp).
  if (heap_is_glibc())
    for (const MemoryRange& r : program_mappings()) {
      roots.push_back(r);
      debug.label("program mapping", 0, std::span(&r, 1));
    }
  return roots;
}

// The live blocks' ranges, sorted, to ask whether an address is in one.
class LiveRanges {
 public:
  explicit LiveRanges(const std::vector<detail::LiveBlock>& live) {
    ranges_.reserve(live.size());
    for (const auto& b : live) ranges_.push_back({b.address, b.address + b.size});
    std::sort(ranges_.begin(), ranges_.end(),
              [](const MemoryRange& a, const MemoryRange& b) { return a.begin < b.begin; });
  }
  bool contains(std::uintptr_t address) const {
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), address,
                               [](std::uintptr_t a, const MemoryRange& r) { return a < r.begin; });
    return it != ranges_.begin() && address < std::prev(it)->end;
  }

 private:
  std::vector<MemoryRange> ranges_;
};

// The threads' roots: stacks, registers and static TLS of every thread,
// gathered in the order ScanDebug labels them; finish() takes our own TLS
// (event buffers) out of them.
class ThreadRoots {
 public:
  ThreadRoots(const ModuleRoots& modules, const BeforeStop& before, ScanDebug& debug)
      : modules_(modules),
        tls_size_(before.tls_size),
        descriptor_extent_(descriptor_extent_of(before.threads)),
        debug_(debug) {}

  // A stopped thread: its stack in use, its registers when it answered, and
  // its static TLS (the TLS inside a glibc thread's stack mapping is then
  // scanned twice; cheap).
  void add_stopped(const StoppedThread& stopped, const detail::ThreadRecord* record,
                   const std::string& maps, const LiveRanges& live) {
    MemoryRange stack;
    auto on_heap_block = [&](std::uintptr_t address) { return live.contains(address); };
    if (stack_in_use(stopped, record, maps, on_heap_block, &stack)) {
      ranges_.push_back(stack);
      debug_.label(stopped.answered ? "stopped thread's stack" : "unanswered thread's stack",
                   stopped.tid, std::span(&stack, 1));
    }
    if (stopped.answered) {
      ranges_.push_back({stopped.regs_begin, stopped.regs_end});
      debug_.label("stopped thread's registers", stopped.tid, std::span(&ranges_.back(), 1));
    }
    add_tls(stopped.answered ? stopped.thread_pointer : record ? record->thread_pointer : 0);
  }

  // The exiting thread, from its call to exit() (`stack_top`) up.
  void add_exiting(const detail::ThreadRecord* self, std::uint64_t self_tid,
                   std::uintptr_t self_high, std::uintptr_t stack_top,
                   std::uintptr_t self_pointer) {
    std::size_t before_exiting = ranges_.size();
    add_exiting_stack(self, self_high, stack_top, &ranges_);
    debug_.label("exiting thread's stack", self_tid, std::span(ranges_).subspan(before_exiting));
    add_tls(self_pointer);
  }

  // Our own TLS (event buffers) must not act as a root inside stack mappings.
  std::vector<MemoryRange> finish() const {
    std::vector<MemoryRange> own_tls_everywhere;
    for (std::uintptr_t tp : thread_pointers_)
      for (const auto& own : modules_.own_tls)
        own_tls_everywhere.push_back({tp + own.begin, tp + own.end});
    return subtract_ranges(ranges_, own_tls_everywhere);
  }

 private:
  void add_tls(std::uintptr_t tp) {
    if (tp == 0) return;
    thread_pointers_.push_back(tp);
    MemoryRange tls = glibc_static_tls_range(tp, tls_size_, descriptor_extent_);
    std::vector<MemoryRange> holes;
    for (const auto& own : modules_.own_tls) holes.push_back({tp + own.begin, tp + own.end});
    for (const auto& r : subtract_ranges(std::span(&tls, 1), holes)) {
      ranges_.push_back(r);
      debug_.label("static TLS", 0, std::span(&r, 1));
    }
  }

  const ModuleRoots& modules_;
  std::size_t tls_size_;
  std::uintptr_t descriptor_extent_;
  ScanDebug& debug_;
  std::vector<MemoryRange> ranges_;
  std::vector<std::uintptr_t> thread_pointers_;
};

// The classifier's view of the live blocks: the runtime's own ones (ld.so's,
// stdio's buffers) are reachable whatever points to them.
std::vector<HeapBlock> heap_blocks_of(const std::vector<detail::LiveBlock>& live) {
  std::vector<HeapBlock> blocks(live.size());
  for (std::size_t i = 0; i < live.size(); ++i) {
    HeapBlock& b = blocks[i];
    b.address = live[i].address;
    b.size = live[i].size;
    b.force_reachable =
        linker_block_contains(b.address) || (heap_is_glibc() && is_libc_stream_buffer(b.address));
    b.age = live[i].time_ns;
  }
  return blocks;
}

// Classifies the blocks from the roots; with MEMTRAIL_SCAN_DEBUG it reports
// why each possible leak is one.
std::vector<LeakClass> classify(const std::vector<HeapBlock>& blocks,
                                const std::vector<MemoryRange>& roots, const ModuleRoots& modules,
                                SelfMemoryReader& reader, const std::string& maps,
                                const ScanDebug& debug) {
  // glibc lends a chunk's last 8 usable bytes to the next chunk's header; a
  // pointer to that header (glibc's bins and `top` hold them) is not ours.
  const FileMappingVtables vtables(maps);
  // The modules' link-time constants that equal a block's address by chance
  // (a non-PIE program's heap lies among its small integers) are no roots.
  FileImageConstants image_constants(modules.images, reader);
  // Root words that still hold their start-up values point at no block
  // allocated since (libc's cache sizes, constructors' tables: start_values.hpp).
  const StartValues* start_values = start_snapshot();
  // CPython's bytecode, bytes, str, int and float payloads and pymalloc's
  // free blocks are data: an integer there that falls inside a block is no
  // pointer (python_data_words.hpp). Arenas are roots over glibc only.
  const std::vector<MemoryRange> arenas =
      heap_is_glibc() ? program_mappings() : std::vector<MemoryRange>{};
  PythonDataWords python_data(g_python_types, arenas, reader);
  if (debug.on()) python_data.keep_notes();
  std::vector<PossibleCause> causes;
  std::vector<LeakClass> classes =
      classify_blocks(blocks, roots, reader,
                      ClassifyOptions{.glibc_chunks = heap_is_glibc(),
                                      .vtables = &vtables,
                                      .image_constants = &image_constants,
                                      .start_values = start_values,
                                      .data_words = g_python_types.found() ? &python_data : nullptr,
                                      .possible_causes = debug.on() ? &causes : nullptr});
  debug.report(blocks, classes, causes, maps, python_data);
  debug.report_data_words(blocks, python_data.notes(), maps);
  return classes;
}

// One reachability event per live block. The runtime's own blocks were
// roots' extensions for the scan (force reachable) but are not the
// program's blocks (LeakClass::runtime).
void record_classes(const std::vector<HeapBlock>& blocks, const std::vector<std::uint32_t>& stacks,
                    std::vector<LeakClass>& classes) {
  for (std::size_t i = 0; i < blocks.size(); ++i)
    if (blocks[i].force_reachable) classes[i] = LeakClass::runtime;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    Event e;
    e.kind = EventKind::reachability;
    e.pool = g_heap_pool;
    e.address = blocks[i].address;
    e.size = blocks[i].size;
    e.stack = stacks[i];
    e.detail = static_cast<std::uint8_t>(classes[i]);
    detail::record_unwalked_past_guard(e);
  }
}

// Everything below runs with the registers already spilled by run_leak_scan;
// `stack_top` is the lowest address of run_leak_scan's frame we must scan,
// used only when the program's call to exit() is not found.
[[gnu::noinline]] void scan_and_record(std::uintptr_t stack_top) {
  BeforeStop before = collect_before_stop();
  std::vector<MemoryRange> exit_registers = exit_caller_registers(before.exit_caller, &stack_top);

  // From here to release(), the program's other threads do not run: their
  // registers, stacks and blocks are read as of one instant.
  WorldStop world(kAnswerTimeoutMs);
  // Their last events, so the live set is theirs too; and the writer's
  // scratch goes back before the scan takes its own.
  detail::flush_all_threads_lean();
  std::vector<detail::LiveBlock> live = detail::live_blocks();
  // Blocks an exited thread freed are recorded freed now, and not scanned.
  std::erase_if(live,
                [](const detail::LiveBlock& b) { return settle_late_free_at_exit(b.address); });
  if (live.empty()) return;
  const std::string maps = read_proc_file("/proc/self/maps");
  SelfMemoryReader reader;
  const ModuleRoots modules = module_roots(reader);
  const auto self_pointer = reinterpret_cast<std::uintptr_t>(__builtin_thread_pointer());
  ScanDebug debug;
  std::vector<MemoryRange> roots = module_and_mapping_roots(modules, reader, debug);
  const std::uint64_t self_tid = static_cast<std::uint64_t>(syscall(SYS_gettid));
  roots.insert(roots.end(), exit_registers.begin(), exit_registers.end());
  debug.label("exit() caller's registers", self_tid, exit_registers);

  // Every other thread alive now, whether or not it ever recorded an event,
  // then the exiting one.
  ThreadRoots threads(modules, before, debug);
  if (!world.threads().empty()) {
    // 16 bytes a live block, gone before classify's scratch is taken: the
    // scan is where the tracer holds the most (cc1plus, issue 28).
    const LiveRanges live_ranges(live);
    for (const StoppedThread& stopped : world.threads())
      threads.add_stopped(stopped, record_of(before.threads, stopped.tid), maps, live_ranges);
  }
  threads.add_exiting(record_of(before.threads, self_tid), self_tid, before.self_high, stack_top,
                      self_pointer);
  for (const auto& r : threads.finish()) roots.push_back(r);

  std::vector<HeapBlock> blocks = heap_blocks_of(live);
  // Of the live blocks' copy (32 B each) only the allocation stacks are
  // recorded beyond the blocks: the copy goes before classify's scratch.
  std::vector<std::uint32_t> stacks(live.size());
  for (std::size_t i = 0; i < live.size(); ++i) stacks[i] = live[i].stack;
  std::vector<detail::LiveBlock>().swap(live);
  std::vector<LeakClass> classes = classify(blocks, roots, modules, reader, maps, debug);
  detail::sample_own_mappings_now();  // MEMTRAIL_MEMORY_DEBUG: the scan's scratch at its largest
  record_classes(blocks, stacks, classes);
  // The stopped threads record nothing more: a block one of them allocated
  // after the scan would be live at the trace's end with no class, which the
  // analyzer counts as a direct leak. The session is ending anyway.
  detail::g_tracing.store(false, std::memory_order_release);
  world.release();
}

}  // namespace

void prepare_leak_scan() {
  remember_own_modules();
  prepare_exit_frame_lookup();
  g_static_tls_size = static_tls_size();
  if (heap_is_glibc()) find_glibc_main_arena();
  {
    detail::ScopedInternal internal;  // dlsym's and dlerror's blocks are ours
    g_python_types = find_python_types();
  }
  init_scan_debug();
  g_scan_prepared = true;
}

void snapshot_for_leak_scan() {
  if (g_scan_prepared && detail::recorder_started()) take_start_snapshot();
}

void run_leak_scan() {
  // Nothing we allocate here may become an event or a live block.
  detail::ScopedInternal internal;
  // Spill callee-saved registers into this frame, which the scan covers:
  // a pointer the exiting thread holds only in a register still counts.
  jmp_buf registers;
  setjmp(registers);
  __builtin_unwind_init();
  std::uintptr_t stack_pointer;
#if defined(__x86_64__)
  asm volatile("mov %%rsp, %0" : "=r"(stack_pointer));
#elif defined(__aarch64__)
  asm volatile("mov %0, sp" : "=r"(stack_pointer));
#else
  stack_pointer = reinterpret_cast<std::uintptr_t>(&registers);
#endif
  try {
    scan_and_record(stack_pointer);
  } catch (const std::exception& e) {
    // Out of memory under an address-space limit (ulimit -v): the process
    // must still exit as it would untraced (the stopped threads were let go
    // by WorldStop's destructor); its trace then has no leak classes.
    detail::diagnostic(
        "memtrail: the exit-time leak scan could not run (%s); blocks live at exit are not "
        "classified\n",
        e.what());
  }
  asm volatile("" : : "r"(&registers) : "memory");
}

}  // namespace memtrail::preload
