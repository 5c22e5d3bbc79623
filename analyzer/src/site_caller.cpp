// The first frame outside the allocation machinery (site_caller.hpp).
#include "memtrail/site_caller.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace memtrail {

namespace {

std::string_view base_name(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Modules whose every frame is machinery: the C runtime and the tracer.
bool machinery_module(std::string_view module) {
  std::string_view m = base_name(module);
  return starts_with(m, "libc.so") || starts_with(m, "libc-") || starts_with(m, "ld-linux") ||
         starts_with(m, "ld64.so") || starts_with(m, "libmemtrail");
}

// The function's name without its parameter list:
// "operator new(unsigned long)" -> "operator new".
std::string_view plain_name(const std::string& function) {
  std::string_view name = function;
  return name.substr(0, name.find('('));
}

// Known wrappers by name, not by a pattern: "leak_calloc" or
// "my_strdup_test" in the program are the program's own code.
bool machinery_function(const std::string& function) {
  if (function.empty()) return false;
  std::string_view name = plain_name(function);
  static constexpr std::array<std::string_view, 13> exact = {
      "malloc",   "calloc", "realloc", "reallocarray", "free",    "posix_memalign", "aligned_alloc",
      "memalign", "valloc", "pvalloc", "strdup",       "strndup", "xmalloc"};
  for (auto e : exact)
    if (name == e) return true;
  static constexpr std::array<std::string_view, 31> prefixes = {
      // C++ allocation, memtrail's own pools included
      "operator new", "operator delete", "std::allocator", "std::__new_allocator",
      "__gnu_cxx::new_allocator", "std::allocator_traits", "memtrail::alloc::",
      // glibc internals that a libc without its module name still shows
      "__libc_", "_int_", "__GI_", "__strdup", "__strndup", "__posix_memalign",
      // well-known wrappers
      "xcalloc", "xrealloc", "xstrdup", "xstrndup", "xmemdup", "PyMem_", "_PyMem_",
      "PyObject_Malloc", "PyObject_Calloc", "PyObject_Realloc", "_PyObject_Malloc",
      "_PyObject_Calloc", "_PyObject_Realloc", "CRYPTO_malloc", "CRYPTO_zalloc", "CRYPTO_realloc",
      "CRYPTO_strdup", "CRYPTO_strndup"};
  for (auto p : prefixes)
    if (starts_with(name, p)) return true;
  static constexpr std::array<std::string_view, 8> more = {"CRYPTO_memdup",
                                                           "CRYPTO_clear_realloc",
                                                           "CRYPTO_secure_malloc",
                                                           "g_malloc",
                                                           "g_realloc",
                                                           "g_try_malloc",
                                                           "g_strdup",
                                                           "g_strndup"};
  for (auto p : more)
    if (starts_with(name, p)) return true;
  return false;
}

}  // namespace

bool is_allocation_machinery(const Frame& f) {
  return machinery_module(f.module) || machinery_function(f.function);
}

std::size_t first_caller_frame(const FrameList& frames) {
  for (std::size_t i = 0; i < frames.size(); ++i)
    if (!is_allocation_machinery(frames[i])) return i;
  return 0;
}

std::string caller_text(const FrameList& frames) {
  if (frames.empty()) return "(no stack recorded)";
  const Frame& f = frames[first_caller_frame(frames)];
  std::string text = f.describe();
  if (!f.function.empty() && !f.module.empty())
    text += " (" + std::string(base_name(f.module)) + ")";
  return text;
}

}  // namespace memtrail
