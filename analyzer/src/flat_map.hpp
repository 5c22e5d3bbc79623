// The analysis pass's maps keyed by an address (live blocks per pool, the
// call tree's indexes) are the project's one address table
// (tracer/internal/memtrail/detail/address_table.hpp).
#pragma once

#include "memtrail/detail/address_table.hpp"

namespace memtrail::detail {

template <class Value>
using AddressMap = AddressTable<Value>;

}  // namespace memtrail::detail
