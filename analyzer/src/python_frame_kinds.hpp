// What kind of frame a symbolized frame is, for keys that must name the same
// Python line alike across runs (diff's site matching, check's baselines).
#pragma once

#include <string_view>

#include "memtrail/frame.hpp"

namespace memtrail::detail {

inline std::string_view path_basename(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// A recorded Python frame (symbolize_sites.hpp: module "python").
inline bool is_python_frame(const Frame& f) {
  return f.module == "python" && !f.function.empty();
}

// CPython's own code: the interpreter executable or libpython.
inline bool in_interpreter(const Frame& f) {
  std::string_view base = path_basename(f.module);
  return base.starts_with("python3") || base.starts_with("libpython3");
}

// A nameless frame of the interpreter in a stack that has Python frames: its
// internals, which differ from run to run for one Python line (the depth of
// a recursive unmarshal, a dict resized a step earlier under another hash
// seed); keys write a run of them as one token without offsets.
inline bool is_interpreter_internal(const Frame& f, bool stack_has_python) {
  return stack_has_python && f.function.empty() && in_interpreter(f);
}

inline bool has_python_frame(const FrameList& frames) {
  for (const Frame& f : frames)
    if (is_python_frame(f)) return true;
  return false;
}

}  // namespace memtrail::detail
