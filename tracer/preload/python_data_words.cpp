// CPython's data words (python_data_words.hpp).
#include "python_data_words.hpp"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdio>

#include "python_layout.hpp"

namespace memtrail::preload {
namespace {

namespace layout = memtrail::runtime::python::layout;

// The header words read from an object: enough for a str's state.
constexpr std::size_t kHeaderWords = (layout::kUnicodeState + 8) / 8;
// PyASCIIObject::state's bits: interned:2, kind:3, compact:1, ascii:1.
constexpr unsigned kKindMask = 7, kCompactBit = 1u << 5, kAsciiBit = 1u << 6;

std::uintptr_t symbol(const char* name) {
  return reinterpret_cast<std::uintptr_t>(dlsym(RTLD_DEFAULT, name));
}

// The writable segments of the module that holds `inside` (Py_Version).
struct ImageSearch {
  std::uintptr_t inside = 0;
  std::array<MemoryRange, 4>* segments = nullptr;
};

int find_image_data(dl_phdr_info* info, size_t, void* data) {
  auto* s = static_cast<ImageSearch*>(data);
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    const std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    holds = holds || (ph.p_type == PT_LOAD && s->inside >= begin && s->inside < begin + ph.p_memsz);
  }
  if (!holds) return 0;
  std::size_t n = 0;
  for (int i = 0; i < info->dlpi_phnum && n < s->segments->size(); ++i) {
    const auto& ph = info->dlpi_phdr[i];
    const std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_W) != 0)
      (*s->segments)[n++] = {begin, begin + ph.p_memsz};
  }
  return 1;
}

}  // namespace

PythonTypes find_python_types() {
  const auto* version = reinterpret_cast<const unsigned long*>(symbol("Py_Version"));
  if (version == nullptr) {
    dlerror();  // no CPython here: the error is ours
    return {};
  }
  if ((*version >> 16) != 0x030B) return {};  // the layout read is 3.11's
  PythonTypes types{.code = symbol("PyCode_Type"),
                    .bytes = symbol("PyBytes_Type"),
                    .str = symbol("PyUnicode_Type"),
                    .int_ = symbol("PyLong_Type"),
                    .float_ = symbol("PyFloat_Type"),
                    .type = symbol("PyType_Type")};
  if (!types.code || !types.bytes || !types.str || !types.int_ || !types.float_ || !types.type) {
    dlerror();
    return {};
  }
  ImageSearch search{reinterpret_cast<std::uintptr_t>(version), &types.image_data};
  dl_iterate_phdr(find_image_data, &search);
  return types;
}

PythonDataWords::PythonDataWords(const PythonTypes& types,
                                 std::span<const MemoryRange> program_mappings,
                                 MemoryReader& reader)
    : types_(types), reader_(reader), pools_(reader) {
  // Only a mapping of an arena's size can be one (pymalloc_pools.hpp).
  for (const MemoryRange& r : program_mappings)
    if (r.end - r.begin == (1u << 20) || r.end - r.begin == (1u << 18)) arenas_.push_back(r);
  std::sort(arenas_.begin(), arenas_.end(),
            [](const MemoryRange& a, const MemoryRange& b) { return a.begin < b.begin; });
}

bool PythonDataWords::is_data(std::uintptr_t at, std::uint64_t value, const HeapBlock* holder,
                              bool to_start) {
  if (!types_.found()) return false;
  if (holder != nullptr) {  // a malloc'd block: the object starts it
    if (is_type_flags(*holder, at))
      return note(true, {at, value, "a class's tp_flags", holder->address, 0});
    if (to_start) return false;
    const Payload& p = payload_of(holder->address, holder->size, false);
    if (at == p.integer) return note(true, {at, value, "str's state", holder->address, 0});
    return note(at >= p.begin && at < p.end, {at, value, p.what, holder->address, 0});
  }
  // A static type's flags, in any module's data (an extension's).
  if (!to_start && is_type_at(at - layout::kTypeFlags))
    return note(true, {at, value, "a static class's tp_flags", 0, 0});
  // CPython's static data points at objects and at buffers' starts: a
  // pointer inside a block at no object is a dangling cache's.
  if (in_image_data(at))
    return !to_start &&
           note(type_of(value) == 0, {at, value, "CPython's static data: no object there", 0, 0});
  const MemoryRange* arena = arena_of(at);
  if (arena == nullptr) return false;
  const PymallocBlock block = pools_.block_at(at, *arena);
  if (block.state == PymallocBlock::State::free)
    return note(true, {at, value, "stale bytes", block.begin, block.size, true});
  if (block.state != PymallocBlock::State::in_use || to_start) return false;
  const Payload& p = payload_of(block.begin, block.size, true);
  if (at >= p.slack)
    return note(true, {at, value, "stale bytes past the object", block.begin, block.size});
  if (at == p.integer) return note(true, {at, value, "str's state", block.begin, block.size});
  return note(at >= p.begin && at < p.end, {at, value, p.what, block.begin, block.size});
}

const PythonDataWords::Payload& PythonDataWords::payload_of(std::uintptr_t object,
                                                            std::uint64_t bytes, bool pool) {
  if (object != last_object_) {
    last_ = read_payload(object, bytes);
    if (pool) {
      // A str's end is its characters' (the payload is an object's last part).
      const std::uint64_t end = object_end(object, bytes);
      if (end != 0)
        last_.slack = object + end;
      else if (last_.end != 0)
        last_.slack = (last_.end + 7) & ~std::uintptr_t{7};
    }
    last_object_ = object;
  }
  return last_;
}

// The type of the object at `object`: its ob_type, when its refcount is
// positive and that is a type (its type `type`, or a metaclass whose type
// is `type`); else 0.
std::uint64_t PythonDataWords::type_of(std::uintptr_t object) {
  std::uint64_t head[2] = {}, meta = 0, meta_type = 0;
  if (reader_.read(object, head, sizeof head) != sizeof head) return 0;
  const std::uint64_t type = head[layout::kObjectType / 8];
  if (static_cast<std::int64_t>(head[layout::kObjectRefcount / 8]) <= 0 || type == 0 ||
      reader_.read(type + layout::kObjectType, &meta, 8) != 8 || meta == 0)
    return 0;
  if (meta == types_.type) return type;
  if (reader_.read(meta + layout::kObjectType, &meta_type, 8) != 8) return 0;
  return meta_type == types_.type ? type : 0;
}

// Where the object in the pymalloc block at `block` (of `bytes`) ends,
// from the block's start: its GC header when its type has one, then its
// type's tp_basicsize and tp_itemsize per item (what PyObject_Malloc was
// asked for, rounded to 8). pymalloc gave the smallest size class that
// fits (16-byte steps), so the end must lie in the block's last 16 bytes.
// 0 when unknown: no object, a managed dict before the GC header, a str.
std::uint64_t PythonDataWords::object_end(std::uintptr_t block, std::uint64_t bytes) {
  for (std::uint64_t header : {std::uint64_t{0}, std::uint64_t{layout::kGcHeader}}) {
    const std::uint64_t type = type_of(block + header);
    std::uint64_t sizes[2] = {}, flags = 0;  // tp_basicsize, tp_itemsize
    if (type == 0 || reader_.read(type + layout::kTypeBasicsize, sizes, sizeof sizes) != 16 ||
        reader_.read(type + layout::kTypeFlags, &flags, 8) != 8)
      continue;
    const bool gc = (flags & layout::kHaveGcFlag) != 0;
    if (gc != (header != 0) || (flags & layout::kManagedDictFlag) != 0) continue;
    if ((flags & layout::kUnicodeSubclassFlag) != 0) return 0;  // a str's size is its own
    std::int64_t items = 0;
    if (sizes[1] != 0 && reader_.read(block + header + layout::kVarSize, &items, 8) != 8) return 0;
    const std::uint64_t count = items < 0 ? 0 - static_cast<std::uint64_t>(items) : items;
    if (sizes[0] > bytes || (sizes[1] != 0 && count > bytes / sizes[1])) return 0;
    const std::uint64_t end = header + ((sizes[0] + count * sizes[1] + 7) & ~std::uint64_t{7});
    return end <= bytes && end + 16 > bytes ? end : 0;
  }
  return 0;
}

// A class (a heap type: a GC object past pymalloc's 512 bytes) keeps its
// flags in a word, and the subclass bits put them among the heap's
// addresses: a subclass of int has 1 << 24 set, of str 1 << 28, of
// BaseException 1 << 30 (ctypes' ArgumentError: 0x40005600, which covered
// a leak where python3.11's brk heap reached 1 GiB). True when `at` is the
// tp_flags of a type object (its type `type` or a metaclass) in `block`.
bool PythonDataWords::is_type_flags(const HeapBlock& block, std::uintptr_t at) {
  const std::uintptr_t object = block.address + layout::kGcHeader;
  return at == object + layout::kTypeFlags && at + 8 <= block.address + block.size &&
         is_type_at(object);
}

// True when a type object (its type `type`, or a metaclass) is at `object`.
bool PythonDataWords::is_type_at(std::uintptr_t object) {
  const std::uint64_t meta = type_of(object);
  std::uint64_t flags = 0;
  if (meta == 0 || reader_.read(meta + layout::kTypeFlags, &flags, 8) != 8) return false;
  return meta == types_.type || (flags & layout::kTypeSubclassFlag) != 0;
}

bool PythonDataWords::in_image_data(std::uintptr_t at) const {
  for (const MemoryRange& r : types_.image_data)
    if (at >= r.begin && at < r.end) return true;
  return false;
}

// The payload of the object at `object`, in a block of `bytes`, when its
// type holds no references and the payload fits the block.
PythonDataWords::Payload PythonDataWords::read_payload(std::uintptr_t object, std::uint64_t bytes) {
  // A float or a one-digit int takes 24 or 28 bytes: read no further than
  // the block (a str's state word lies past them).
  std::uint64_t h[kHeaderWords] = {};
  const std::size_t header = std::min<std::uint64_t>(sizeof h, bytes & ~std::uint64_t{7});
  if (header < 3 * 8 || reader_.read(object, h, header) != header) return {};
  const auto refcount = static_cast<std::int64_t>(h[layout::kObjectRefcount / 8]);
  const std::uint64_t type = h[layout::kObjectType / 8];
  // ob_size of the variable-size ones (an int's sign is its sign).
  const auto size = static_cast<std::int64_t>(h[layout::kVarSize / 8]);
  const std::uint64_t count = size < 0 ? 0 - static_cast<std::uint64_t>(size) : size;
  if (refcount <= 0 || (count > bytes && type != types_.float_ && type != types_.str)) return {};
  std::uint64_t begin = 0, length = 0;
  const char* what = "";
  if (type == types_.code && size >= 0) {
    begin = layout::kCodeUnits, length = count * layout::kCodeUnitSize;
    what = "code object's bytecode";
  } else if (type == types_.bytes && size >= 0) {
    begin = layout::kBytesData, length = count + 1;
    what = "bytes object's data";
  } else if (type == types_.int_) {
    begin = layout::kLongDigits, length = count * layout::kDigitSize;
    what = "int's digits";
  } else if (type == types_.float_) {
    begin = layout::kFloatValue, length = 8;
    what = "float's value";
  } else if (type == types_.str) {
    // A compact str's characters follow its header: (length + 1) * kind bytes.
    const auto state = static_cast<std::uint32_t>(h[layout::kUnicodeState / 8]);
    const std::uint32_t kind = (state >> layout::kUnicodeKindShift) & kKindMask;
    const std::uint64_t characters = h[layout::kUnicodeLength / 8];
    if (header < sizeof h || (state & kCompactBit) == 0 || (kind != 1 && kind != 2 && kind != 4) ||
        characters >= bytes)
      return {};
    begin = (state & kAsciiBit) != 0 ? layout::kAsciiData : layout::kCompactData;
    length = (characters + 1) * kind;
    what = "str's characters";
  }
  // Sizes come from memory: a length past the block means no such object.
  if (length == 0 || length > bytes || begin > bytes - length) return {};
  Payload payload{object + begin, object + begin + length, what};
  // A str's state is a bit-field of 8 bits in 4 bytes, then 4 of padding:
  // CPython sets the bits only, the rest keep the block's earlier bytes.
  if (type == types_.str) payload.integer = object + layout::kUnicodeState;
  return payload;
}

std::string PythonDataWords::describe(std::uintptr_t at) {
  const MemoryRange* arena = arena_of(at);
  if (!types_.found() || arena == nullptr) return "";
  const PymallocBlock block = pools_.block_at(at, *arena);
  if (block.state == PymallocBlock::State::not_a_pool) return "no pymalloc pool";
  if (block.state == PymallocBlock::State::header) return "a pymalloc pool's header";
  char text[160];
  std::snprintf(text, sizeof text, "%s %u B pymalloc block at %#llx, offset %llu%s",
                block.state == PymallocBlock::State::free ? "a free" : "a", block.size,
                static_cast<unsigned long long>(block.begin),
                static_cast<unsigned long long>(at - block.begin),
                block.state == PymallocBlock::State::free ? "" : ", ");
  if (block.state == PymallocBlock::State::free) return text;
  return text + type_name_at(block.begin);
}

std::string PythonDataWords::describe_block(const HeapBlock& block) {
  return types_.found() ? type_name_at(block.address) : "";
}

// "object of type T" for an object at `object` or after a GC header there
// (the type's tp_name read from memory), else "no object header".
std::string PythonDataWords::type_name_at(std::uintptr_t object) {
  constexpr std::size_t kTypeName = 24;  // PyTypeObject::tp_name
  for (std::uintptr_t header : {object, object + 16}) {
    std::uint64_t type = 0, name = 0;
    char text[48] = {};
    if (reader_.read(header + layout::kObjectType, &type, 8) != 8 ||
        reader_.read(type + kTypeName, &name, 8) != 8 ||
        reader_.read(name, text, sizeof text - 1) == 0)
      continue;
    bool printable = text[0] != '\0';
    for (const char* c = text; *c != '\0'; ++c) printable = printable && *c >= ' ' && *c <= '~';
    if (printable) return std::string(header == object ? "" : "GC ") + "object of type " + text;
  }
  return "no object header";
}

const MemoryRange* PythonDataWords::arena_of(std::uintptr_t at) const {
  auto it = std::upper_bound(arenas_.begin(), arenas_.end(), at,
                             [](std::uintptr_t a, const MemoryRange& r) { return a < r.begin; });
  if (it == arenas_.begin() || at >= std::prev(it)->end) return nullptr;
  return &*std::prev(it);
}

bool PythonDataWords::note(bool data, const DataWordNote& what) {
  if (data && keep_notes_) notes_.push_back(what);
  return data;
}

}  // namespace memtrail::preload
