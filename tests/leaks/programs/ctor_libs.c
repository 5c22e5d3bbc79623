// Expected (Valgrind memcheck): definitely lost 1 block / 64 B; indirectly
// lost 0; possibly lost 0; still reachable 1 block / 5,000 B.
// memtrail: direct 1 / 64, indirect 0, reachable 1 / 5000.
// LSan: Direct 1 / 64.
// Both blocks are allocated by constructors of linked shared libraries
// (libctorkeep.so keeps its 5000 B in a global, libctorleak.so drops its
// 64 B), which run before the program's own code and before a preloaded
// tracer's constructor.
int ctor_keep_ready(void);
int ctor_leak_ran(void);

int main(void) {
  return ctor_keep_ready() && ctor_leak_ran() ? 0 : 1;
}
