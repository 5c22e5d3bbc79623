// WorkspaceConfiguration: ND4J's defaults, key:value parsing, and errors
// that name the field.
#include <gtest/gtest.h>

#include <cstdlib>

#include "memtrail/alloc/workspace_config.hpp"

namespace {

using namespace memtrail::alloc;

std::string error_of(const std::string& text) {
  try {
    WorkspaceConfiguration::parse(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(WorkspaceConfig, DefaultsAreNd4js) {
  WorkspaceConfiguration c;
  EXPECT_EQ(c.policy_allocation, AllocationPolicy::OVERALLOCATE);
  EXPECT_EQ(c.policy_spill, SpillPolicy::EXTERNAL);
  EXPECT_EQ(c.policy_mirroring, MirroringPolicy::FULL);
  EXPECT_EQ(c.policy_learning, LearningPolicy::FIRST_LOOP);
  EXPECT_EQ(c.policy_reset, ResetPolicy::BLOCK_LEFT);
  EXPECT_EQ(c.policy_location, LocationPolicy::RAM);
  EXPECT_EQ(c.initial_size, 0u);
  EXPECT_EQ(c.max_size, 0u);
  EXPECT_DOUBLE_EQ(c.overallocation_limit, 0.3);
  EXPECT_EQ(c.steps_number, 2u);
}

TEST(WorkspaceConfig, ParsesKeysAndRoundTrips) {
  auto c = WorkspaceConfiguration::parse(
      "initialSize:1M,maxSize:4M,policyReset:ENDOFBUFFER_REACHED,overallocationLimit:2,"
      "policySpill:REALLOCATE,policyLearning:OVER_TIME,cyclesBeforeInitialization:3,"
      "policyMirroring:HOST_ONLY,policyAllocation:STRICT");
  EXPECT_EQ(c.initial_size, 1u << 20);
  EXPECT_EQ(c.max_size, 4u << 20);
  EXPECT_EQ(c.policy_reset, ResetPolicy::ENDOFBUFFER_REACHED);
  EXPECT_DOUBLE_EQ(c.overallocation_limit, 2.0);
  EXPECT_EQ(c.policy_spill, SpillPolicy::REALLOCATE);
  EXPECT_EQ(c.policy_learning, LearningPolicy::OVER_TIME);
  EXPECT_EQ(c.cycles_before_initialization, 3u);
  EXPECT_EQ(c.policy_mirroring, MirroringPolicy::HOST_ONLY);
  EXPECT_EQ(c.policy_allocation, AllocationPolicy::STRICT);
  EXPECT_EQ(WorkspaceConfiguration::parse(c.to_string()), c);
}

TEST(WorkspaceConfig, ErrorsNameTheField) {
  EXPECT_EQ(error_of("minSize:2M,maxSize:1M"), "minSize: 2097152 is larger than maxSize 1048576");
  EXPECT_EQ(error_of("initialSize:-5"), "initialSize: must not be negative, got '-5'");
  EXPECT_EQ(error_of("overallocationLimit:-0.5"),
            "overallocationLimit: must not be negative, got '-0.5'");
  EXPECT_EQ(error_of("policySpill:SOMETIMES"),
            "policySpill: unknown value 'SOMETIMES' (expected EXTERNAL, FAIL, REALLOCATE)");
  EXPECT_EQ(error_of("cyclesBeforeInitialization:x"),
            "cyclesBeforeInitialization: not a number: 'x'");
  EXPECT_EQ(error_of("initialSize"),
            "workspace configuration: expected key:value, got 'initialSize'");
  EXPECT_EQ(error_of("bogus:1").rfind("unknown workspace configuration key 'bogus'", 0), 0u);
  EXPECT_EQ(
      error_of("policyReset:ENDOFBUFFER_REACHED")
          .rfind("overallocationLimit: For cyclic workspace overallocation should be positive "
                 "integral value",
                 0),
      0u);
  EXPECT_EQ(error_of("policyLocation:MMAP,policyLearning:NONE").rfind("initialSize: MMAP", 0), 0u);
  EXPECT_EQ(error_of("policyLocation:MMAP,initialSize:1M")
                .rfind("policyLearning: Workspace backed by memory-mapped file", 0),
            0u);
  EXPECT_EQ(error_of("policyReset:ENDOFBUFFER_REACHED,policyAllocation:STRICT"), "no error");
}

TEST(WorkspaceConfig, EnvironmentErrorsNameTheVariable) {
  setenv("MEMTRAIL_WORKSPACE_CONF", "policyLearning:SOMETIMES", 1);
  std::string what;
  try {
    WorkspaceConfiguration::from_environment();
  } catch (const ConfigError& e) {
    what = e.what();
  }
  setenv("MEMTRAIL_WORKSPACE_CONF", "initialSize:64K", 1);
  auto c = WorkspaceConfiguration::from_environment();
  unsetenv("MEMTRAIL_WORKSPACE_CONF");
  EXPECT_EQ(what,
            "MEMTRAIL_WORKSPACE_CONF: policyLearning: unknown value 'SOMETIMES' (expected "
            "FIRST_LOOP, OVER_TIME, NONE)");
  EXPECT_EQ(c.initial_size, 64u << 10);
  EXPECT_EQ(parse_debug_mode("SPILL_EVERYTHING"), DebugMode::SPILL_EVERYTHING);
  EXPECT_THROW(parse_debug_mode("LOUD"), ConfigError);
}

}  // namespace
