// The traced process's side of the event tally (memtrail/event_tally.hpp):
// a file beside the trace, mapped shared, where each program thread counts
// the events it makes and the writer how many of them are in whole chunks.
// It survives the process, so `memtrail run` can count what an abrupt end
// (raw exit_group, SIGKILL) left unwritten.
#pragma once

#include <cstdint>
#include <string>

#include "block_pool.hpp"

namespace memtrail::runtime {

class EventTally {
 public:
  // Creates `path` (<trace>.tally in the run directory `directory`), with
  // its blocks allocated (a full file system fails here, not with SIGBUS at
  // a later store), and maps it. False: no tally (nothing else changes).
  bool create(const std::string& directory, const std::string& path);
  bool active() const { return base_ != nullptr; }
  // A registering thread's counter: a free slot, or nullptr when every slot
  // is held (said in the file: the count is then a lower bound).
  std::uint64_t* take_slot() noexcept;
  // An exiting thread's slot, for the next thread to count on.
  void give_back(std::uint64_t* slot) noexcept;
  // The writer: `events` program events are in whole chunks of the trace.
  void set_written(std::uint64_t events) noexcept;
  // The trace is finished and whole: the tally is no longer needed.
  void remove() noexcept;
  // A fork child: the parent's tally is not its own.
  void unmap() noexcept;

 private:
  std::uint64_t* slot(std::uint32_t index) noexcept;
  unsigned char* base_ = nullptr;
  std::string directory_, path_;
  SpinLock lock_;
  std::uint32_t next_unused_ = 0;  // slots below it were handed out once
  std::uint32_t free_head_ = 0;    // 1 + a free slot's index; its second word links the next
};

}  // namespace memtrail::runtime
