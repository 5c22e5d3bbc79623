// Deterministic mutation driver for fuzz_replay.cpp, for machines without
// libFuzzer and for ctest: `fuzz_replay_driver SECONDS [SEED]` mutates a few
// seed scripts (byte flips, cut and spliced lines, inserted operations and
// absurd sizes) and feeds each mutant to LLVMFuzzerTestOneInput until the
// time is up. A finding aborts (the mutant is printed first; rerun it with
// `--input FILE`); a clean run prints the number of inputs and exits 0.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

const char* const kSeeds[] = {
    "A = malloc 1000\nstats\nB = malloc 3 MiB\nC = malloc 12MiB\nfree B\nstats\nempty_cache\n",
    "A = malloc 25000000 stream=1\nrecord_stream A 2\nfree A\nsynchronize 2\nsynchronize\nstats\n",
    "# comment\nX = malloc 1.5 GiB\nY = malloc 512\nfree X\nX = malloc 2GiB\nfree Y\nfree X\n",
    "A = malloc 9223372036854775807\nB = malloc 1\nstats\nfree B\nempty_cache\nstats\n",
};

// Pieces that reach the parser's and the pools' edges.
const char* const kTokens[] = {
    "A = malloc ",
    "B = malloc ",
    "free A\n",
    "free B\n",
    "stats\n",
    "empty_cache\n",
    "synchronize\n",
    "synchronize 3\n",
    "record_stream A 3\n",
    " stream=2",
    "18446744073709551615",
    "9223372036854775807",
    "9223372036854775808",
    "4611686018427387904",
    "0",
    "1",
    "511",
    "513",
    "1048577",
    "20971521",
    " KiB",
    " EiB",
    " PiB",
    "#",
    "\n",
    "\r\n",
    "=",
    "\t",
    "-1",
};

std::string mutate(std::string s, std::mt19937_64& rng) {
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % (n ? n : 1)); };
  const int steps = 1 + static_cast<int>(rng() % 6);
  for (int i = 0; i < steps; ++i) {
    switch (rng() % 6) {
      case 0:  // flip a byte
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1 + rng() % 255);
        break;
      case 1:  // insert a token
        s.insert(pick(s.size() + 1), kTokens[pick(std::size(kTokens))]);
        break;
      case 2:  // erase a range
        if (!s.empty()) {
          std::size_t at = pick(s.size());
          s.erase(at, 1 + pick(16));
        }
        break;
      case 3:  // duplicate a range (repeated lines, names bound twice)
        if (!s.empty()) {
          std::size_t at = pick(s.size());
          s.insert(pick(s.size() + 1), s.substr(at, 1 + pick(64)));
        }
        break;
      case 4:  // splice another seed
        s += kSeeds[pick(std::size(kSeeds))];
        break;
      default:  // a line of a new operation with an edge size
        s += std::string(kTokens[pick(2)]) + kTokens[10 + pick(9)] + "\n";
        break;
    }
  }
  if (s.size() > 8192) s.resize(8192);
  return s;
}

// The input being run, written out if it aborts (the finding to reproduce).
std::string current;

extern "C" void print_finding(int sig) {
  const char head[] = "fuzz_replay_driver: finding; the input was:\n";
  (void)!write(2, head, sizeof head - 1);
  (void)!write(2, current.data(), current.size());
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: fuzz_replay_driver SECONDS [SEED] | --input FILE\n");
    return 2;
  }
  if (std::string(argv[1]) == "--input" && argc == 3) {  // rerun one finding
    std::ifstream in(argv[2], std::ios::binary);
    current.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(current.data()), current.size());
    return 0;
  }
  const double seconds = std::atof(argv[1]);
  std::mt19937_64 rng(argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 15);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::uint64_t inputs = 0;
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE}) std::signal(sig, print_finding);
  std::vector<std::string> corpus(std::begin(kSeeds), std::end(kSeeds));
  while (std::chrono::steady_clock::now() < end) {
    current = mutate(corpus[rng() % corpus.size()], rng);
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(current.data()), current.size());
    ++inputs;
    if (corpus.size() < 256 && rng() % 8 == 0) corpus.push_back(current);
  }
  std::fprintf(stderr, "fuzz_replay_driver: %llu inputs in %.0f s, no finding\n",
               static_cast<unsigned long long>(inputs), seconds);
  return 0;
}
