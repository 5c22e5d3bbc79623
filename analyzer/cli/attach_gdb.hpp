// Runs gdb in batch mode on a running process to call functions in it, the
// way heaptrack injects its runtime: `gdb -p PID -batch -ex ...`. Each call's
// value is printed with a marker line ("memtrail-value NAME VALUE") so it can
// be read back whatever else gdb prints.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace memtrail::cli {

struct GdbCall {
  std::string name;  // marker for the value
  // What gdb evaluates in the process, cast to long; a function without debug
  // info needs its return type cast first: "(long)(int)getpid()".
  std::string expression;
};

struct GdbResult {
  bool ran = false;                    // gdb started and exited by itself
  std::string error;                   // why not, or gdb's last error line
  std::map<std::string, long> values;  // by GdbCall::name, for calls that ran
};

// Path of gdb in PATH, or empty.
std::string find_gdb();

// Attaches gdb to `pid`, evaluates `calls` in order (stopping at the first
// that fails), detaches. The process is stopped only while gdb is attached.
// gdb is killed after `timeout_s` seconds.
GdbResult run_gdb_calls(const std::string& gdb, pid_t pid, const std::vector<GdbCall>& calls,
                        int timeout_s);

// `text` as a C string literal for gdb; false if it holds characters that
// would need escaping (quotes, backslashes, newlines).
bool gdb_string_literal(const std::string& text, std::string* out);

}  // namespace memtrail::cli
