/* The plugin runpath_host finds through its RUNPATH only. */
int runpath_answer(void) {
  return 42;
}
