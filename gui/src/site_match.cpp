#include "site_match.hpp"

#include <initializer_list>

namespace memtrail::gui {

namespace {

bool any_contains(std::initializer_list<const std::string*> texts, const QString& filter) {
  for (const std::string* text : texts)
    if (QString::fromStdString(*text).contains(filter, Qt::CaseInsensitive)) return true;
  return false;
}

}  // namespace

bool site_matches(const Site& site, const QString& filter) {
  if (filter.isEmpty()) return true;
  for (const Frame& f : site.frames)
    if (any_contains({&f.function, &f.file, &f.module}, filter)) return true;
  return false;
}

bool symbol_matches(const TreeSymbol& symbol, const QString& filter) {
  return filter.isEmpty() || any_contains({&symbol.name, &symbol.file, &symbol.module}, filter);
}

}  // namespace memtrail::gui
