// Judging a process image from outside, by /proc: does it run with the
// tracer? Shared by `memtrail run`'s two watches for untraced images
// (untraced_watch.hpp: process events, or walks of the descendants).
// Only /proc is read: nothing of the program's is touched.
#pragma once

#include <sys/types.h>

#include <string>
#include <tuple>

namespace memtrail::cli {

// What /proc/PID/stat says of a process's current image.
struct ImageStat {
  char state = 0;
  unsigned long long start_time = 0, vsize = 0, start_stack = 0, env_start = 0, env_end = 0;
};

// One process image: its process (pid, start time), and where its stack
// and environment lie, which each exec maps anew.
using ImageKey = std::tuple<pid_t, unsigned long long, unsigned long long, unsigned long long,
                            unsigned long long>;

ImageKey key_of(pid_t pid, const ImageStat& stat);

// False when the process is gone or its stat unreadable.
bool read_stat(pid_t pid, ImageStat* out);

// Whether the image has memory and an environment to read yet (an exiting
// process has none; an exec still in the kernel has no environment yet).
bool has_image(const ImageStat& stat);

enum class Verdict { traced, untraced, unreadable, not_yet };

// Whether the tracer's library is mapped in the process.
bool maps_hold_tracer(pid_t pid);

// Reads the image's environment (its mappings too when that lacks the
// tracing variables), then checks that the image is still the one `before`
// describes and still has its memory. `not_yet`: the image changed or ended
// meanwhile; `unreadable`: not ours to read (a set-user-ID image).
Verdict judge(pid_t pid, const ImageStat& before);

// Whether the image's environment sends its trace somewhere other than the
// run directory `directory` (MEMTRAIL_OUTPUT set to another): a run of its
// own inside the program, say. False when unreadable or the same.
bool traces_elsewhere(pid_t pid, const std::string& directory);

// The image is `memtrail` itself (run's own fork before it execs).
bool is_memtrail_itself(pid_t pid);

// /proc/PID/exe, else its command name, else "an unknown program".
std::string executable_of(pid_t pid);

// The run's list line for an image of `executable` that ran without the
// tracer ("PID\tmissing\tran without the tracer: EXECUTABLE (why)").
std::string untraced_line(pid_t pid, const std::string& executable);

}  // namespace memtrail::cli
