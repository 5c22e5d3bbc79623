// What a read that did not end cleanly says (trace_file.hpp: describe_read).
#include "memtrail/size.hpp"
#include "memtrail/trace_file.hpp"

namespace memtrail {

ReadOutcome describe_read(const std::string& path, const ReadResult& r, std::string_view done) {
  if (!r.ok) return {true, r.error};  // the reader's error names the file and the offset
  if (r.dropped_bytes > 0)
    return {true, path + ": cut file: dropped " + count_text(r.dropped_bytes, "byte") +
                      " after the last whole chunk"};
  if (!r.complete)
    return {false, path + ": no end-of-trace marker (program killed?); " + std::string(done) + " " +
                       count_text(r.chunks, "whole chunk")};
  return {false, r.warning};  // e.g. bytes after the end marker, ignored
}

}  // namespace memtrail
