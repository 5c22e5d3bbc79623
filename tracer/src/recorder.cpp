// PLACEHOLDER until the recorder lands: tracing is never on.
#include "memtrail/recorder.hpp"

namespace memtrail {
namespace detail {
std::atomic<bool> g_tracing{false};
void record_slow(Event, int) {}
}  // namespace detail
bool start(const RecorderOptions&) { return false; }
bool start(const std::string&) { return false; }
void stop() {}
void flush() {}
std::uint32_t register_pool(const PoolInfo&) { return 1; }
std::uint32_t register_scope(std::string_view, ScopeKind, std::uint32_t) { return 1; }
std::uint32_t intern_string(std::string_view) { return 1; }
void set_thread_name(std::string_view) {}
std::uint32_t heap_pool() { return 1; }
void record_mark(std::string_view) {}
}  // namespace memtrail
