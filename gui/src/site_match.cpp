#include "site_match.hpp"

namespace memtrail::gui {

bool site_matches(const Site& site, const QString& filter) {
  if (filter.isEmpty()) return true;
  for (const Frame& f : site.frames)
    for (const std::string* text : {&f.function, &f.file, &f.module})
      if (QString::fromStdString(*text).contains(filter, Qt::CaseInsensitive)) return true;
  return false;
}

}  // namespace memtrail::gui
