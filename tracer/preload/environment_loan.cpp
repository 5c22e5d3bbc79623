// The environment lent to system() and popen() (environment_loan.hpp).
//
// What the program can tell: while a loan lasts (a whole system() call,
// the command included; a popen() call until it returns), another thread
// that reads the environment (getenv, `environ`) finds the tracing
// variables in it, after the program's own entries. Only in a program that
// took them out, and only during its own system() or popen() call. What a
// thread changes in the environment meanwhile is kept: changes made in the
// lent array go to the program's own array when the loan ends, and an array
// that replaced the lent one (setenv, putenv) stays, less the tracer's
// entries. A fork during a loan gives the child the program's array.
#include "environment_loan.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>

#include "memtrail/detail/reentrancy.hpp"
#include "preload_state.hpp"
#include "tracing_environment.hpp"

extern char** environ;

namespace memtrail::preload {
namespace {

struct Loan {
  char** lent = nullptr;     // what `environ` points to, on the tracer's heap
  char** program = nullptr;  // the program's array, put back when it ends
  int users = 0;             // system() and popen() calls that use it now
};
Loan g_loan;
std::atomic<bool> g_loan_locked{false};

// Held for a few loads and stores (no heap, no other lock), so fork's
// prepare handler takes it too: a child never inherits it held, nor a
// loan half made.
class LoanLock {
 public:
  LoanLock() {
    while (g_loan_locked.exchange(true, std::memory_order_acquire)) sched_yield();
  }
  ~LoanLock() { g_loan_locked.store(false, std::memory_order_release); }
  LoanLock(const LoanLock&) = delete;
  LoanLock& operator=(const LoanLock&) = delete;
};

char** tracer_heap_array(std::size_t entries) {
  detail::ScopedInternal internal;
  return static_cast<char**>(std::malloc(entries * sizeof(char*)));
}

void free_on_tracer_heap(char** array) {
  detail::ScopedInternal internal;
  std::free(array);
}

std::size_t count_entries(char* const* env) {
  std::size_t n = 0;
  while (env != nullptr && env[n] != nullptr) ++n;
  return n;
}

// Another thread changed the lent array in place while the loan lasted
// (unsetenv moves the later entries down, setenv of a name already there
// replaces its pointer): the program's own array gets the same change, as
// it would have untraced. Written only when something changed (the
// program's array may be read-only), and only where it fits (in-place
// changes never grow an array).
void give_back_changes(char** lent, char** program) {
  const std::size_t had = count_entries(program);
  std::size_t kept = 0;
  bool changed = false;
  for (std::size_t i = 0; lent[i] != nullptr; ++i) {
    if (is_tracer_entry(lent[i])) continue;
    changed |= kept >= had || lent[i] != program[kept];
    ++kept;
  }
  changed |= kept != had;
  if (!changed || kept > had) return;
  std::size_t k = 0;
  for (std::size_t i = 0; lent[i] != nullptr; ++i)
    if (!is_tracer_entry(lent[i])) program[k++] = lent[i];
  program[k] = nullptr;
}

// Another thread's setenv or putenv replaced the lent array by a copy
// (glibc copies an array it did not make): that copy is the program's
// environment from now on, less the tracer's entries.
void remove_tracer_entries(char** env) {
  std::size_t k = 0;
  for (std::size_t i = 0; env != nullptr && env[i] != nullptr; ++i)
    if (!is_tracer_entry(env[i])) env[k++] = env[i];
  if (env != nullptr) env[k] = nullptr;
}

// Ends the loan now (the lock held): the program's array back in `environ`.
// Returns the lent array, for the caller to free after the lock.
char** close_loan() {
  char** lent = g_loan.lent;
  if (environ == lent) {
    give_back_changes(lent, g_loan.program);
    environ = g_loan.program;
  } else {
    remove_tracer_entries(environ);
  }
  g_loan = {};
  return lent;
}

enum class Lending { joined, lent, not_needed, needs_room };

// One try, the lock held: join the loan in progress, or lend `built` (room
// for `room` entries) if `environ` lacks the tracing variables. Sets
// `*wanted` when `built` is too small.
Lending try_lend(char** built, std::size_t room, std::size_t* wanted) {
  if (g_loan.users > 0 && environ == g_loan.lent) {
    ++g_loan.users;
    return Lending::joined;
  }
  // A loan whose array the program replaced meanwhile: its copy holds the
  // variables (and loses them when that loan ends).
  if (g_loan.users > 0 || !environment_lacks_tracing(environ)) return Lending::not_needed;
  *wanted = traced_environment_entries(environ);
  if (built == nullptr || *wanted > room) return Lending::needs_room;
  build_traced_environment(environ, built, nullptr);
  g_loan = {built, environ, 1};
  environ = built;
  return Lending::lent;
}

void lock_before_fork() {
  while (g_loan_locked.exchange(true, std::memory_order_acquire)) sched_yield();
}

void unlock_after_fork_in_parent() {
  g_loan_locked.store(false, std::memory_order_release);
}

// No system() or popen() call runs in the child: a loan its parent had
// ends here (its lent array stays, a copy, on the child's tracer heap).
void end_parents_loan_in_child() {
  if (g_loan.users > 0) close_loan();
  g_loan_locked.store(false, std::memory_order_release);
}

[[gnu::constructor]] void register_loan_fork_handlers() {
  pthread_atfork(&lock_before_fork, &unlock_after_fork_in_parent, &end_parents_loan_in_child);
}

}  // namespace

bool begin_environment_loan() {
  if (!following_new_images() || getpid() != g_traced_pid) return false;
  // The array is allocated without the lock (fork's handlers take the
  // tracer heap's locks too), then filled with it; a larger one is asked
  // for if the environment grew in between.
  char** built = nullptr;
  std::size_t room = 0;
  while (true) {
    std::size_t wanted = 0;
    Lending outcome;
    {
      LoanLock lock;
      outcome = try_lend(built, room, &wanted);
    }
    if (outcome == Lending::lent) return true;
    free_on_tracer_heap(built);
    if (outcome != Lending::needs_room) return outcome == Lending::joined;
    room = wanted + 8;
    built = tracer_heap_array(room);
    if (built == nullptr) return false;
  }
}

void end_environment_loan() {
  char** lent = nullptr;
  {
    LoanLock lock;
    if (--g_loan.users > 0) return;
    lent = close_loan();
  }
  free_on_tracer_heap(lent);
}

}  // namespace memtrail::preload
