// glibc's LC_CTYPE locale data: the digit widths at its end are bytes, not
// a pointer.
//
// setlocale() and newlocale() load a category into one malloc'd
// `struct __locale_data` {name, filedata, filesize, alloc, private,
// usage_count, use_translit, nstrings, values[nstrings]}: 56 bytes, then 8
// a value. For LC_CTYPE glibc appends its `struct lc_ctype_data` {fcts,
// outdigit_translation_needed, outdigit_bytes[10],
// outdigit_bytes_all_equal} (24 bytes) to the same block and points
// `private` at it. In a UTF-8 locale every digit is one byte wide, so the
// block's last word reads 0x01010101 (outdigit_bytes[7..9] and
// all_equal): an address in a non-PIE program's brk heap when the kernel
// puts it low, and it made a leak of python3.11 possibly lost (issue 27:
// 1 run in 10,000 of ctypes_lost, 3 of 300 of the leak-everything script,
// the heap starting below 16 MiB). Valgrind's heap never lies there. The
// block is told by its shape: `private` pointing exactly past values[],
// 24 bytes before the block's end, and `nstrings` counting those values.
// Another glibc (without the appended data) never has that shape, and its
// words are followed as before; `fcts` always is.
#pragma once

#include <cstdint>

#include "reachability.hpp"

namespace memtrail::preload {

// True when the word at `offset` of `block` lies in the digit widths of an
// LC_CTYPE locale data block (its last 16 bytes, the shape above). Reads
// the block's 56-byte header; call it only for a word that points into a
// block.
bool is_locale_digit_widths(const HeapBlock& block, std::uint64_t offset, MemoryReader& reader);

}  // namespace memtrail::preload
