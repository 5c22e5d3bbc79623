// Typed ids of the analyzer's public API. Sites, stacks and pools are each
// numbered from 0 on their own, so a bare std::uint32_t let a stack id be
// passed where a site index was meant and still compile. Each kind is its
// own type (after heaptrack's util/indices.h): compared and hashed like the
// integer, never converted to or from one implicitly. `.value` is the
// integer, for containers, JSON and text.
//
// The trace format (event.hpp: Event::stack, PoolInfo::id, ...) keeps raw
// integers; the analysis engine wraps them where it fills the public
// structures.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace memtrail {

template <class Tag>
struct Id {
  std::uint32_t value = 0;

  constexpr Id() = default;
  constexpr explicit Id(std::uint32_t v) : value(v) {}
  friend constexpr bool operator==(Id, Id) = default;
  friend constexpr auto operator<=>(Id, Id) = default;
};

// An index into Analysis::sites.
using SiteId = Id<struct SiteTag>;
// A stack-trie node of the trace (StackNode::id, the innermost frame).
// Id 0 means "no stack recorded": test it with has_stack().
using StackId = Id<struct StackTag>;
// A pool of the trace (PoolInfo::id).
using PoolId = Id<struct PoolTag>;

inline constexpr StackId kNoStack{};
constexpr bool has_stack(StackId s) {
  return s != kNoStack;
}

// The element of a container indexed by an id: at(a.sites, site).
template <class Container, class Tag>
constexpr decltype(auto) at(Container& c, Id<Tag> id) {
  return c[id.value];
}

}  // namespace memtrail

template <class Tag>
struct std::hash<memtrail::Id<Tag>> {
  std::size_t operator()(memtrail::Id<Tag> id) const noexcept {
    return std::hash<std::uint32_t>{}(id.value);
  }
};
