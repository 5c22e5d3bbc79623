// The traces of a `memtrail run` directory (one .mtr file per process image),
// for tests that read them directly with TraceReader.
#pragma once

#include <dirent.h>

#include <algorithm>
#include <string>
#include <vector>

namespace memtrail::test {

// The traces (*.mtr) of a run directory, full paths sorted by name.
inline std::vector<std::string> run_traces(const std::string& run) {
  std::vector<std::string> out;
  if (DIR* d = opendir(run.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".mtr") == 0)
        out.push_back(run + "/" + name);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The trace of a run of one process; "" when it holds none or several.
inline std::string only_trace(const std::string& run) {
  auto traces = run_traces(run);
  return traces.size() == 1 ? traces[0] : "";
}

}  // namespace memtrail::test
