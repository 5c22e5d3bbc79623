// The start-up snapshot of the writable segments (start_snapshot.hpp).
#include "start_snapshot.hpp"

#include <elf.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "memtrail/detail/diagnostics.hpp"
#include "memtrail/detail/live_blocks.hpp"
#include "memtrail/detail/recording.hpp"
#include "memtrail/detail/reentrancy.hpp"
#include "module_roots.hpp"
#include "scan_debug.hpp"
#include "start_values.hpp"

// ld.so's: the main thread's stack pointer at the program's entry, where
// the kernel's argument block begins.
extern "C" void* __libc_stack_end;

namespace memtrail::preload {
namespace {

// No block lies below mmap_min_addr (64 KiB) or above the user address space.
constexpr std::uint64_t kLowestBlock = 0x10000;
constexpr std::uint64_t kUserSpaceEnd = std::uint64_t{1} << 47;

// A sanity bound on the kernel's argument block: exec accepts a quarter of
// the stack limit (2 MiB by default); beyond 1 GiB the bounds are wrong.
constexpr std::uintptr_t kMaxArgumentBlock = std::uintptr_t{1} << 30;

// Never freed: the scan reads it from the exit hook, after static destructors.
const StartSnapshot* g_snapshot = nullptr;
pid_t g_snapshot_pid = 0;

int add_module_image(dl_phdr_info* info, std::size_t, void* data) {
  auto* images = static_cast<std::vector<MemoryRange>*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD) images->push_back({begin, begin + ph.p_memsz});
  }
  return 0;
}

// Values no block allocated later can have: the modules' images, the blocks
// live now (a start-up pointer to a block realloc'd in place later keeps
// pointing at it), addresses outside the heap's reach.
std::vector<MemoryRange> never_later_blocks(const std::vector<detail::LiveBlock>& live) {
  std::vector<MemoryRange> ranges = {{0, kLowestBlock}, {kUserSpaceEnd, ~std::uintptr_t{0}}};
  dl_iterate_phdr(add_module_image, &ranges);
  for (const detail::LiveBlock& b : live)
    ranges.push_back({b.address, b.address + std::max<std::uint64_t>(b.size, 1)});
  return ranges;
}

// The resident pages of `ranges`. A page of .bss never touched holds zeros,
// nothing to remember, and reading it costs as much as the scan's own read
// (a 256 MiB .bss: +130 ms at start-up). A page swapped out is skipped too:
// its words are then followed at the scan, as without a snapshot.
std::vector<MemoryRange> resident_parts(const std::vector<MemoryRange>& ranges) {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  std::vector<MemoryRange> resident;
  std::vector<unsigned char> in_core;
  for (const MemoryRange& r : ranges) {
    const std::uintptr_t first = r.begin & ~(page - 1);
    const std::size_t pages = (r.end - first + page - 1) / page;
    in_core.assign(pages, 0);
    if (mincore(reinterpret_cast<void*>(first), pages * page, in_core.data()) != 0) {
      resident.push_back(r);  // the reader copes with holes
      continue;
    }
    for (std::size_t i = 0; i < pages; ++i) {
      if ((in_core[i] & 1) == 0) continue;
      const std::uintptr_t low = std::max(r.begin, first + i * page);
      const std::uintptr_t high = std::min(r.end, first + (i + 1) * page);
      if (!resident.empty() && resident.back().end == low)
        resident.back().end = high;
      else
        resident.push_back({low, high});
    }
  }
  return resident;
}

// The block the kernel wrote at the top of the main thread's stack before
// the program ran: argc, argv[], envp[], the aux vector, then the strings up
// to the program's file name (AT_EXECFN), the highest of them. The
// program's frames all lie below it (ld.so's __libc_stack_end: argc's
// address), yet it is a root of the exiting thread's stack, and its
// integers are no pointers: the aux vector's AT_HWCAP (CPUID's feature
// bits, 0x1f8bfbff here) lies among a non-PIE program's brk heap addresses
// and covered a leak of the leak-everything script (issue 27). Empty when
// the bounds make no sense (no AT_EXECFN above argc).
MemoryRange initial_argument_block() {
  const auto low = reinterpret_cast<std::uintptr_t>(__libc_stack_end);
  const auto* name = reinterpret_cast<const char*>(getauxval(AT_EXECFN));
  const auto high = reinterpret_cast<std::uintptr_t>(name);
  if (low == 0 || high <= low || high - low > kMaxArgumentBlock) return {};
  return {low, high + std::strlen(name) + 1};
}

}  // namespace

void take_start_snapshot() {
  detail::ScopedInternal internal;
  // A page the reader cannot read fails a system call: the program's errno stays.
  const int saved_errno = errno;
  // The live set's ages: the constructors' blocks and ours are drained first.
  // A block that a thread a constructor started allocates between the drain
  // and the read counts as younger: a word pointing inside it then would not
  // be followed (a window of microseconds, at start-up only).
  detail::flush_all_threads();
  const std::vector<detail::LiveBlock> live = detail::live_blocks();
  std::uint64_t last_age = 0;
  for (const detail::LiveBlock& b : live) last_age = std::max(last_age, b.time_ns);
  SelfMemoryReader reader;
  const ModuleRoots modules = module_roots(reader);
  // Our own segments are no roots at the scan (module_and_mapping_roots).
  std::vector<MemoryRange> segments =
      resident_parts(subtract_ranges(modules.writable, modules.own));
  if (const MemoryRange arguments = initial_argument_block(); arguments.end != 0)
    segments.push_back(arguments);
  std::vector<StartWord> words = candidate_start_words(segments, never_later_blocks(live), reader);
  g_snapshot = new StartSnapshot(std::move(words), last_age);
  g_snapshot_pid = getpid();
  errno = saved_errno;
  if (ScanDebug().on())
    // Not a "scan debug" line: those name the possibly-lost blocks only.
    detail::diagnostic(
        "memtrail: start-up values of the modules' data and the argument block: %zu words "
        "(%zu bytes)\n",
        g_snapshot->size(), g_snapshot->size() * sizeof(StartWord));
}

const StartValues* start_snapshot() {
  return g_snapshot != nullptr && g_snapshot_pid == getpid() ? g_snapshot : nullptr;
}

}  // namespace memtrail::preload
