// The parts of CPython 3.11's structures that python_frames.cpp and the exit
// scan's python_data_words.cpp (tracer/preload) read (x86-64 and aarch64,
// LP64), from Include/internal/pycore_frame.h, object.h, cpython/code.h,
// cpython/pystate.h, cpython/unicodeobject.h, cpython/bytesobject.h,
// cpython/longintrepr.h, floatobject.h, cpython/object.h (PyTypeObject)
// and internal/pycore_gc.h.
// tests/python/python_layout_test.cpp compares them with the headers where
// python3.11-dev is installed.
#pragma once

#include <cstddef>

namespace memtrail::runtime::python::layout {
constexpr std::size_t kThreadCFrame = 56;                  // PyThreadState::cframe
constexpr std::size_t kCFrameCurrent = 8;                  // _PyCFrame::current_frame
constexpr std::size_t kFrameCode = 32;                     // _PyInterpreterFrame::f_code
constexpr std::size_t kFramePrevious = 48;                 // ::previous
constexpr std::size_t kFramePrevInstr = 56;                // ::prev_instr
constexpr std::size_t kFrameIsEntry = 68;                  // ::is_entry
constexpr std::size_t kFrameOwner = 69;                    // ::owner
constexpr char kOwnedByGenerator = 1;                      // FRAME_OWNED_BY_GENERATOR
constexpr std::size_t kCodeFirstLine = 72;                 // PyCodeObject::co_firstlineno
constexpr std::size_t kCodeFilename = 112;                 // ::co_filename
constexpr std::size_t kCodeQualname = 128;                 // ::co_qualname
constexpr std::size_t kCodeFirstTraceable = 168;           // ::_co_firsttraceable
constexpr std::size_t kCodeUnits = 184;                    // ::co_code_adaptive
constexpr std::size_t kUnicodeState = 32;                  // PyASCIIObject::state
constexpr std::size_t kAsciiData = 48;                     // sizeof(PyASCIIObject)
constexpr std::size_t kCompactUtf8 = 56;                   // PyCompactUnicodeObject::utf8
constexpr std::size_t kCompactData = 72;                   // sizeof(PyCompactUnicodeObject)
constexpr std::size_t kUnicodeLength = 16;                 // PyASCIIObject::length
constexpr unsigned kUnicodeKindShift = 2;                  // PyASCIIObject::state.kind: bits 2..4
constexpr std::size_t kObjectRefcount = 0;                 // PyObject::ob_refcnt
constexpr std::size_t kObjectType = 8;                     // PyObject::ob_type
constexpr std::size_t kVarSize = 16;                       // PyVarObject::ob_size
constexpr std::size_t kCodeUnitSize = 2;                   // sizeof(_Py_CODEUNIT)
constexpr std::size_t kBytesData = 32;                     // PyBytesObject::ob_sval
constexpr std::size_t kLongDigits = 24;                    // PyLongObject::ob_digit
constexpr std::size_t kDigitSize = 4;                      // sizeof(digit)
constexpr std::size_t kFloatValue = 16;                    // PyFloatObject::ob_fval
constexpr std::size_t kTypeBasicsize = 32;                 // PyTypeObject::tp_basicsize
constexpr std::size_t kTypeItemsize = 40;                  // ::tp_itemsize
constexpr std::size_t kTypeFlags = 168;                    // ::tp_flags
constexpr unsigned long kManagedDictFlag = 1ul << 4;       // Py_TPFLAGS_MANAGED_DICT
constexpr unsigned long kHaveGcFlag = 1ul << 14;           // Py_TPFLAGS_HAVE_GC
constexpr unsigned long kUnicodeSubclassFlag = 1ul << 28;  // Py_TPFLAGS_UNICODE_SUBCLASS
constexpr unsigned long kTypeSubclassFlag = 1ul << 31;     // Py_TPFLAGS_TYPE_SUBCLASS
constexpr std::size_t kGcHeader = 16;                      // sizeof(PyGC_Head)
}  // namespace memtrail::runtime::python::layout
