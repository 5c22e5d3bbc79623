// The CPython 3.11 layout the recorder and the exit scan read
// (tracer/src/python_layout.hpp) against Python's own headers: built only where python3.11-dev is.
#define Py_BUILD_CORE 1
#include <Python.h>
#include <gtest/gtest.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_gc.h>

#include <cstddef>
#include <cstring>

#include "python_layout.hpp"

namespace layout = memtrail::runtime::python::layout;

TEST(PythonLayout, MatchesTheHeadersOfCPython311) {
  ASSERT_EQ(PY_MAJOR_VERSION * 100 + PY_MINOR_VERSION, 311) << "headers of another CPython";
  EXPECT_EQ(layout::kThreadCFrame, offsetof(PyThreadState, cframe));
  EXPECT_EQ(layout::kCFrameCurrent, offsetof(_PyCFrame, current_frame));
  EXPECT_EQ(layout::kFrameCode, offsetof(_PyInterpreterFrame, f_code));
  EXPECT_EQ(layout::kFramePrevious, offsetof(_PyInterpreterFrame, previous));
  EXPECT_EQ(layout::kFramePrevInstr, offsetof(_PyInterpreterFrame, prev_instr));
  EXPECT_EQ(layout::kFrameIsEntry, offsetof(_PyInterpreterFrame, is_entry));
  EXPECT_EQ(layout::kFrameOwner, offsetof(_PyInterpreterFrame, owner));
  EXPECT_EQ(layout::kOwnedByGenerator, FRAME_OWNED_BY_GENERATOR);
  EXPECT_EQ(layout::kCodeFirstLine, offsetof(PyCodeObject, co_firstlineno));
  EXPECT_EQ(layout::kCodeFilename, offsetof(PyCodeObject, co_filename));
  EXPECT_EQ(layout::kCodeQualname, offsetof(PyCodeObject, co_qualname));
  EXPECT_EQ(layout::kCodeFirstTraceable, offsetof(PyCodeObject, _co_firsttraceable));
  EXPECT_EQ(layout::kCodeUnits, offsetof(PyCodeObject, co_code_adaptive));
  EXPECT_EQ(layout::kUnicodeState, offsetof(PyASCIIObject, state));
  EXPECT_EQ(layout::kAsciiData, sizeof(PyASCIIObject));
  EXPECT_EQ(layout::kCompactUtf8, offsetof(PyCompactUnicodeObject, utf8));
  // What the exit scan reads of the objects that hold data only.
  EXPECT_EQ(layout::kCompactData, sizeof(PyCompactUnicodeObject));
  EXPECT_EQ(layout::kUnicodeLength, offsetof(PyASCIIObject, length));
  EXPECT_EQ(layout::kObjectRefcount, offsetof(PyObject, ob_refcnt));
  EXPECT_EQ(layout::kObjectType, offsetof(PyObject, ob_type));
  EXPECT_EQ(layout::kVarSize, offsetof(PyVarObject, ob_size));
  EXPECT_EQ(layout::kCodeUnitSize, sizeof(_Py_CODEUNIT));
  EXPECT_EQ(layout::kBytesData, offsetof(PyBytesObject, ob_sval));
  EXPECT_EQ(layout::kLongDigits, offsetof(PyLongObject, ob_digit));
  EXPECT_EQ(layout::kDigitSize, sizeof(digit));
  EXPECT_EQ(layout::kFloatValue, offsetof(PyFloatObject, ob_fval));
  // What it reads of a type, to find where an object ends in its block.
  EXPECT_EQ(layout::kTypeBasicsize, offsetof(PyTypeObject, tp_basicsize));
  EXPECT_EQ(layout::kTypeItemsize, offsetof(PyTypeObject, tp_itemsize));
  EXPECT_EQ(layout::kTypeFlags, offsetof(PyTypeObject, tp_flags));
  EXPECT_EQ(layout::kManagedDictFlag, Py_TPFLAGS_MANAGED_DICT);
  EXPECT_EQ(layout::kHaveGcFlag, Py_TPFLAGS_HAVE_GC);
  EXPECT_EQ(layout::kUnicodeSubclassFlag, Py_TPFLAGS_UNICODE_SUBCLASS);
  EXPECT_EQ(layout::kTypeSubclassFlag, Py_TPFLAGS_TYPE_SUBCLASS);
  EXPECT_EQ(layout::kGcHeader, sizeof(PyGC_Head));
  // The state bits utf8_of() reads: compact is bit 5, ascii bit 6.
  PyASCIIObject probe{};
  probe.state.compact = 1;
  unsigned bits = 0;
  std::memcpy(&bits, reinterpret_cast<const char*>(&probe) + layout::kUnicodeState, 4);
  EXPECT_EQ(bits, 1u << 5);
  probe.state.compact = 0;
  probe.state.ascii = 1;
  std::memcpy(&bits, reinterpret_cast<const char*>(&probe) + layout::kUnicodeState, 4);
  EXPECT_EQ(bits, 1u << 6);
  probe.state.ascii = 0;
  probe.state.kind = PyUnicode_4BYTE_KIND;
  std::memcpy(&bits, reinterpret_cast<const char*>(&probe) + layout::kUnicodeState, 4);
  EXPECT_EQ(bits, unsigned{PyUnicode_4BYTE_KIND} << layout::kUnicodeKindShift);
}
