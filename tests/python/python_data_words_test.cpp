// The exit scan's CPython data words (tracer/preload/python_data_words.hpp,
// pymalloc_pools.hpp) read in an embedded CPython 3.11's own memory: the
// payloads of its bytes, str, int, float and code objects are data, their
// headers and the words of objects that hold references are not, and a
// block pymalloc has back is data whatever it held.
#define Py_BUILD_CORE 1
#include <Python.h>
#include <gtest/gtest.h>
#include <internal/pycore_gc.h>

#include <dlfcn.h>
#include <sys/mman.h>

#include <cstdint>
#include <string>
#include <vector>

#include "python_data_words.hpp"

namespace memtrail::preload {
namespace {

constexpr std::size_t kCodeUnits = offsetof(PyCodeObject, co_code_adaptive);

std::uintptr_t address_of(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p);
}

// pymalloc's arenas, as the preload's mmap interposer sees them
// (program_mappings.hpp): the embedded interpreter maps them through this
// allocator. /proc/self/maps would not do: the kernel merges neighbouring
// arenas into one mapping there.
std::vector<MemoryRange> g_arenas;

void* map_arena(void*, std::size_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  g_arenas.push_back({address_of(p), address_of(p) + size});
  return p;
}

void unmap_arena(void*, void* p, std::size_t size) {
  std::erase_if(g_arenas, [&](const MemoryRange& r) { return r.begin == address_of(p); });
  munmap(p, size);
}

// The arena that holds `address` (a small object's).
MemoryRange mapping_of(std::uintptr_t address) {
  for (const MemoryRange& r : g_arenas)
    if (address >= r.begin && address < r.end) return r;
  return {};
}

class PythonDataWordsTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (Py_IsInitialized()) return;
    PyObjectArenaAllocator arenas{nullptr, &map_arena, &unmap_arena};
    PyObject_SetArenaAllocator(&arenas);
    Py_InitializeEx(0);
  }

  // Whether the word at `at`, in a pymalloc block, reads as data
  // (the arena around it given as the program's mapping).
  bool pool_word_is_data(std::uintptr_t at, bool to_start = false) {
    const MemoryRange arena = mapping_of(at);
    PythonDataWords words(find_python_types(), std::span(&arena, 1), reader_);
    return words.is_data(at, 0, nullptr, to_start);
  }

  // Whether the word at `at` of the object that starts malloc'd block
  // `block` reads as data.
  bool block_word_is_data(const HeapBlock& block, std::uintptr_t at) {
    PythonDataWords words(find_python_types(), {}, reader_);
    return words.is_data(at, 0, &block, false);
  }

  // Whether a word of CPython's static data (at `at`) holding `value`
  // reads as data.
  bool static_word_is_data(std::uintptr_t at, std::uintptr_t value, bool to_start = false) {
    PythonDataWords words(find_python_types(), {}, reader_);
    return words.is_data(at, value, nullptr, to_start);
  }

  SelfMemoryReader reader_;
};

TEST_F(PythonDataWordsTest, FindsCPython311sTypes) {
  const PythonTypes types = find_python_types();
  EXPECT_EQ(types.code, address_of(&PyCode_Type));
  EXPECT_EQ(types.bytes, address_of(&PyBytes_Type));
  EXPECT_EQ(types.str, address_of(&PyUnicode_Type));
  EXPECT_EQ(types.int_, address_of(&PyLong_Type));
  EXPECT_EQ(types.float_, address_of(&PyFloat_Type));
}

TEST_F(PythonDataWordsTest, SmallBytesDataIsDataItsHeaderIsNot) {
  PyObject* bytes = PyBytes_FromStringAndSize("0123456789abcdef0123456789abcdef", 32);
  const std::uintptr_t at = address_of(bytes);
  EXPECT_TRUE(pool_word_is_data(at + offsetof(PyBytesObject, ob_sval)));
  EXPECT_TRUE(pool_word_is_data(at + offsetof(PyBytesObject, ob_sval) + 24));
  EXPECT_FALSE(pool_word_is_data(at + offsetof(PyObject, ob_type)));
  EXPECT_FALSE(pool_word_is_data(at + offsetof(PyVarObject, ob_size)));
  // The start of a block, in a live object's data, is followed all the same.
  EXPECT_FALSE(pool_word_is_data(at + offsetof(PyBytesObject, ob_sval), true));
  Py_DECREF(bytes);
}

TEST_F(PythonDataWordsTest, BytecodeIsDataCodeFieldsAreNot) {
  PyObject* code =
      Py_CompileString("x = [i * 2 for i in range(10)]\ny = len(x)\n", "t", Py_file_input);
  ASSERT_NE(code, nullptr);
  ASSERT_LE(Py_SIZE(code) * 2 + kCodeUnits, 512u) << "the code object is to be pymalloc's";
  const std::uintptr_t at = address_of(code);
  EXPECT_TRUE(pool_word_is_data(at + kCodeUnits));
  EXPECT_TRUE(pool_word_is_data(at + kCodeUnits + ((Py_SIZE(code) * 2 - 1) & ~7)));
  EXPECT_FALSE(pool_word_is_data(at + offsetof(PyCodeObject, co_consts)));
  EXPECT_FALSE(pool_word_is_data(at + offsetof(PyCodeObject, co_names)));
  Py_DECREF(code);
}

TEST_F(PythonDataWordsTest, StrIntAndFloatPayloadsAreData) {
  PyObject* ascii = PyUnicode_FromString("an ascii string of some length");
  PyObject* wide = PyUnicode_FromString("caf\xc3\xa9 \xe2\x82\xac and more text");
  PyObject* number = PyLong_FromString("123456789012345678901234567890", nullptr, 10);
  PyObject* real = PyFloat_FromDouble(2.5);
  EXPECT_TRUE(pool_word_is_data(address_of(ascii) + sizeof(PyASCIIObject)));
  EXPECT_FALSE(pool_word_is_data(address_of(ascii) + offsetof(PyASCIIObject, wstr)));
  // Issue 27: the state's unused bits and padding kept a freed object's
  // bytes that read 0x276261e4 (with the state's 0xe4), inside a leak.
  EXPECT_TRUE(pool_word_is_data(address_of(ascii) + offsetof(PyASCIIObject, state)));
  EXPECT_TRUE(pool_word_is_data(address_of(wide) + offsetof(PyASCIIObject, state)));
  EXPECT_TRUE(pool_word_is_data(address_of(wide) + sizeof(PyCompactUnicodeObject)));
  EXPECT_FALSE(pool_word_is_data(address_of(wide) + offsetof(PyCompactUnicodeObject, utf8)));
  EXPECT_TRUE(pool_word_is_data(address_of(number) + offsetof(PyLongObject, ob_digit)));
  EXPECT_TRUE(pool_word_is_data(address_of(real) + offsetof(PyFloatObject, ob_fval)));
  for (PyObject* o : {ascii, wide, number, real}) Py_DECREF(o);
}

TEST_F(PythonDataWordsTest, ObjectsThatHoldReferencesAreNotData) {
  PyObject* tuple = Py_BuildValue("(iii)", 100000, 200000, 300000);
  PyObject* list = PyList_New(0);
  PyList_Append(list, tuple);
  EXPECT_FALSE(pool_word_is_data(address_of(tuple) + offsetof(PyTupleObject, ob_item)));
  EXPECT_FALSE(pool_word_is_data(address_of(list) + offsetof(PyListObject, ob_item)));
  // The list's item array: a pymalloc block with no type, in use.
  PyObject** items = reinterpret_cast<PyListObject*>(list)->ob_item;
  EXPECT_FALSE(pool_word_is_data(address_of(items)));
  Py_DECREF(list);
  Py_DECREF(tuple);
}

TEST_F(PythonDataWordsTest, FreedPoolBlockIsDataWhateverItHeld) {
  // A bytearray's block (no free list of its own keeps it), freed: its
  // stale buffer pointer is pymalloc's bytes now.
  std::vector<PyObject*> keep;
  for (int i = 0; i < 8; ++i) keep.push_back(PyByteArray_FromStringAndSize("abc", 3));
  PyObject* freed = keep[3];
  const std::uintptr_t at = address_of(freed) + offsetof(PyByteArrayObject, ob_bytes);
  const MemoryRange arena = mapping_of(address_of(freed));
  PymallocPools pools(reader_);
  const PymallocBlock live = pools.block_at(at, arena);
  EXPECT_EQ(live.state, PymallocBlock::State::in_use);
  EXPECT_EQ(live.begin, address_of(freed));
  EXPECT_EQ(live.size, (sizeof(PyByteArrayObject) + 15) / 16 * 16);
  EXPECT_FALSE(pool_word_is_data(at));
  keep.erase(keep.begin() + 3);
  Py_DECREF(freed);
  PymallocPools after(reader_);
  EXPECT_EQ(after.block_at(at, arena).state, PymallocBlock::State::free);
  EXPECT_TRUE(pool_word_is_data(at));
  EXPECT_TRUE(pool_word_is_data(at, true)) << "free memory holds no pointer, to a start either";
  for (PyObject* o : keep) Py_DECREF(o);
}

// Issue 27: pymalloc hands out blocks in 16-byte size classes and does not
// clear them, so the bytes past a small object keep what the block's
// earlier object left there: an item array's pointer to an object freed
// since, whose memory a later leak may reuse. They are nobody's.
TEST_F(PythonDataWordsTest, BytesPastAnObjectInItsBlockAreData) {
  PyObject* bytes = PyBytes_FromStringAndSize("ab", 2);  // 35 bytes: a 48-byte block
  PyObject* one = PyTuple_Pack(1, bytes);                // GC header + 32: 48 bytes too
  PyObject* cell = PyCell_New(bytes);                    // GC header + 24: 48 bytes
  const std::uintptr_t past_bytes = address_of(bytes) + 40;
  ASSERT_EQ(mapping_of(past_bytes).begin, mapping_of(address_of(bytes)).begin);
  EXPECT_TRUE(pool_word_is_data(past_bytes));
  EXPECT_TRUE(pool_word_is_data(address_of(cell) + sizeof(PyCellObject)));
  // The tuple's item lies at the same offset in its block: a reference.
  EXPECT_FALSE(pool_word_is_data(address_of(&PyTuple_GET_ITEM(one, 0))));
  EXPECT_FALSE(pool_word_is_data(address_of(cell) + offsetof(PyCellObject, ob_ref)));
  // A start pointer there is followed all the same, as in a payload.
  EXPECT_FALSE(pool_word_is_data(past_bytes, true));
  for (PyObject* o : {cell, one, bytes}) Py_DECREF(o);
}

// Issue 27: CPython's static data keeps objects and buffers' starts; the
// 3.11 parser's dummy name (a static cache of a node in a parser arena
// freed after the parse) pointed inside whatever block reused the arena's
// memory. A pointer inside a malloc'd block at no object is not followed.
TEST_F(PythonDataWordsTest, CPythonStaticDataInsideABlockAtNoObjectIsData) {
  // A word of libpython's writable data (None, where libpython defines it:
  // a program's own reference to it may be a copy of it in the program).
  void* libpython = dlopen("libpython3.11.so.1.0", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(libpython, nullptr);
  const std::uintptr_t at = address_of(dlsym(libpython, "_Py_NoneStruct"));
  dlclose(libpython);
  ASSERT_NE(at, 0u);
  std::vector<char> raw(1000, 0);
  EXPECT_TRUE(static_word_is_data(at, address_of(raw.data()) + 100));
  EXPECT_FALSE(static_word_is_data(at, address_of(raw.data()), true));
  // A GC object past pymalloc's 512 bytes: its address is 16 bytes inside
  // its malloc'd block, and is followed.
  PyObject* big = PyTuple_New(100);
  EXPECT_FALSE(static_word_is_data(at, address_of(big)));
  Py_DECREF(big);
  // Words of the program's own data are not CPython's.
  static std::uintptr_t ours = 0;
  EXPECT_FALSE(static_word_is_data(address_of(&ours), address_of(raw.data()) + 100));
}

// Issue 27: a class's flags hold its base's subclass bit (BaseException's
// is 1 << 30), which reads as an address where python3.11's heap reaches
// 1 GiB: ctypes' ArgumentError's 0x40005600 covered a leak so. A class is a
// malloc'd GC object; its other fields are references.
TEST_F(PythonDataWordsTest, AClasssFlagsAreData) {
  PyObject* error = PyErr_NewException("m.Error", nullptr, nullptr);
  ASSERT_NE(error, nullptr);
  const auto* type = reinterpret_cast<PyTypeObject*>(error);
  ASSERT_NE(type->tp_flags & Py_TPFLAGS_BASE_EXC_SUBCLASS, 0u);
  const HeapBlock block{.address = address_of(type) - sizeof(PyGC_Head),
                        .size = sizeof(PyGC_Head) + sizeof(PyHeapTypeObject)};
  EXPECT_TRUE(block_word_is_data(block, address_of(&type->tp_flags)));
  EXPECT_FALSE(block_word_is_data(block, address_of(&type->tp_base)));
  EXPECT_FALSE(block_word_is_data(block, address_of(&type->tp_dict)));
  // The same offset in an object that is no class is not a flags word.
  PyObject* big = PyTuple_New(100);
  const HeapBlock tuple{.address = address_of(big) - sizeof(PyGC_Head),
                        .size = sizeof(PyGC_Head) + sizeof(PyTupleObject) + 99 * sizeof(void*)};
  EXPECT_FALSE(block_word_is_data(tuple, address_of(big) + offsetof(PyTypeObject, tp_flags)));
  Py_DECREF(big);
  Py_DECREF(error);
}

// An extension's static type (here the test's own) keeps its flags in its
// module's data, set when the type is readied: _ctypes' types derived from
// dict (1 << 29) read 0x20405540, inside a leak, in a stress run.
TEST_F(PythonDataWordsTest, AStaticClasssFlagsAreData) {
  static PyTypeObject derived = {PyVarObject_HEAD_INIT(nullptr, 0)};
  derived.tp_name = "m.Derived";
  derived.tp_basicsize = sizeof(PyDictObject);
  derived.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  derived.tp_base = &PyDict_Type;
  ASSERT_EQ(PyType_Ready(&derived), 0);
  ASSERT_NE(derived.tp_flags & Py_TPFLAGS_DICT_SUBCLASS, 0u);
  std::vector<char> raw(1000, 0);
  const std::uintptr_t inside = address_of(raw.data()) + 100;
  EXPECT_TRUE(static_word_is_data(address_of(&derived.tp_flags), inside));
  EXPECT_FALSE(static_word_is_data(address_of(&derived.tp_base), inside));
}

TEST_F(PythonDataWordsTest, MallocdObjectsPayloadIsData) {
  // 1,000 bytes: past pymalloc's 512, the object is a malloc'd block.
  std::string text(1000, 'x');
  PyObject* bytes = PyBytes_FromStringAndSize(text.data(), static_cast<Py_ssize_t>(text.size()));
  const HeapBlock block{.address = address_of(bytes),
                        .size = offsetof(PyBytesObject, ob_sval) + 1 + text.size()};
  EXPECT_TRUE(block_word_is_data(block, block.address + offsetof(PyBytesObject, ob_sval) + 512));
  EXPECT_FALSE(block_word_is_data(block, block.address + offsetof(PyObject, ob_type)));
  // A block of another size than the object's claims no object.
  const HeapBlock small{.address = block.address, .size = 100};
  EXPECT_FALSE(block_word_is_data(small, small.address + offsetof(PyBytesObject, ob_sval) + 32));
  Py_DECREF(bytes);
}

TEST_F(PythonDataWordsTest, NothingIsDataWithoutCPython311) {
  PyObject* bytes = PyBytes_FromStringAndSize("0123456789abcdef", 16);
  const MemoryRange arena = mapping_of(address_of(bytes));
  PythonDataWords words(PythonTypes{}, std::span(&arena, 1), reader_);
  EXPECT_FALSE(
      words.is_data(address_of(bytes) + offsetof(PyBytesObject, ob_sval), 0, nullptr, false));
  Py_DECREF(bytes);
}

}  // namespace
}  // namespace memtrail::preload
