#include "fragmentation_view.hpp"

#include <algorithm>
#include <tuple>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "oom_explainer.hpp"
#include "segment_fragmentation_chart.hpp"
#include "segment_worker.hpp"
#include "timeline_axis.hpp"
#include "timeline_model.hpp"

namespace memtrail::gui {

namespace {

// The pool selector's order, the first being shown on load: pools whose
// segments hold blocks (the ones with something to see: a fragmentation
// series), leaf pools before upstreams, then segments without blocks (an
// mmap pool), then pools without segments; in the trace's order within each.
std::vector<const PoolStats*> poolsByInterest(const Analysis& a) {
  std::vector<const PoolStats*> pools;
  for (const PoolStats& p : a.pools) pools.push_back(&p);
  auto rank = [](const PoolStats* p) {
    const bool blocks_in_segments = p->has_segments && !p->fragmentation.empty();
    return std::tuple(!blocks_in_segments, p->upstream, !p->has_segments);
  };
  std::stable_sort(pools.begin(), pools.end(),
                   [&](const PoolStats* x, const PoolStats* y) { return rank(x) < rank(y); });
  return pools;
}

}  // namespace
namespace {

QString legend_html() {
  const std::pair<SpanState, const char*> entries[] = {
      {SpanState::allocated, "allocated"},
      {SpanState::inactive_split, "inactive split"},
      {SpanState::cached_free, "cached free"}};
  QString html;
  for (const auto& [state, name] : entries)
    html += QStringLiteral("<span style='color:%1'>&#9632;</span> %2&nbsp;&nbsp;&nbsp;")
                .arg(span_color(state).name(), QString::fromLatin1(name));
  return html;
}

// Live blocks side by side in one row: a pool without segments, or blocks
// no segment covers.
SegmentRow packed_row(const std::vector<BlockInfo>& blocks) {
  SegmentRow row;
  row.segment = false;
  row.address = blocks.empty() ? 0 : blocks.front().address;
  for (const BlockInfo& b : blocks) {
    row.spans.push_back({b.address, b.size, SpanState::allocated, b.stack, b.thread, b.alloc_ns});
    row.size += b.size;
  }
  return row;
}

}  // namespace

FragmentationView::FragmentationView(QWidget* parent)
    : SessionView(parent),
      pools_(new QComboBox),
      headline_(new QLabel),
      note_(new QLabel),
      rows_(new SegmentRows),
      details_(new QTextBrowser),
      chart_(new SegmentFragmentationChart),
      explainer_(new OomExplainer),
      worker_(new SegmentWorker(this)) {
  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel(tr("Pool:")));
  pools_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  top->addWidget(pools_);
  top->addSpacing(16);
  top->addWidget(new QLabel(legend_html()));
  top->addStretch(1);

  headline_->setWordWrap(true);
  headline_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  note_->setWordWrap(true);
  note_->setStyleSheet(QStringLiteral("color: #8a5a00"));
  note_->hide();

  auto* scroll = new QScrollArea;
  scroll->setWidget(rows_);
  scroll->setWidgetResizable(true);
  scroll->setBackgroundRole(QPalette::Base);
  // The rows take the height; the chart beneath keeps a fixed strip.
  auto* left = new QWidget;
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 0, 0);
  left_layout->addWidget(scroll, 1);
  chart_->setFixedHeight(170);
  left_layout->addWidget(chart_);

  details_->setPlaceholderText(tr("Click a block for its size and stack."));
  auto* right = new QSplitter(Qt::Vertical);
  right->addWidget(details_);
  right->addWidget(explainer_);
  right->setSizes({160, 540});

  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(left);
  split->addWidget(right);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  split->setSizes({760, 620});

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(headline_);
  layout->addWidget(note_);
  layout->addWidget(split, 1);

  connect(pools_, &QComboBox::currentIndexChanged, this, [this](int i) {
    if (i < 0) return;
    pool_ = pools_->itemData(i).toUInt();
    chart_->setPool(session_, pool_, t0_, t1_);
    chart_->setMoment(moment());
    requestMap();
  });
  connect(rows_, &SegmentRows::spanClicked, this, &FragmentationView::showSpan);
  connect(chart_, &SegmentFragmentationChart::momentClicked, this, [this](std::uint64_t t) {
    setMoment(t);
    emit momentSelected(t);
  });
  connect(explainer_, &OomExplainer::oomChosen, this, [this](std::uint32_t pool, std::uint64_t t) {
    selectPool(pool);
    setMoment(t);
    emit momentSelected(t);
  });
}

std::vector<std::uint32_t> FragmentationView::poolOrder() const {
  std::vector<std::uint32_t> order;
  for (int i = 0; i < pools_->count(); ++i) order.push_back(pools_->itemData(i).toUInt());
  return order;
}

void FragmentationView::setSession(std::shared_ptr<const Session> session) {
  session_ = std::move(session);
  moment_.reset();
  map_ = {};
  ready_ = false;
  rows_->setRows({});
  details_->clear();
  explainer_->setSession(session_);
  const QSignalBlocker block(pools_);
  pools_->clear();
  if (!session_) {
    chart_->setPool(nullptr, 0, 0, 1);
    headline_->setText(tr("No trace loaded."));
    return;
  }
  const Analysis& a = session_->whole();
  t0_ = a.summary.first_event_ns;
  t1_ = std::max(a.summary.last_event_ns, t0_ + 1);
  peak_used_ns_ = a.summary.peak_time_ns;
  for (const PoolStats* p : poolsByInterest(a))
    pools_->addItem(
        pool_label(a, PoolId{p->info.id}) + (p->has_segments ? QString() : tr(" (no segments)")),
        p->info.id);
  if (pools_->count() == 0) {
    headline_->setText(tr("The trace has no pools."));
    ready_ = true;
    emit ready();
    return;
  }
  pools_->setCurrentIndex(0);
  pool_ = pools_->itemData(0).toUInt();
  chart_->setPool(session_, pool_, t0_, t1_);
  chart_->setMoment(moment());
  requestMap();
}

void FragmentationView::setRange(std::uint64_t t0, std::uint64_t t1,
                                 std::shared_ptr<const Analysis> range) {
  if (!session_) return;
  t0_ = std::min(t0, t1);
  t1_ = std::max({t0, t1, t0_ + 1});
  const std::uint64_t before = moment();
  peak_used_ns_ = range ? range->summary.peak_time_ns : t0_;
  // Never a moment outside the range: one it leaves out goes back to its peak.
  if (moment_ && (*moment_ < t0_ || *moment_ > t1_)) moment_.reset();
  chart_->setPool(session_, pool_, t0_, t1_);
  chart_->setMoment(moment());
  if (moment() != before || !ready_)
    requestMap();
  else
    emit ready();  // the rows show a moment, not a range: still in place
}

void FragmentationView::setMoment(std::uint64_t time_ns) {
  changeMoment(session_ ? std::clamp(time_ns, t0_, t1_) : time_ns, false);
}

void FragmentationView::setPeakMoment(std::uint64_t time_ns) {
  changeMoment(session_ ? std::clamp(time_ns, t0_, t1_) : time_ns, true);
}

void FragmentationView::changeMoment(std::uint64_t time_ns, bool peak) {
  const bool same = moment_ == time_ns && moment_is_peak_ == peak;
  moment_ = time_ns;
  moment_is_peak_ = peak;
  if (same) return;
  chart_->setMoment(time_ns);
  if (session_) requestMap();
}

void FragmentationView::selectPool(std::uint32_t pool) {
  const int i = pools_->findData(pool);
  if (i >= 0) pools_->setCurrentIndex(i);
}

const PoolStats* FragmentationView::poolStats() const {
  return session_ ? session_->whole().pool(PoolId{pool_}) : nullptr;
}

std::uint64_t FragmentationView::moment() const {
  return moment_ ? *moment_ : peak_used_ns_;
}

QString FragmentationView::momentText(std::uint64_t t) const {
  return format_moment(t) + (momentIsPeakUsed() ? tr(" (peak used)") : tr(" (chosen moment)"));
}

QString FragmentationView::headline() const {
  return headline_->text();
}
QString FragmentationView::note() const {
  return note_->isHidden() ? QString() : note_->text();
}
QString FragmentationView::spanDetails() const {
  return details_->toPlainText();
}

void FragmentationView::requestMap() {
  ready_ = false;
  const std::uint64_t t = moment();
  const PoolId pool{pool_};
  headline_->setText(tr("Reading the segments at %1…").arg(format_moment(t)));
  chart_->setMomentValue(std::nullopt);
  worker_->submit([session = session_, pool, t, this] {
    auto map = std::make_shared<SegmentMap>(session->segment_map(pool, t));
    return [this, map] { showMap(std::move(*map)); };
  });
}

void FragmentationView::showMap(SegmentMap map) {
  if (!session_) return;  // cleared while it was computed
  map_ = std::move(map);
  details_->clear();
  const PoolStats* pool = poolStats();
  const QString name = session_ ? pool_label(session_->whole(), PoolId{pool_}) : QString();
  std::vector<SegmentRow> rows;
  for (const SegmentInfo& s : map_.segments)
    rows.push_back({s.address, s.size, true, segment_spans(s)});
  if (!map_.outside_segments.empty()) rows.push_back(packed_row(map_.outside_segments));
  rows_->setRows(std::move(rows));

  const Fragmentation& f = map_.fragmentation;
  // The chart marks the moment with this map's figure: header and chart agree.
  chart_->setMomentValue(map_.error.empty() && pool && pool->has_segments
                             ? std::optional<double>(f.external)
                             : std::nullopt);
  if (!map_.error.empty()) {
    headline_->setText(QString::fromStdString(map_.error));
  } else if (pool && pool->has_segments) {
    headline_->setText(
        tr("<b>%1</b> at %2: %3 segments, reserved %4, used %5, free %6 (%7 of it in partly used "
           "segments), largest free block %8, external fragmentation %9 %")
            .arg(name.toHtmlEscaped(), momentText(map_.time_ns))
            .arg(map_.segments.size())
            .arg(format_bytes(f.reserved_bytes), format_bytes(f.used_bytes),
                 format_bytes(f.free_bytes), format_bytes(f.free_in_partial_segments),
                 format_bytes(f.largest_free_block))
            .arg(f.external * 100, 0, 'f', 1));
  } else {
    headline_->setText(tr("<b>%1</b> at %2: %3 live blocks, %4 used")
                           .arg(name.toHtmlEscaped(), momentText(map_.time_ns))
                           .arg(map_.outside_segments.size())
                           .arg(format_bytes(map_.pool_state.final_used_bytes)));
  }
  const bool no_segments = pool && !pool->has_segments;
  note_->setText(no_segments ? tr("%1 has no segment information (its allocator does not report "
                                  "the memory it reserves): its live blocks are shown side by side "
                                  "in one row.")
                                   .arg(name)
                             : QString());
  note_->setVisible(no_segments);
  ready_ = true;
  // The explanation replays the file too: asked once the rows are in, so
  // the two do not share the cores while the user waits for the rows.
  explainer_->setMoment(moment());
  emit ready();
}

void FragmentationView::showSpan(int row, int span) {
  const SegmentRow& r = rows_->rows().at(static_cast<std::size_t>(row));
  const SegmentSpan& s = r.spans.at(static_cast<std::size_t>(span));
  QString html = QStringLiteral("<b>%1</b>, %2<br>address 0x%3")
                     .arg(format_bytes(s.size), QString::fromLatin1(span_state_name(s.state)))
                     .arg(s.address, 0, 16);
  if (r.segment)
    html += tr("<br>offset %1 in segment 0x%2 (%3)")
                .arg(format_bytes(s.address - r.address))
                .arg(r.address, 0, 16)
                .arg(format_bytes(r.size));
  if (s.state == SpanState::allocated) {
    html += tr("<br>allocated at %1 by thread %2").arg(format_moment(s.alloc_ns)).arg(s.thread);
    const std::vector<Frame> frames =
        has_stack(s.stack) ? session_->frames(s.stack) : std::vector<Frame>{};
    html += frames.empty() ? tr("<br><i>no stack recorded</i>") : QStringLiteral("<br>");
    for (const Frame& fr : frames)
      html += QStringLiteral("<br>&nbsp;&nbsp;") +
              QString::fromStdString(fr.describe()).toHtmlEscaped();
  }
  details_->setHtml(html);
}

}  // namespace memtrail::gui
