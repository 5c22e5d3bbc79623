// memtrail-replay: `memtrail replay`, in a binary of its own so that the
// analyzer CLI does not link the allocator stack and the recorder.
#include "cmd_replay.hpp"

int main(int argc, char** argv) {
  return memtrail::cli::cmd_replay(argc, argv);
}
