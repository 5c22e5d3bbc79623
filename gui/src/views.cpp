#include "views.hpp"

#include "call_tree_cache.hpp"
#include "call_tree_view.hpp"
#include "caller_callee_view.hpp"
#include "compare_view.hpp"
#include "flame_view.hpp"
#include "fragmentation_view.hpp"
#include "histogram_view.hpp"
#include "leaks_view.hpp"
#include "main_window.hpp"
#include "processes_view.hpp"
#include "scopes_view.hpp"
#include "site_charts_view.hpp"
#include "summary_view.hpp"
#include "timeline_view.hpp"
#include "whatif_view.hpp"

namespace memtrail::gui {

void addAllViews(MainWindow& window) {
  auto* summary = new SummaryView;
  window.addView("summary", QObject::tr("Summary"), summary);
  // The summary lists the processes of a run directory.
  QObject::connect(&window, &MainWindow::runChanged, summary,
                   [summary, &window] { summary->setRun(window.run()); });
  window.addView("timeline", QObject::tr("Timeline"), new TimelineView);
  window.addView("leaks", QObject::tr("Leaks"), new LeaksView);
  // One call tree per range and direction for both tabs that draw it.
  auto* trees = new CallTreeCache(&window);
  window.addView("tree", QObject::tr("Call tree"), new CallTreeView(trees));
  window.addView("flame", QObject::tr("Flame graph"), new FlameView(trees));
  window.addView("callee", QObject::tr("Caller/Callee"), new CallerCalleeView);
  window.addView("sites", QObject::tr("Sites over time"), new SiteChartsView);
  window.addView("histogram", QObject::tr("Histograms"), new HistogramView);
  window.addView("fragmentation", QObject::tr("Fragmentation"), new FragmentationView);
  window.addView("scopes", QObject::tr("Scopes"), new ScopesView);
  window.addView("whatif", QObject::tr("What-if"), new WhatIfView);
  addCompareView(window, trees);  // and File → Compare with...; A's tree from `trees`
  // A run directory's processes; a double click opens one.
  auto* processes = new ProcessesView;
  window.addView("processes", QObject::tr("Processes"), processes);
  QObject::connect(&window, &MainWindow::runChanged, processes,
                   [processes, &window] { processes->setRun(window.run()); });
  // The process the window loads gets its figures from its Session.
  QObject::connect(&window, &MainWindow::loadStarted, processes,
                   [processes](const QString& file) { processes->setLoading(file.toStdString()); });
  QObject::connect(&window, &MainWindow::loadFailed, processes,
                   [processes] { processes->setLoading({}); });
  QObject::connect(&window, &MainWindow::loadCancelled, processes,
                   [processes] { processes->setLoading({}); });
  QObject::connect(processes, &ProcessesView::processChosen, &window,
                   [&window](std::size_t i) { window.openProcess(i); });
}

}  // namespace memtrail::gui
