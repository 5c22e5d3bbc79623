#include "view_args.hpp"

#include "main_window.hpp"
#include "whatif_view.hpp"

namespace memtrail::gui {

void applyViewArgs(MainWindow& window, const GuiArgs& args) {
  std::string error;
  if (auto* whatif = qobject_cast<WhatIfView*>(window.view("whatif"));
      whatif && !args.policy.empty())
    if (auto spec = parse_what_if_spec(args.policy, &error)) whatif->setPolicy(*spec);
}

}  // namespace memtrail::gui
