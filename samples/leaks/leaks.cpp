// leaks: a program whose leaks are known exactly, to check leak
// classification end to end. README.md lists the expected numbers.
//
// Every leaked pointer is dropped inside a function of its own, and the dead
// stack is scrubbed before exit, so no stale copy of a leaked pointer can be
// mistaken for a root (a conservative scanner would rightly count one).
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace {

#define NOINLINE __attribute__((noinline))

// Launders a pointer so the compiler cannot drop an allocation we leak on
// purpose (it may elide malloc/free pairs and unused new expressions).
NOINLINE void keep(void* p) {
  asm volatile("" : : "r"(p) : "memory");
}

// --- direct leaks --------------------------------------------------------

NOINLINE void leak_plain_mallocs() {  // 3 blocks, 600 bytes
  keep(std::malloc(100));
  keep(std::malloc(200));
  keep(std::malloc(300));
}

NOINLINE void leak_calloc() {  // 1 block, 640 bytes
  keep(std::calloc(10, 64));
}

NOINLINE void leak_realloc_chain() {  // 1 block, 5000 bytes (the chain's last)
  void* p = std::malloc(16);
  keep(p);
  p = std::realloc(p, 1000);
  keep(p);
  p = std::realloc(p, 5000);
  keep(p);
}

NOINLINE void leak_posix_memalign() {  // 1 block, 256 bytes
  void* p = nullptr;
  if (posix_memalign(&p, 64, 256) != 0) std::abort();
  keep(p);
}

NOINLINE void leak_new_array() {  // 1 block, 200 bytes
  keep(new int[50]);
}

NOINLINE void leak_strdup() {  // 1 block, 21 bytes ("memtrail leak sample" + NUL)
  keep(strdup("memtrail leak sample"));
}

// A linked list whose head is dropped: the head is a direct leak (32 bytes),
// the 9 nodes behind it are indirect leaks (9 x 32 = 288 bytes).
struct Node {
  Node* next;
  char payload[24];
};
static_assert(sizeof(Node) == 32);

NOINLINE void leak_linked_list() {
  Node* head = nullptr;
  for (int i = 0; i < 10; ++i) {
    auto* n = static_cast<Node*>(std::malloc(sizeof(Node)));
    n->next = head;
    std::memset(n->payload, 'a' + i, sizeof n->payload);
    head = n;
  }
  keep(head);
}

// 4 threads, each leaking one 512-byte block: 4 blocks, 2048 bytes.
void* thread_leaker(void*) {
  keep(std::malloc(512));
  return nullptr;
}

NOINLINE void leak_in_threads() {
  pthread_t threads[4];
  for (auto& t : threads) pthread_create(&t, nullptr, thread_leaker, nullptr);
  for (auto& t : threads) pthread_join(t, nullptr);
}

// --- reachable at exit ---------------------------------------------------

}  // namespace

// External linkage, and laundered after the stores: the compiler must not
// drop these allocations as dead stores.
struct Table {
  void* rows[4];
};
Table* g_table;              // 1 block of 32 bytes + 4 rows of 64 bytes
char* g_interior;            // points 40 bytes into a 100-byte block (interior)
thread_local void* t_cache;  // main thread's static TLS: a 96-byte block
std::FILE* g_devnull;        // an open stream: its FILE and buffer stay reachable

namespace {

NOINLINE void make_reachable() {
  g_table = static_cast<Table*>(std::malloc(sizeof(Table)));
  for (auto& row : g_table->rows) row = std::malloc(64);
  g_interior = static_cast<char*>(std::malloc(100)) + 40;
  t_cache = std::malloc(96);
  keep(&g_table);
  keep(&g_interior);
  keep(&t_cache);
}

// A thread still running at exit, holding a 777-byte block on its stack.
pthread_mutex_t g_parked_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_parked_cond = PTHREAD_COND_INITIALIZER;
bool g_parked_ready = false;

void* parked_thread(void*) {
  void* volatile held = std::malloc(777);
  pthread_mutex_lock(&g_parked_lock);
  g_parked_ready = true;
  pthread_cond_broadcast(&g_parked_cond);
  for (;;) pthread_cond_wait(&g_parked_cond, &g_parked_lock);  // parked until exit
  keep(held);
  return nullptr;
}

NOINLINE void start_parked_thread() {
  pthread_t t;
  pthread_create(&t, nullptr, parked_thread, nullptr);
  pthread_detach(t);
  pthread_mutex_lock(&g_parked_lock);
  while (!g_parked_ready) pthread_cond_wait(&g_parked_cond, &g_parked_lock);
  pthread_mutex_unlock(&g_parked_lock);
}

// --- temporaries ---------------------------------------------------------

NOINLINE void make_temporaries() {  // exactly 25 temporary allocations
  for (int i = 0; i < 25; ++i) {
    void* p = std::malloc(static_cast<std::size_t>(32 + i));
    keep(p);
    std::free(p);
  }
}

NOINLINE void scrub_stack() {
  volatile char buffer[64 * 1024];
  for (auto& c : buffer) c = 0;
}

}  // namespace

int main() {
  g_devnull = std::fopen("/dev/null", "w");
  if (g_devnull == nullptr) return 1;
  std::fprintf(g_devnull, "buffered\n");  // allocates the stream's buffer

  leak_plain_mallocs();
  leak_calloc();
  leak_realloc_chain();
  leak_posix_memalign();
  leak_new_array();
  leak_strdup();
  leak_linked_list();
  leak_in_threads();
  make_reachable();
  start_parked_thread();
  make_temporaries();
  scrub_stack();

  std::printf("leaks: done\n");  // allocates stdout's buffer
  return 0;
}
