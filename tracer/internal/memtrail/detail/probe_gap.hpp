// Deletion from linear-probing tables without tombstones (address_table.hpp,
// address_set.hpp, the codec twins' free index): once
// slot `hole` is vacated, every later member of its probe run whose home is
// not in the cyclic range (hole, j] moves back into the hole, so a lookup
// can still stop at the first empty slot.
#pragma once

#include <cstddef>

namespace memtrail {

// Returns the slot that ends up empty; the caller marks it so.
template <class IsEmpty, class HomeOf, class Move>
inline std::size_t close_probe_gap(std::size_t hole, std::size_t mask, IsEmpty is_empty,
                                   HomeOf home_of, Move move) {
  for (std::size_t j = (hole + 1) & mask; !is_empty(j); j = (j + 1) & mask) {
    std::size_t home = home_of(j);
    bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!stays) {
      move(j, hole);
      hole = j;
    }
  }
  return hole;
}

}  // namespace memtrail
