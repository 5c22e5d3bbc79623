// Python frames in recorded stacks, for CPython 3.11 (Debian 12's python3):
// after each return address inside _PyEval_EvalFrameDefault the recorder
// inserts the Python frames that call of the interpreter was running
// (innermost first), each a tagged frame (kPythonFrameTag, event.hpp) naming
// the string "function\x1ffile\x1fline". The analyzer shows them as frames
// of their own, so a report reads train.py:20 between the native frames.
//
// Never for a munmap (segment_release): CPython's _PyThreadState_PopFrame
// unmaps a frame-stack chunk before the thread's current frame moves off
// it, so the chain may point into unmapped memory then. Every other event
// sees the chain whole (frames are pushed after their memory is mapped).
//
// A program without CPython 3.11 in it at start pays one branch on a
// global per stack (g_enabled stays false). Other CPython versions: the
// same, with their stacks native-only (the layout read here is 3.11's).
#pragma once

#include <cstdint>

namespace memtrail::runtime::python {

// True once detect() found CPython 3.11. Written before tracing starts.
extern bool g_enabled;

// Looks for CPython 3.11 in the process (the executable or a library loaded
// at start). Once per process image; leaves dlerror() as it found it.
void detect();

// ips[0..count) is a recorded stack, innermost first. Inserts the Python
// frames of this thread after each _PyEval_EvalFrameDefault frame, in
// place, keeping the total within `capacity`. Returns the new count (count
// when nothing was inserted). Never allocates on the program's heap: names
// are interned under the caller's reentrancy guard.
int splice(std::uint64_t* ips, int count, int capacity);

}  // namespace memtrail::runtime::python
