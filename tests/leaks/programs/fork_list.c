// Issue 27 item 3: the parent builds a 3-node list held by a global and
// forks; the child hangs 100 new nodes on the inherited list (the first new
// node hangs on the parent's last node) and exits. Valgrind
// --trace-children=yes: the parent has 3 reachable blocks (3 x 32 B), the
// child 103 (3,296 B); nothing lost in either.
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leak_common.h"

struct node {
  struct node* next;
  char payload[24];
};

struct node* g_head;  // not static: the stores stay at -O2

static struct node* append(struct node* tail) {
  struct node* n = calloc(1, sizeof *n);
  tail->next = n;
  return n;
}

int main(void) {
  g_head = calloc(1, sizeof *g_head);
  struct node* tail = append(append(g_head));
  touch(g_head);
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    for (int i = 0; i < 100; ++i) tail = append(tail);
    touch(g_head);
    tail = NULL;
    scrub_stack();
    exit(0);
  }
  tail = NULL;
  int status = 0;
  waitpid(child, &status, 0);
  scrub_stack();
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
