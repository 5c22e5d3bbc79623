// Exit-time root collection for the leak classifier.
//
// Roots, as in LeakSanitizer:
//   * writable PT_LOAD segments of every loaded module (.data, .bss, GOT),
//     except the recorder's and this library's own (their buffers hold copies
//     of every recent block address);
//   * the exiting thread's stack from the stack pointer its program frame
//     had when it called exit() / _exit() (main's return calls exit() from
//     __libc_start_call_main, so main's dead frame is not scanned), plus that
//     frame's callee-saved registers (exit_frame.hpp). When no such frame is
//     found (the scan reached another way, or the unwind failed), from the
//     scanner's own stack pointer up after spilling the registers into a
//     jmp_buf there: dead frames below the exit machinery then still count;
//   * every other live thread's stack from the stack pointer it had when
//     signalled (red zone included) up, plus its registers at that moment
//     (thread_stack_tops.hpp); its whole stack when it did not answer;
//   * the main thread's static TLS block and descriptor around its thread
//     pointer (_dl_get_tls_static_info gives the size);
//   * blocks the dynamic linker allocated (see linker_blocks.hpp).
// Other threads keep running after answering (they are not held stopped as
// LeakSanitizer holds them), so a pointer a thread moves during the scan can
// be missed.
#include "leak_scan.hpp"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "exit_frame.hpp"
#include "late_frees.hpp"
#include "linker_blocks.hpp"
#include "memtrail/detail/live_blocks.hpp"
#include "memtrail/detail/recording.hpp"
#include "memtrail/detail/reentrancy.hpp"
#include "memtrail/detail/thread_registry.hpp"
#include "preload_state.hpp"
#include "reachability.hpp"
#include "thread_stack_tops.hpp"

namespace memtrail::preload {
namespace {

// glibc's struct pthread on x86-64 (2.34 .. 2.36: 2368). The main thread's
// descriptor lies outside its stack, so this is its extent; other threads'
// descriptors are measured from their stacks.
constexpr std::uintptr_t kDefaultDescriptorExtent = kGlibcTcbSize;
// x86-64 code may keep data this far below its stack pointer.
constexpr std::uintptr_t kRedZone = 128;
// How long the scan waits for threads to answer (blocked signal: whole stack).
constexpr int kAnswerTimeoutMs = 200;

struct ModuleScan {
  std::vector<MemoryRange> writable;  // roots
  std::vector<MemoryRange> own;       // our modules' writable segments (excluded)
  std::vector<MemoryRange> own_tls;   // our modules' static TLS, as offsets from tp
  std::uintptr_t own_code[2] = {};    // one code address in each of our modules
  std::uintptr_t thread_pointer = 0;
};

bool module_contains(const dl_phdr_info* info, std::uintptr_t address) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && address >= begin && address < begin + ph.p_memsz) return true;
  }
  return false;
}

int collect_module(dl_phdr_info* info, std::size_t, void* data) {
  auto* scan = static_cast<ModuleScan*>(data);
  bool ours = module_contains(info, scan->own_code[0]) || module_contains(info, scan->own_code[1]);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_W) != 0) {
      (ours ? scan->own : scan->writable).push_back({begin, begin + ph.p_memsz});
    } else if (ph.p_type == PT_TLS && ours && info->dlpi_tls_data != nullptr) {
      // Static TLS sits at the same offset from every thread's pointer.
      auto data_at = reinterpret_cast<std::uintptr_t>(info->dlpi_tls_data);
      scan->own_tls.push_back(
          {data_at - scan->thread_pointer, data_at - scan->thread_pointer + ph.p_memsz});
    }
  }
  return 0;
}

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

// Everything below runs with the registers already spilled by run_leak_scan;
// `stack_top` is the lowest address of run_leak_scan's frame we must scan,
// used only when the program's call to exit() is not found.
[[gnu::noinline]] void scan_and_record(std::uintptr_t stack_top) {
  std::vector<detail::LiveBlock> live = detail::live_blocks();
  // Blocks an exited thread freed are recorded freed now, and not scanned.
  std::erase_if(live,
                [](const detail::LiveBlock& b) { return settle_late_free_at_exit(b.address); });
  if (live.empty()) return;
  const ExitCaller exit_caller = find_exit_caller();
  std::vector<MemoryRange> exit_registers;
  // The caller of exit() sits above the scanner on the same stack; anything
  // else (an unwind that went astray) keeps the fallback.
  if (exit_caller.found && exit_caller.sp > stack_top) {
    stack_top = exit_caller.sp;
    auto regs = reinterpret_cast<std::uintptr_t>(exit_caller.registers);
    exit_registers.push_back(
        {regs, regs + exit_caller.register_count * sizeof(exit_caller.registers[0])});
  }

  ModuleScan modules;
  modules.thread_pointer = reinterpret_cast<std::uintptr_t>(__builtin_thread_pointer());
  modules.own_code[0] = reinterpret_cast<std::uintptr_t>(&run_leak_scan);
  modules.own_code[1] = reinterpret_cast<std::uintptr_t>(&memtrail::flush);
  dl_iterate_phdr(collect_module, &modules);

  std::vector<MemoryRange> roots = subtract_ranges(modules.writable, modules.own);
  roots.insert(roots.end(), exit_registers.begin(), exit_registers.end());
  std::vector<detail::ThreadRecord> threads = detail::thread_registry();
  const std::uint64_t self_tid = static_cast<std::uint64_t>(syscall(SYS_gettid));
  const std::size_t tls_size = static_tls_size();

  std::uintptr_t descriptor_extent = kDefaultDescriptorExtent;
  for (const auto& t : threads) {
    // A glibc thread's descriptor ends where its stack mapping ends.
    if (!t.exited && t.thread_pointer != 0 && t.stack_high > t.thread_pointer &&
        t.stack_high - t.thread_pointer < 16384 && t.thread_pointer > t.stack_low) {
      descriptor_extent = t.stack_high - t.thread_pointer;
      break;
    }
  }

  std::vector<MemoryRange> thread_ranges;
  bool saw_self = false;
  auto add_tls = [&](std::uintptr_t tp) {
    if (tp == 0) return;
    MemoryRange tls = glibc_static_tls_range(tp, tls_size, descriptor_extent);
    std::vector<MemoryRange> holes;
    for (const auto& own : modules.own_tls) holes.push_back({tp + own.begin, tp + own.end});
    for (const auto& r : subtract_ranges(std::span(&tls, 1), holes)) thread_ranges.push_back(r);
  };
  std::vector<std::uint64_t> others;
  for (const auto& t : threads)
    if (!t.exited && t.tid != self_tid && t.stack_high > t.stack_low) others.push_back(t.tid);
  std::vector<ThreadStackTop> tops = collect_thread_stack_tops(others, kAnswerTimeoutMs);
  std::size_t next_top = 0;
  for (const auto& t : threads) {
    if (t.exited) continue;
    if (t.tid == self_tid) {
      saw_self = true;
      thread_ranges.push_back({stack_top, t.stack_high});
    } else if (t.stack_high > t.stack_low) {
      const ThreadStackTop& top = tops[next_top++];
      if (top.answered && top.sp > t.stack_low && top.sp <= t.stack_high) {
        thread_ranges.push_back({std::max(t.stack_low, top.sp - kRedZone), t.stack_high});
        thread_ranges.push_back({top.regs_begin, top.regs_end});
      } else {
        thread_ranges.push_back({t.stack_low, t.stack_high});
      }
    }
    // The TLS inside a glibc thread's stack mapping is scanned twice; cheap.
    add_tls(t.thread_pointer);
  }
  if (!saw_self) {
    std::uintptr_t low = 0, high = 0;
    if (current_thread_stack(&low, &high)) thread_ranges.push_back({stack_top, high});
    add_tls(modules.thread_pointer);
  }
  // Our own TLS (event buffers) must not act as a root inside stack mappings.
  std::vector<MemoryRange> own_tls_everywhere;
  for (const auto& t : threads)
    for (const auto& own : modules.own_tls)
      own_tls_everywhere.push_back({t.thread_pointer + own.begin, t.thread_pointer + own.end});
  for (const auto& r : subtract_ranges(thread_ranges, own_tls_everywhere)) roots.push_back(r);

  std::vector<HeapBlock> blocks(live.size());
  for (std::size_t i = 0; i < live.size(); ++i) {
    HeapBlock& b = blocks[i];
    b.address = live[i].address;
    b.size = live[i].size;
    b.force_reachable = linker_block_contains(b.address);
    b.age = live[i].time_ns;
  }

  SelfMemoryReader reader;
  // glibc lends a chunk's last 8 usable bytes to the next chunk's header; a
  // pointer to that header (glibc's bins and `top` hold them) is not ours.
  std::vector<LeakClass> classes =
      classify_blocks(blocks, roots, reader, ClassifyOptions{.glibc_chunks = heap_is_glibc()});
  // The runtime's own blocks are roots' extensions for the scan (force
  // reachable) but not the program's blocks (LeakClass::runtime).
  for (std::size_t i = 0; i < live.size(); ++i)
    if (blocks[i].force_reachable) classes[i] = LeakClass::runtime;
  for (std::size_t i = 0; i < live.size(); ++i) {
    Event e;
    e.kind = EventKind::reachability;
    e.pool = g_heap_pool;
    e.address = live[i].address;
    e.size = live[i].size;
    e.stack = live[i].stack;
    e.detail = static_cast<std::uint8_t>(classes[i]);
    detail::record_unwalked_past_guard(e);
  }
}

}  // namespace

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
  scan_and_record(stack_pointer);
  asm volatile("" : : "r"(&registers) : "memory");
}

}  // namespace memtrail::preload
