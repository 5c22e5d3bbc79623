// The end of a run watched by process events: which of the images exec'd in
// the program's tree ran without the tracer (process_tree.hpp).
//
// An image read untraced in /proc at its exec is said so. Every other one
// is judged by the run directory: a traced image creates its trace at
// start-up, under the pid it sees, with the CLOCK_MONOTONIC time it started
// in the header (the clock of the kernel's stamp on the exec event); so an
// image with no trace of its pid started between its exec and the pid's
// next image ran without the tracer, whether run read it in time or not
// (a static image with the tracing variables too). Left alone: an image
// read tracing into another directory (a run inside the program), one
// still running at the end with the tracer mapped, and the execs an
// interposer announced and pids the tracer itself said missing, which the
// run's list judges (run_output.cpp: one path for static and set-user-ID
// images).
#pragma once

#include <string>
#include <vector>

#include "process_tree.hpp"

namespace memtrail::cli {

// The run's list lines ("PID\tmissing\tWHY") for the images of `images`
// that ran without the tracer, judged against the run directory.
std::vector<std::string> untraced_exec_lines(const std::vector<ExecImage>& images,
                                             const std::string& directory);

}  // namespace memtrail::cli
