// dlopen'd by loader_lock_forever: its constructor keeps a 48-byte block in
// its frame, says so on the pipe named by LOADER_LOCK_FD, and never returns,
// so the thread that called dlopen holds the loader's lock forever.
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void block_forever(void) {
  const char* fd = getenv("LOADER_LOCK_FD");
  if (fd == NULL) return;
  void* volatile held = malloc(48);
  memset(held, 7, 48);
  (void)!write(atoi(fd), "c", 1);
  for (;;) pause();
}
