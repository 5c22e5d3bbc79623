// ld.so's address of its /etc/ld.so.cache mapping: no root word of the
// exit-time leak scan.
//
// To look a library name up, ld.so maps /etc/ld.so.cache (dl-cache.c:
// `cache` and `cache_new` point at the mapping, `cachesize` holds the file's
// size) and unmaps it when the lookup is over (_dl_unload_cache, at the end
// of start-up and of every dlopen). That resets `cache` to NULL and leaves
// `cache_new` as it was: the address of a mapping gone since. A block glibc
// maps later (128 KiB and more) may land where the cache was, and the word
// then lies inside it: the leak-everything script (issue 27) read a 128 KiB
// leak possibly lost that way; a program that dlopens a missing library
// and then leaks 256 KiB reads so in every run
// (tests/leaks/programs/ldso_cache.c). Valgrind, whose client mappings are
// placed apart from its heap, says definitely lost. Whatever the word holds
// -- the cache while it is mapped, or what it was -- it never points at a
// heap block.
//
// The variables are ld.so's own (local symbols): they are found by meaning,
// the one word of ld.so's writable data equal to the cache file's size,
// and beside it (within two words, either side) the page-aligned words.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "reachability.hpp"

namespace memtrail::preload {

// The words of `linker_data` (ld.so's writable segments) that hold ld.so's
// address of the cache mapping, given the cache file's size in bytes. Empty
// when no word or more than one holds that size (the cache never loaded, a
// cache file replaced since, another ld.so).
std::vector<MemoryRange> linker_cache_pointers(std::span<const MemoryRange> linker_data,
                                               std::uint64_t cache_size, MemoryReader& reader);

}  // namespace memtrail::preload
