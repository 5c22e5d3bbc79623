// The parts of CPython 3.11's structures that python_frames.cpp reads
// (x86-64 and aarch64, LP64), from Include/internal/pycore_frame.h,
// cpython/code.h, cpython/pystate.h and cpython/unicodeobject.h.
// tests/python/python_layout_test.cpp compares them with the headers where
// python3.11-dev is installed.
#pragma once

#include <cstddef>

namespace memtrail::runtime::python::layout {
constexpr std::size_t kThreadCFrame = 56;         // PyThreadState::cframe
constexpr std::size_t kCFrameCurrent = 8;         // _PyCFrame::current_frame
constexpr std::size_t kFrameCode = 32;            // _PyInterpreterFrame::f_code
constexpr std::size_t kFramePrevious = 48;        // ::previous
constexpr std::size_t kFramePrevInstr = 56;       // ::prev_instr
constexpr std::size_t kFrameIsEntry = 68;         // ::is_entry
constexpr std::size_t kFrameOwner = 69;           // ::owner
constexpr char kOwnedByGenerator = 1;             // FRAME_OWNED_BY_GENERATOR
constexpr std::size_t kCodeFirstLine = 72;        // PyCodeObject::co_firstlineno
constexpr std::size_t kCodeFilename = 112;        // ::co_filename
constexpr std::size_t kCodeQualname = 128;        // ::co_qualname
constexpr std::size_t kCodeFirstTraceable = 168;  // ::_co_firsttraceable
constexpr std::size_t kCodeUnits = 184;           // ::co_code_adaptive
constexpr std::size_t kUnicodeState = 32;         // PyASCIIObject::state
constexpr std::size_t kAsciiData = 48;            // sizeof(PyASCIIObject)
constexpr std::size_t kCompactUtf8 = 56;          // PyCompactUnicodeObject::utf8
}  // namespace memtrail::runtime::python::layout
