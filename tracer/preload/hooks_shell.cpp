// system() and popen(): glibc starts their /bin/sh with its internal
// posix_spawn and `environ`, which neither the exec nor the spawn
// interposers see. The shell inherits the tracing variables through
// `environ`, and what it execs is then its own interposers' business; a
// program that took the variables out of its environment first gets them
// lent for the call (environment_loan.hpp), so the shell and what it runs
// are traced as an exec's image is. Otherwise the real call runs as it is.
#include <atomic>
#include <cerrno>
#include <cstdio>

#include "environment_loan.hpp"
#include "next_symbol.hpp"
#include "program_entry.hpp"

using namespace memtrail::preload;

namespace {

using SystemFn = int (*)(const char*);
using PopenFn = FILE* (*)(const char*, const char*);
std::atomic<SystemFn> g_system{nullptr};
std::atomic<PopenFn> g_popen{nullptr};

// Before the program runs: a lazy dlsym would clear a pending dlerror().
[[gnu::constructor]] void resolve_shell_functions() {
  next_symbol(g_system, "system");
  next_symbol(g_popen, "popen");
}

// The loan, if one was needed, for the length of one call.
class LoanScope {
 public:
  LoanScope() : borrowed_(begin_environment_loan()) {}
  ~LoanScope() {  // the call's errno is the program's
    if (!borrowed_) return;
    int saved = errno;
    end_environment_loan();
    errno = saved;
  }
  LoanScope(const LoanScope&) = delete;
  LoanScope& operator=(const LoanScope&) = delete;

 private:
  bool borrowed_;
};

}  // namespace

extern "C" {

MEMTRAIL_PROGRAM_ENTRY int system(const char* command) {
  SystemFn real = next_symbol(g_system, "system");
  LoanScope loan;
  return real(command);
}

MEMTRAIL_PROGRAM_ENTRY FILE* popen(const char* command, const char* mode) {
  PopenFn real = next_symbol(g_popen, "popen");
  LoanScope loan;
  return real(command, mode);
}

}  // extern "C"
