#include "whatif_view.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QShowEvent>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>

#include "format.hpp"
#include "memtrail/size.hpp"

namespace memtrail::gui {

namespace {

QString confPlaceholder(const QString& allocator) {
  if (allocator == "caching")
    return QObject::tr("PYTORCH_CUDA_ALLOC_CONF, e.g. max_split_size_mb:128");
  if (allocator == "bfc") return QObject::tr("e.g. preallocate:False,memory_fraction:0.9");
  if (allocator == "workspace") return QObject::tr("ND4J fields, e.g. policyAllocation:STRICT");
  return QObject::tr("the malloc policy takes no conf");
}

QString specText(const WhatIfSpec& s) {
  QString text = QString::fromStdString(s.allocator);
  if (!s.conf.empty()) text += QStringLiteral(" (%1)").arg(QString::fromStdString(s.conf));
  if (s.capacity) text += QObject::tr(" on a %1 device").arg(bytesText(s.capacity));
  if (!s.mark.empty())
    text += QObject::tr(" over the iterations of '%1'").arg(QString::fromStdString(s.mark));
  return text;
}

// "+12.5 %" of replayed against recorded.
QString changeText(std::uint64_t recorded, std::uint64_t replayed) {
  if (recorded == 0) return {};
  const double pct = (static_cast<double>(replayed) - static_cast<double>(recorded)) /
                     static_cast<double>(recorded) * 100;
  return QStringLiteral("%1%2 %").arg(pct >= 0 ? "+" : "−").arg(std::abs(pct), 0, 'f', 1);
}

WhatIfChart::Line lineOf(QString name, QColor colour, int width, const Envelope& e) {
  return {std::move(name), colour,    width, e.t0, std::max<std::uint64_t>(e.step_ns, 1),
          e.max,           e.has_data};
}

WhatIfChart::Line lineOf(QString name, QColor colour, int width, const LevelSeries& s) {
  return {std::move(name), colour, width, s.t0, s.step_ns, s.max, s.has_data};
}

// The recorded figures of every pool named `name` together: replay takes the
// alloc/free sequence of all of them (a name may be reused by a pool made
// after another one was destroyed).
struct Recorded {
  std::vector<const PoolStats*> pools;
  bool segments = false;
  std::uint64_t peak_reserved = 0, peak_used = 0, final_reserved = 0, final_used = 0;
  std::uint64_t allocations = 0, frees = 0, ooms = 0;
};

Recorded recordedOf(const Analysis& a, const std::string& name) {
  Recorded r;
  for (const PoolStats& p : a.pools) {
    if (p.info.name != name) continue;
    r.pools.push_back(&p);
    r.segments = r.segments || p.has_segments;
    r.peak_reserved = std::max(r.peak_reserved, p.peak_reserved_bytes);
    r.peak_used = std::max(r.peak_used, p.peak_used_bytes);
    r.final_reserved += p.final_reserved_bytes;
    r.final_used += p.final_used_bytes;
    r.allocations += p.allocations;
    r.frees += p.frees;
    r.ooms += p.ooms;
  }
  return r;
}

// The envelopes of pools sharing a name, summed bucket by bucket.
void addEnvelope(Envelope& sum, const Envelope& e) {
  if (sum.max.empty()) {
    sum = e;
    return;
  }
  for (std::size_t i = 0; i < sum.max.size() && i < e.max.size(); ++i)
    if (e.has_data[i]) {
      sum.max[i] = (sum.has_data[i] ? sum.max[i] : 0) + e.max[i];
      sum.has_data[i] = 1;
    }
}

}  // namespace

WhatIfView::WhatIfView(QWidget* parent)
    : SessionView(parent),
      pool_(new QComboBox),
      allocator_(new QComboBox),
      conf_(new QLineEdit),
      capacity_(new QLineEdit),
      mark_label_(new QLabel(tr("Iteration"))),
      mark_(new QComboBox),
      run_(new QPushButton(tr("Replay"))),
      cancel_(new QPushButton(tr("Cancel"))),
      heading_(new QLabel),
      chart_(new WhatIfChart),
      table_(new QTreeWidget) {
  allocator_->addItems({"caching", "bfc", "malloc", "workspace"});
  allocator_->setToolTip(
      tr("caching: PyTorch's CUDA caching allocator · bfc: XLA's BFC arena · malloc: no "
         "caching · workspace: ND4J's workspace over each iteration"));
  pool_->setMinimumContentsLength(14);
  pool_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  conf_->setMinimumWidth(260);
  capacity_->setPlaceholderText(tr("unbounded"));
  capacity_->setToolTip(tr("Size of the virtual device (e.g. 8GiB): allocations past it are OOMs"));
  capacity_->setMaximumWidth(110);
  mark_->setEditable(true);
  mark_->setMinimumContentsLength(10);
  cancel_->setEnabled(false);
  heading_->setWordWrap(true);
  heading_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  table_->setRootIsDecorated(false);
  table_->setUniformRowHeights(true);
  table_->setHeaderLabels({tr("Whole trace"), tr("Recorded"), tr("Replayed"), tr("Change")});
  table_->header()->setStretchLastSection(true);

  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("Pool")));
  controls->addWidget(pool_);
  controls->addWidget(new QLabel(tr("Policy")));
  controls->addWidget(allocator_);
  controls->addWidget(new QLabel(tr("Conf")));
  controls->addWidget(conf_, 1);
  controls->addWidget(new QLabel(tr("Capacity")));
  controls->addWidget(capacity_);
  controls->addWidget(mark_label_);
  controls->addWidget(mark_);
  controls->addWidget(run_);
  controls->addWidget(cancel_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addWidget(heading_);
  layout->addWidget(chart_, 1);
  layout->addWidget(table_);

  connect(allocator_, &QComboBox::currentTextChanged, this, [this] { allocatorChanged(); });
  connect(run_, &QPushButton::clicked, this, [this] { replay(); });
  connect(conf_, &QLineEdit::returnPressed, this, [this] { replay(); });
  connect(cancel_, &QPushButton::clicked, this, [this] {
    model_.cancel();
    pending_ = false;
    cancel_->setEnabled(false);
    heading_->setText(tr("Replay cancelled."));
    emit ready();
  });
  connect(&model_, &WhatIfModel::finished, this, [this] {
    pending_ = false;
    cancel_->setEnabled(false);
    showResult();
    emit ready();
  });
  allocatorChanged();
  setSession(nullptr);
}

void WhatIfView::allocatorChanged() {
  const QString a = allocator_->currentText();
  conf_->setPlaceholderText(confPlaceholder(a));
  conf_->setEnabled(a != "malloc");
  capacity_->setEnabled(a != "workspace");
  mark_label_->setVisible(a == "workspace");
  mark_->setVisible(a == "workspace");
}

void WhatIfView::setPolicy(const WhatIfSpec& spec) {
  showSpec(spec);
  replay_on_load_ = true;
}

void WhatIfView::showSpec(const WhatIfSpec& spec) {
  allocator_->setCurrentText(QString::fromStdString(spec.allocator));
  conf_->setText(QString::fromStdString(spec.conf));
  capacity_->setText(spec.capacity ? QString::number(spec.capacity) : QString());
  if (!spec.pool.empty()) {
    if (pool_->findText(QString::fromStdString(spec.pool)) < 0)
      pool_->addItem(QString::fromStdString(spec.pool));
    pool_->setCurrentText(QString::fromStdString(spec.pool));
  }
  if (!spec.mark.empty()) mark_->setCurrentText(QString::fromStdString(spec.mark));
}

WhatIfSpec WhatIfView::spec() const {
  WhatIfSpec s;
  s.allocator = allocator_->currentText().toStdString();
  s.pool = pool_->currentText().toStdString();
  s.conf = s.allocator == "malloc" ? std::string() : conf_->text().trimmed().toStdString();
  if (s.allocator != "workspace")
    s.capacity = parse_size(capacity_->text().trimmed().toStdString()).value_or(0);
  if (s.allocator == "workspace") s.mark = mark_->currentText().trimmed().toStdString();
  return s;
}

void WhatIfView::fillPools() {
  const QString wanted = pool_->currentText();
  pool_->clear();
  if (!session_) return;
  for (const PoolStats& p : session_->whole().pools)
    if (pool_->findText(QString::fromStdString(p.info.name)) < 0)
      pool_->addItem(QString::fromStdString(p.info.name));
  const QString fallback = QString::fromStdString(default_what_if_pool(session_->whole()));
  pool_->setCurrentText(!wanted.isEmpty() && pool_->findText(wanted) >= 0 ? wanted : fallback);
}

void WhatIfView::fillMarks() {
  const QString wanted = mark_->currentText();
  mark_->clear();
  if (!session_) return;
  for (const ScopeStats& s : session_->whole().scopes)
    if (mark_->findText(QString::fromStdString(s.info.name)) < 0)
      mark_->addItem(QString::fromStdString(s.info.name));
  if (!wanted.isEmpty()) mark_->setCurrentText(wanted);
}

void WhatIfView::setSession(std::shared_ptr<const Session> session) {
  model_.cancel();
  pending_ = false;
  session_ = std::move(session);
  table_->clear();
  chart_->setLines({});
  if (!session_) {
    heading_->setText(
        tr("Open a trace to replay one of its pools through another allocator "
           "policy."));
    chart_->setEmptyText(tr("No trace."));
    return;
  }
  const Summary& s = session_->whole().summary;
  t0_ = s.first_event_ns;
  t1_ = s.last_event_ns;
  fillPools();
  fillMarks();
  showRecordedOnly();
  if (replay_on_load_ || isVisible()) replay();
}

void WhatIfView::setRange(std::uint64_t t0, std::uint64_t t1, std::shared_ptr<const Analysis>) {
  if (t0 == t0_ && t1 == t1_) return;
  t0_ = t0;
  t1_ = t1;
  // The replay is of the whole trace; its buckets are of the range.
  if (pending_ || model_.result())
    replay();
  else
    showRecordedOnly();
}

void WhatIfView::showEvent(QShowEvent* event) {
  SessionView::showEvent(event);
  if (session_ && !pending_ && !model_.result()) replay();
}

bool WhatIfView::isReady() const {
  return !session_ || !pending_;
}

void WhatIfView::replay() {
  if (!session_) return;
  const WhatIfSpec s = spec();
  // A capacity that does not parse is said, not replayed as unbounded.
  const std::string capacity = capacity_->text().trimmed().toStdString();
  std::string why;
  if (s.allocator != "workspace" && !capacity.empty() && !parse_size(capacity, &why)) {
    heading_->setText(
        tr("Capacity '%1': %2").arg(QString::fromStdString(capacity), QString::fromStdString(why)));
    return;
  }
  pending_ = true;
  cancel_->setEnabled(true);
  heading_->setText(tr("Replaying pool '%1' through %2 over the whole trace…")
                        .arg(QString::fromStdString(s.pool), specText(s)));
  chart_->setRange(t0_, t1_);
  model_.start(session_->path(), s, t0_, t1_, static_cast<std::size_t>(chart_->plotWidth()));
}

std::vector<WhatIfChart::Line> WhatIfView::recordedLines() const {
  std::vector<WhatIfChart::Line> lines;
  if (!session_) return lines;
  const Recorded rec = recordedOf(session_->whole(), pool_->currentText().toStdString());
  if (rec.pools.empty()) return lines;
  const auto points = static_cast<std::size_t>(chart_->plotWidth());
  const std::vector<SeriesInfo> known = session_->series_list();
  auto has = [&](const SeriesId& id) {
    return std::any_of(known.begin(), known.end(), [&](const SeriesInfo& i) { return i.id == id; });
  };
  Envelope reserved, used;
  for (const PoolStats* p : rec.pools) {
    const SeriesId r{SeriesKind::pool_reserved, PoolId{p->info.id}};
    if (p->has_segments && has(r)) addEnvelope(reserved, session_->series(r, t0_, t1_, points));
    const SeriesId u{SeriesKind::pool_used, PoolId{p->info.id}};
    if (has(u)) addEnvelope(used, session_->series(u, t0_, t1_, points));
  }
  if (!reserved.max.empty())
    lines.push_back(lineOf(tr("recorded reserved"), QColor(0x1f, 0x77, 0xb4), 2, reserved));
  if (!used.max.empty())
    lines.push_back(lineOf(tr("recorded used"), QColor(0x99, 0x99, 0x99), 1, used));
  return lines;
}

void WhatIfView::showRecordedOnly() {
  chart_->setRange(t0_, t1_);
  chart_->setLines(recordedLines());
  heading_->setText(
      tr("Pick a pool and a policy, then Replay: the pool's allocations and frees "
         "are driven through that allocator over a virtual device (memtrail "
         "replay) and its reserved bytes drawn beside the recorded ones."));
}

void WhatIfView::showResult() {
  const auto& r = model_.result();
  if (!r) return;
  chart_->setRange(t0_, t1_);
  if (!r->error.empty()) {
    heading_->setText(tr("Replay of pool '%1' through %2 failed: %3")
                          .arg(QString::fromStdString(r->spec.pool), specText(r->spec),
                               QString::fromStdString(r->error)));
    chart_->setLines(recordedLines());
    table_->clear();
    return;
  }
  std::vector<WhatIfChart::Line> lines = recordedLines();
  lines.push_back(
      lineOf(tr("replayed reserved (%1)").arg(QString::fromStdString(r->spec.allocator)),
             QColor(0xff, 0x7f, 0x0e), 2, r->reserved));
  chart_->setLines(std::move(lines));
  const Recorded rec = recordedOf(session_->whole(), r->spec.pool);
  QString text;
  if (r->workspace) {
    const auto& w = r->workspace_result;
    text =
        tr("Pool '%1' replayed through %2: %3 iterations; system allocations per iteration "
           "after learning %4 recorded, %5 with the workspace.")
            .arg(QString::fromStdString(r->spec.pool), specText(r->spec), countText(w.iterations))
            .arg(w.recorded_per_iteration_after_learning(), 0, 'f', 2)
            .arg(w.system_per_iteration_after_learning(), 0, 'f', 2);
  } else {
    const std::uint64_t recorded = rec.segments ? rec.peak_reserved : 0;
    text = tr("Pool '%1' replayed through %2: peak reserved %3%4, %5 OOMs.")
               .arg(QString::fromStdString(r->spec.pool), specText(r->spec),
                    bytesText(r->replay.peak_reserved),
                    recorded ? tr(" (recorded %1, %2)")
                                   .arg(bytesText(recorded),
                                        changeText(recorded, r->replay.peak_reserved))
                             : QString())
               .arg(countText(r->replay.ooms));
  }
  if (rec.pools.size() > 1)
    text += tr(" %1 pools are named so: their figures are together.").arg(rec.pools.size());
  text += tr(" The whole trace is replayed; the chart shows the range.");
  if (!r->warning.empty()) text += tr(" Warning: %1").arg(QString::fromStdString(r->warning));
  heading_->setText(text);
  fillTable(*r);
  // The table's height and the heading's lines changed: lay out now, so a
  // screenshot taken at once shows the chart at its size.
  layout()->activate();
}

void WhatIfView::fillTable(const WhatIfResult& r) {
  table_->clear();
  auto row = [this](const QString& name, const QString& recorded, const QString& replayed,
                    const QString& change = {}) {
    auto* item = new QTreeWidgetItem(table_, {name, recorded, replayed, change});
    for (int c = 1; c < 3; ++c) item->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
  };
  const QString none = QStringLiteral("—");
  if (r.workspace) {
    const auto& w = r.workspace_result;
    row(tr("iterations (%1)").arg(w.by_scope ? tr("scope entries") : tr("between marks")), none,
        countText(w.iterations));
    row(tr("allocations in iterations"), countText(w.allocations), none);
    row(tr("learned size (after iteration)"), none,
        tr("%1 (%2)").arg(bytesText(w.learned_size)).arg(w.learned_after_iteration));
    row(tr("peak iteration bytes"), none, bytesText(w.peak_iteration_bytes));
    row(tr("spills (after learning)"), none,
        tr("%1 (%2)").arg(countText(w.spills), countText(w.spills_after_learning)));
    row(tr("system allocations per iteration after learning"),
        QString::number(w.recorded_per_iteration_after_learning(), 'f', 2),
        QString::number(w.system_per_iteration_after_learning(), 'f', 2));
    row(tr("escaping allocations"), none, countText(w.escaping_allocations));
    row(tr("failed allocations (policySpill FAIL)"), none, countText(w.failed_allocations));
    row(tr("peak reserved"), none, bytesText(r.reserved.peak()));
    fitTable();
    return;
  }
  const auto& p = r.replay;
  const Recorded rec = recordedOf(session_->whole(), r.spec.pool);
  const bool seg = rec.segments, known = !rec.pools.empty();
  row(tr("peak reserved"), seg ? bytesText(rec.peak_reserved) : none, bytesText(p.peak_reserved),
      seg ? changeText(rec.peak_reserved, p.peak_reserved) : QString());
  row(tr("peak allocated (used)"), known ? bytesText(rec.peak_used) : none,
      bytesText(p.peak_allocated));
  row(tr("peak fragmentation (reserved − allocated)"), none, bytesText(p.peak_fragmentation));
  row(tr("final reserved"), seg ? bytesText(rec.final_reserved) : none,
      bytesText(p.final_reserved));
  row(tr("final allocated"), known ? bytesText(rec.final_used) : none,
      bytesText(p.final_allocated));
  row(tr("OOMs"), known ? countText(rec.ooms) : none, countText(p.ooms));
  row(tr("mallocs / frees"),
      known ? tr("%1 / %2").arg(countText(rec.allocations), countText(rec.frees)) : none,
      tr("%1 / %2").arg(countText(p.mallocs), countText(p.frees)));
  fitTable();
}

void WhatIfView::fitTable() {
  for (int c = 0; c < 3; ++c) table_->resizeColumnToContents(c);
  for (int c = 1; c < 3; ++c) table_->setColumnWidth(c, table_->columnWidth(c) + 24);
  const int rows = std::max(1, table_->topLevelItemCount());
  table_->setFixedHeight(table_->header()->sizeHint().height() + rows * table_->sizeHintForRow(0) +
                         2 * table_->frameWidth() + 4);
}

QString WhatIfView::heading() const {
  return heading_->text();
}

int WhatIfView::rowCount() const {
  return table_->topLevelItemCount();
}

QString WhatIfView::cell(int row, int column) const {
  const QTreeWidgetItem* item = table_->topLevelItem(row);
  return item ? item->text(column) : QString();
}

}  // namespace memtrail::gui
