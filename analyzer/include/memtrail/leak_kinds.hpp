// Which leak classes a command shows: Valgrind's --show-leak-kinds words
// (definite, indirect, possible, reachable, all, none), comma separated.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "memtrail/event.hpp"

namespace memtrail {

struct Leaks;

class LeakKinds {
 public:
  constexpr LeakKinds() = default;
  static constexpr LeakKinds of(std::initializer_list<LeakClass> classes) {
    LeakKinds k;
    for (LeakClass c : classes) k.bits_ |= bit(c);
    return k;
  }
  // "definite,possible", "all", "none"; nullopt and `error` naming the bad word.
  static std::optional<LeakKinds> parse(std::string_view text, std::string* error);

  constexpr bool has(LeakClass c) const { return (bits_ & bit(c)) != 0; }
  bool operator==(const LeakKinds&) const = default;

 private:
  static constexpr std::uint32_t bit(LeakClass c) { return 1u << static_cast<unsigned>(c); }
  std::uint32_t bits_ = 0;
};

// memtrail's leaks (what `leaked` counts and `check` fails on by default).
inline constexpr LeakKinds kLeakedKinds = LeakKinds::of({LeakClass::direct, LeakClass::indirect});
// What the text report lists by default: every class but reachable.
inline constexpr LeakKinds kReportedKinds =
    LeakKinds::of({LeakClass::direct, LeakClass::indirect, LeakClass::possible});
inline constexpr LeakKinds kAllLeakKinds = LeakKinds::of(
    {LeakClass::direct, LeakClass::indirect, LeakClass::possible, LeakClass::reachable});

// Drops the leak sites whose class `kinds` leaves out (totals stay).
void keep_leak_kinds(Leaks& leaks, LeakKinds kinds);

}  // namespace memtrail
