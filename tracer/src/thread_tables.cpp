// A thread's tables (runtime.hpp, ThreadTables): one mapping per thread, by
// system call like the event blocks (block_pool.hpp: not through the
// preload's interposers, not from the program's heap). Taken at the
// thread's first event; the writer gives it back when it retires the thread
// (drain_pass.cpp), after the thread's last event, so neither side can
// touch it afterwards.
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime.hpp"

namespace memtrail::runtime {

ThreadTables* map_thread_tables() {
  return static_cast<ThreadTables*>(
      map_anonymous(sizeof(ThreadTables), detail::OwnPurpose::thread_state));
}

void unmap_thread_tables(ThreadTables* tables) {
  if (!tables) return;
  detail::note_own_unmapped(tables, sizeof(ThreadTables));
  ::syscall(SYS_munmap, tables, sizeof(ThreadTables));
}

}  // namespace memtrail::runtime
