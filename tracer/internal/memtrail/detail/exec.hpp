// Tracing across exec: one trace per process image. Not installed.
#pragma once

namespace memtrail::detail {

// An exec keeps the pid, so the next image's "%p" names the same file. The
// exec interposers call stop_for_exec() first: it finishes the trace (no exit
// hook: exec is not an exit) and returns true if there was one; the new image
// then finds MEMTRAIL_EXEC_PID=<its pid> in its environment and takes a fresh
// name (<name>.1.mtr, ...) instead of replacing this one. If the exec fails,
// resume_after_failed_exec() starts a new trace the same way.
bool stop_for_exec();
void resume_after_failed_exec();

// The exec marker is MEMTRAIL_EXEC_PID=<pid>.<seq>: in a run directory the
// next image names its file <pid>.<seq>.<program>.mtr with this <seq>.
int next_image_sequence();

// In a run directory, appends "PID\texec\tSEQ PATH" to the run's list of
// problems before the exec: an image that then cannot create its trace
// (setuid, chroot, static, set-user-ID) cannot say so itself, so
// `memtrail run` reports the announced image whose trace never appeared.
// Written through the list's descriptor this image still holds.
void announce_exec(const char* path);

// The same for an image of another pid that will never exec through our
// interposers with its own trace's help: the child of posix_spawn (glibc
// execs inside it, behind the PLT), announced by the parent once the spawn
// succeeded, and the image a vfork child execs, announced by the child.
// `in_vfork_child`: the caller is not the traced process (a vfork child on
// its memory, a child of the fork system call that may have inherited the
// tracer's lock held): system calls only, no lock. `sequence` is the one
// the new image's trace would take (0: a new pid).
void announce_image(int pid, int sequence, const char* path, bool in_vfork_child);

// An announced image that did not come (the vfork child's exec failed):
// "PID\texec-failed\tSEQ" takes its announcement back.
void withdraw_image(int pid, int sequence, bool in_vfork_child);

}  // namespace memtrail::detail
