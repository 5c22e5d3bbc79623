#include "report_frames.hpp"

#include "memtrail/report_json.hpp"
#include "site_json.hpp"

namespace memtrail::detail {

void ReportFrames::add(SiteId site) {
  const FrameList& frames = at(a_.sites, site).frames;
  if (!shared(frames)) return;
  if (id_of_.empty()) id_of_.assign(a_.frame_table->frames.size(), 0);
  for (std::uint32_t index : frames.indices()) {
    if (id_of_[index] != 0) continue;
    order_.push_back(index);
    id_of_[index] = static_cast<std::uint32_t>(order_.size());
  }
}

nlohmann::json ReportFrames::site(SiteId site) const {
  nlohmann::json j = site_counters_json(a_, site);
  const FrameList& frames = at(a_.sites, site).frames;
  if (!shared(frames) || id_of_.empty()) {
    j["stack"] = frames_to_json(frames);
    return j;
  }
  nlohmann::json ids = nlohmann::json::array();
  for (std::uint32_t index : frames.indices()) ids.push_back(id_of_[index] - 1);
  j["frames"] = std::move(ids);
  return j;
}

}  // namespace memtrail::detail
