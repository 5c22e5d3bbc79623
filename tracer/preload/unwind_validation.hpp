// libunwind's memory validation without a descriptor (issue 26, items 4
// and 7). libunwind 1.6 (x86_64) asks "is this page readable?" by writing
// one byte from it into a pipe it opens at its first use: two descriptors
// in the program's table for the image's life, which the program sees in
// /proc/self/fd and its count, and which libunwind closes and reopens when
// a read from them fails (a program's close-all reused the numbers: it
// then closed the program's files). libunwind's own GOT slots for pipe2,
// read, write and syscall are pointed at functions that hand it two
// numbers that are never descriptors and answer its read and write on
// them (unwind_validation.cpp); nobody else's calls change.
#pragma once

namespace memtrail::preload {

// Once, at start-up, beside emulate_libunwinds_key (before the first stack
// is unwound: libunwind opens its pipe then). Slots of the tracer's
// libunwind only: a program's own copy of libunwind keeps its real pipe.
void answer_libunwinds_validation();

}  // namespace memtrail::preload
