// Reading another process's /proc files, for `run` and `attach`: one way
// to name them, read them whole and tell a live process from a zombie.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace memtrail::cli {

// "/proc/PID/LEAF".
std::string proc_path(pid_t pid, const char* leaf);

// A /proc file's whole text; nothing when it cannot be opened or read.
std::optional<std::string> read_proc_file(const std::string& path);

// The state letter of /proc/PID/stat (R, S, Z, ...), 0 when unreadable.
char process_state(pid_t pid);

// Alive and not a zombie waiting for its parent.
bool process_alive(pid_t pid);

// The process's children, those of every one of its threads.
std::vector<pid_t> children_of(pid_t pid);

}  // namespace memtrail::cli
