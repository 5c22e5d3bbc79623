// tidy(name, fn): TF.js's scoped disposal. Every tensor created while `fn`
// runs (on this thread) is disposed when it returns or throws, except the
// tensors it returns and the kept ones. Returned tensors are found inside
// any nesting of tuples, pairs, vectors, arrays, maps (values), optionals
// (the TensorWalk trait below; specialize it for your own types) and pass
// to the enclosing tidy, so nested tidies hand results upwards.
//
// Trace: scope_begin/scope_end of a ScopeKind::tidy scope named `name`
// (one scope id per name and pool) around the scope's frees, so the
// analyzer sees what escaped each entry and how a loop of entries grows.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "memtrail/tensor/tensor.hpp"

namespace memtrail::tensor {

// Calls visit(const Tensor&) for each tensor inside a value. The primary
// template holds no tensors.
template <class T, class = void>
struct TensorWalk {
  template <class V>
  static void walk(const T&, V&&) {}
};

template <class T, class V>
void walk_tensors(const T& value, V&& visit) {
  TensorWalk<std::remove_cvref_t<T>>::walk(value, visit);
}

template <>
struct TensorWalk<Tensor> {
  template <class V>
  static void walk(const Tensor& t, V&& visit) {
    visit(t);
  }
};
template <class T>
struct TensorWalk<std::optional<T>> {
  template <class V>
  static void walk(const std::optional<T>& o, V&& visit) {
    if (o) walk_tensors(*o, visit);
  }
};
template <class... Ts>
struct TensorWalk<std::tuple<Ts...>> {
  template <class V>
  static void walk(const std::tuple<Ts...>& t, V&& visit) {
    std::apply([&](const auto&... e) { (walk_tensors(e, visit), ...); }, t);
  }
};
template <class A, class B>
struct TensorWalk<std::pair<A, B>> {
  template <class V>
  static void walk(const std::pair<A, B>& p, V&& visit) {
    walk_tensors(p.first, visit);
    walk_tensors(p.second, visit);
  }
};
// Sequences (vector, array, list...) and maps: their elements; a map's
// elements are pairs, so keys that are tensors count too.
template <class C>
struct TensorWalk<C, std::void_t<typename C::value_type, decltype(std::declval<const C&>().begin()),
                                 decltype(std::declval<const C&>().end())>> {
  template <class V>
  static void walk(const C& c, V&& visit) {
    if constexpr (!std::is_same_v<C, std::string> && !std::is_same_v<C, std::string_view>)
      for (const auto& e : c) walk_tensors(e, visit);
  }
};

namespace detail {
// Opens a tidy scope on this thread; close() (or the destructor, on an
// exception) disposes what it tracks except `returned` and kept tensors.
class TidyScope {
 public:
  explicit TidyScope(std::string_view name);
  ~TidyScope();  // closes with nothing returned if close() was not called
  TidyScope(const TidyScope&) = delete;
  TidyScope& operator=(const TidyScope&) = delete;
  void close(const std::vector<std::uint64_t>& returned);

 private:
  bool open_ = true;
};
}  // namespace detail

template <class F>
std::invoke_result_t<F&> tidy(std::string_view name, F&& fn) {
  detail::TidyScope scope(name);
  if constexpr (std::is_void_v<std::invoke_result_t<F&>>) {
    fn();
    scope.close({});
  } else {
    auto result = fn();
    std::vector<std::uint64_t> returned;
    walk_tensors(result, [&](const Tensor& t) { returned.push_back(t.id()); });
    scope.close(returned);
    return result;
  }
}

// TF.js's one-argument form: the scope is named "unnamed scope".
template <class F>
requires std::is_invocable_v<F&> std::invoke_result_t<F&> tidy(F&& fn) {
  return tidy("unnamed scope", std::forward<F>(fn));
}

// Disposes every tensor inside `value` (a tensor or any container above).
template <class T>
void dispose(const T& value) {
  walk_tensors(value, [](const Tensor& t) { t.dispose(); });
}

}  // namespace memtrail::tensor
