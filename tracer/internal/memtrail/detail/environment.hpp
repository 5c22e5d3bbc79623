// The MEMTRAIL_* environment variables the recorder and the libraries beside
// it understand, and the settings read from them. Not installed.
#pragma once

#include <cstdint>
#include <string_view>

namespace memtrail::detail {

// The MEMTRAIL_* environment variables someone in this process understands;
// RecorderOptions::from_environment() warns about any other MEMTRAIL_* name.
// The recorder's own names come first; other libraries in the process (the
// preload tracer, CUPTI injection) add theirs with add_known_environment_variable
// BEFORE calling from_environment().
inline constexpr std::string_view kRecorderEnvironment[] = {
    "MEMTRAIL_OUTPUT",      "MEMTRAIL_STACKS",        "MEMTRAIL_STACK_DEPTH",
    "MEMTRAIL_SAMPLE_MS",   "MEMTRAIL_FLUSH_MS",      "MEMTRAIL_TRACK_LIVE_HEAP",
    "MEMTRAIL_AUTOSTART",   "MEMTRAIL_EXEC_PID",      "MEMTRAIL_TIME_RESOLUTION_NS",
    "MEMTRAIL_STACK_CACHE", "MEMTRAIL_ADDRESS_MODEL", "MEMTRAIL_MEMORY_DEBUG",
};
// `name` must outlive the process (a string literal). Thread-safe.
void add_known_environment_variable(std::string_view name);
bool is_known_environment_variable(std::string_view name);

// Event time resolution of the recorder's traces, in ns: 1000 unless
// MEMTRAIL_TIME_RESOLUTION_NS (1..1000000000, 1 = exact) says otherwise.
// Coarser times make the trace ~30% smaller (docs/trace-format.md).
inline constexpr std::uint32_t kDefaultTimeResolutionNs = 1000;
std::uint32_t time_resolution_from_environment();

// MEMTRAIL_ADDRESS_MODEL: 1 = the writer always codes alloc addresses with
// the glibc model (smallest traces), 0 = never (cheapest writer), unset or
// `auto` = only while the writer keeps up (TraceWriter::set_address_model).
enum class AddressModel { automatic, always, never };
AddressModel address_model_from_environment();

}  // namespace memtrail::detail
