// What multiprocessing.Pool's terminate() does to a worker that is still
// starting: the parent forks children and sends each SIGTERM at once, while
// the child may still be inside the recorder's fork handler (its trace file
// made, its session not yet running). Each child holds a block it got from
// the parent, so its trace begins with inherited blocks. Every child must
// die of SIGTERM with a whole trace (the signal recorded), as one that is
// stopped later does.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILDREN 12

static void* volatile kept;

int main(void) {
  kept = malloc(4321);
  int killed = 0;
  for (int i = 0; i < CHILDREN; ++i) {
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) {
      for (;;) pause();
    }
    kill(child, SIGTERM);
    int status = 0;
    if (waitpid(child, &status, 0) == child && WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)
      ++killed;
  }
  printf("%d of %d children died of SIGTERM\n", killed, CHILDREN);
  return killed == CHILDREN ? 0 : 1;
}
