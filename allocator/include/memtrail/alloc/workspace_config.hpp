// WorkspaceConfiguration: ND4J's workspace configuration (fields, defaults
// and policy names as in org.nd4j.linalg.api.memory.conf, see
// reference/dl4j-workspaces-tfjs-tidy.md §1), parsed from
// "key:value,key:value" text (MEMTRAIL_WORKSPACE_CONF, `replay --conf`).
//
//   auto conf = WorkspaceConfiguration::parse("initialSize:1M,policyReset:ENDOFBUFFER_REACHED");
//
// Keys are ND4J's field names; sizes take the project's size syntax ("8M",
// "1.5 GiB"). Unknown keys, unknown policy names, negative numbers and
// impossible combinations throw ConfigError naming the field.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "memtrail/alloc/errors.hpp"

namespace memtrail::alloc {

enum class AllocationPolicy { STRICT, OVERALLOCATE };
enum class LearningPolicy { FIRST_LOOP, OVER_TIME, NONE };
enum class ResetPolicy { BLOCK_LEFT, ENDOFBUFFER_REACHED };
enum class SpillPolicy { EXTERNAL, FAIL, REALLOCATE };
enum class LocationPolicy { RAM, MMAP };
enum class MirroringPolicy { FULL, HOST_ONLY };
enum class DebugMode { DISABLED, SPILL_EVERYTHING, BYPASS_EVERYTHING };

std::string_view to_string(AllocationPolicy p);
std::string_view to_string(LearningPolicy p);
std::string_view to_string(ResetPolicy p);
std::string_view to_string(SpillPolicy p);
std::string_view to_string(LocationPolicy p);
std::string_view to_string(MirroringPolicy p);
std::string_view to_string(DebugMode m);

// Throws ConfigError "<field>: unknown value 'X' (expected A, B)".
DebugMode parse_debug_mode(std::string_view text, std::string_view field = "debugMode");

struct WorkspaceConfiguration {
  std::uint64_t initial_size = 0;  // bytes; 0 = learn
  std::uint64_t min_size = 0;      // 0 = unset
  std::uint64_t max_size = 0;      // 0 = unset
  double overallocation_limit = 0.3;
  std::uint64_t cycles_before_initialization = 0;  // OVER_TIME
  std::uint64_t steps_number = 2;  // kept for ND4J parity; circular depth comes from the limit
  AllocationPolicy policy_allocation = AllocationPolicy::OVERALLOCATE;
  LearningPolicy policy_learning = LearningPolicy::FIRST_LOOP;
  ResetPolicy policy_reset = ResetPolicy::BLOCK_LEFT;
  SpillPolicy policy_spill = SpillPolicy::EXTERNAL;
  LocationPolicy policy_location = LocationPolicy::RAM;
  MirroringPolicy policy_mirroring = MirroringPolicy::FULL;
  std::string temp_file_path;  // MMAP: directory for the temp file ("" = $TMPDIR or /tmp)

  // Throws ConfigError naming the field for an impossible configuration:
  // minSize > maxSize, initialSize > maxSize, overallocationLimit < 0 or not
  // finite, a circular OVERALLOCATE workspace with overallocationLimit < 1
  // (ND4J's "For cyclic workspace overallocation should be positive integral
  // value."), MMAP without initialSize or with a learning policy.
  void validate() const;
  // "key:value,..." over the defaults; validated.
  static WorkspaceConfiguration parse(std::string_view text);
  // MEMTRAIL_WORKSPACE_CONF (defaults when unset); errors name the variable.
  static WorkspaceConfiguration from_environment();
  // Back to "key:value,..." text (every field), parse(to_string()) == *this.
  std::string to_string() const;
  bool operator==(const WorkspaceConfiguration&) const = default;
};

}  // namespace memtrail::alloc
