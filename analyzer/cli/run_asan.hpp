// `memtrail run` refuses AddressSanitizer binaries up front, in one line.
// ASan's runtime must be the first library in the process (it replaces
// malloc and checks that nothing was interposed before it) and aborts with
// "ASan runtime does not come first in initial library list" when an
// LD_PRELOAD library comes first -- as memtrail's must to trace the heap.
#pragma once

#include <string>

namespace memtrail::cli {

// The line to print (without "memtrail run: ") when `program` (a path, or a
// name searched in PATH) is built with -fsanitize=address (its dynamic
// symbols name __asan_init); empty otherwise, or when it cannot be read.
std::string asan_refusal(const std::string& program);

}  // namespace memtrail::cli
