// libunwind's per-thread trace cache takes a pthread key (its destructor
// frees the cache at thread exit): one of the process's PTHREAD_KEYS_MAX,
// which a program that creates keys until EAGAIN then lacks (issue 26,
// item 7b). libunwind's pthread_key_create / pthread_setspecific slots are
// pointed at an emulation that runs the destructor from a thread_local
// destructor (__cxa_thread_atexit_impl) instead: no key is taken. libunwind
// never reads the key back (its cache pointer is a __thread variable).
#pragma once

namespace memtrail::preload {

// Once, at start-up (before the first stack is unwound).
void emulate_libunwinds_key();

}  // namespace memtrail::preload
