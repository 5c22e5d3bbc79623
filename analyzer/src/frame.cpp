// The interned frame storage of frame.hpp.
#include "memtrail/frame.hpp"

namespace memtrail {

const FrameTable::Run* FrameTable::find(std::uint64_t ip) const {
  auto it = by_ip.find(ip);
  return it == by_ip.end() ? nullptr : &it->second;
}

FrameTable::Run FrameTable::intern(std::uint64_t ip, const std::vector<Frame>& ip_frames) {
  Run run{static_cast<std::uint32_t>(frames.size()), static_cast<std::uint32_t>(ip_frames.size())};
  frames.insert(frames.end(), ip_frames.begin(), ip_frames.end());
  by_ip.emplace(ip, run);
  return run;
}

FrameList::FrameList(std::vector<Frame> frames) {
  auto table = std::make_shared<FrameTable>();
  table->lists.resize(frames.size());
  for (std::size_t i = 0; i < frames.size(); ++i) table->lists[i] = static_cast<std::uint32_t>(i);
  count_ = static_cast<std::uint32_t>(frames.size());
  table->frames = std::move(frames);
  table_ = std::move(table);
}

}  // namespace memtrail
