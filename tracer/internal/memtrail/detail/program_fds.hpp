// The preload's descriptor interposers (dup2, dup3, close) and the
// recorder's own descriptors (tracer/src/private_fd.hpp). Not installed.
#pragma once

#include <mutex>

namespace memtrail::detail {

// Before the program's dup2/dup3 onto `fd`: if `fd` is one of the tracer's,
// it moves elsewhere first, so the program gets the number as it would
// untraced and the tracer never writes through the program's file. The
// caller holds the returned lock across its real call.
std::unique_lock<std::mutex> make_room_for_program_fd(int fd);

// False when `fd` is one of the tracer's: a program's close(fd) fails with
// EBADF, as it would untraced (the number was never the program's).
bool program_may_close(int fd);

}  // namespace memtrail::detail
