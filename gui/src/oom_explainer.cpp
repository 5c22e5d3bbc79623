#include "oom_explainer.hpp"

#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "segment_worker.hpp"
#include "timeline_axis.hpp"
#include "timeline_model.hpp"

namespace memtrail::gui {
namespace {

enum Column { kWhat, kRequest, kLargestFree, kReserved, kUsed, kFree, kColumns };

QString bytes_or_dash(std::uint64_t v) {
  return v ? format_bytes(v) : QStringLiteral("—");
}

QTreeWidgetItem* pool_item(const Analysis& a, const OomExplanation& e, std::size_t i) {
  const auto& part = e.pools[i];
  auto* item = new QTreeWidgetItem;
  item->setText(kWhat, pool_label(a, part.pool));
  item->setData(kWhat, OomExplainer::kPoolIndexRole, static_cast<int>(i));
  if (e.requested) {
    item->setText(kRequest,
                  QStringLiteral("%1 %2").arg(format_bytes(e.requested),
                                              part.request_fits ? "fits" : "does not fit"));
    item->setForeground(kRequest,
                        part.request_fits ? QColor(0x2c, 0x7a, 0x2c) : QColor(0xc0, 0x20, 0x20));
  } else {
    item->setText(kRequest, QStringLiteral("—"));
  }
  item->setText(kLargestFree, bytes_or_dash(part.largest_free));
  item->setText(kReserved, format_bytes(part.reserved));
  item->setText(kUsed, format_bytes(part.used));
  item->setText(kFree, format_bytes(part.free));
  return item;
}

QTreeWidgetItem* segment_item(const OomExplanation::PinnedSegment& s, std::size_t i) {
  auto* item = new QTreeWidgetItem;
  std::uint64_t used = 0;
  for (const auto& b : s.segment.blocks) used += b.size;
  item->setText(kWhat, QStringLiteral("0x%1: %2 live block%3")
                           .arg(s.segment.address, 0, 16)
                           .arg(s.segment.blocks.size())
                           .arg(s.segment.blocks.size() == 1 ? "" : "s"));
  item->setData(kWhat, OomExplainer::kSegmentIndexRole, static_cast<int>(i));
  item->setText(kLargestFree, format_bytes(s.largest_free));
  item->setText(kReserved, format_bytes(s.segment.size));
  item->setText(kUsed, format_bytes(used));
  item->setText(kFree, format_bytes(s.free_bytes));
  return item;
}

QTreeWidgetItem* block_item(const BlockInfo& b, std::size_t i) {
  auto* item = new QTreeWidgetItem;
  item->setText(kWhat,
                QStringLiteral("0x%1 at %2").arg(b.address, 0, 16).arg(format_moment(b.alloc_ns)));
  item->setData(kWhat, OomExplainer::kBlockIndexRole, static_cast<int>(i));
  item->setText(kUsed, format_bytes(b.size));
  return item;
}

}  // namespace

OomExplainer::OomExplainer(QWidget* parent)
    : QWidget(parent),
      choices_(new QComboBox),
      headline_(new QLabel),
      tree_(new QTreeWidget),
      stack_(new QPlainTextEdit),
      worker_(new SegmentWorker(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* title = new QLabel(tr("<b>OOM explainer</b>"));
  layout->addWidget(title);
  layout->addWidget(choices_);
  headline_->setWordWrap(true);
  layout->addWidget(headline_);
  tree_->setColumnCount(kColumns);
  tree_->setHeaderLabels({tr("Pool / segment / block"), tr("Request"), tr("Largest free"),
                          tr("Reserved"), tr("Used"), tr("Free")});
  // The first column names what a row is: wide enough to read, the figures
  // sized to their contents, a scroll bar when the pane is narrow.
  tree_->header()->setStretchLastSection(false);
  tree_->header()->setSectionResizeMode(kWhat, QHeaderView::Interactive);
  tree_->setColumnWidth(kWhat, 250);
  for (int c = kRequest; c < kColumns; ++c)
    tree_->header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
  stack_->setReadOnly(true);
  stack_->setPlaceholderText(tr("Select a block to see its stack."));
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(tree_);
  split->addWidget(stack_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  layout->addWidget(split, 1);
  connect(choices_, &QComboBox::currentIndexChanged, this, [this](int i) {
    if (i > 0 && session_ && static_cast<std::size_t>(i) <= session_->ooms().size()) {
      const OomEvent& oom = session_->ooms()[static_cast<std::size_t>(i) - 1];
      emit oomChosen(oom.pool.value, oom.time_ns);
    }
    request();
  });
  connect(tree_, &QTreeWidget::currentItemChanged, this,
          [this](QTreeWidgetItem* item) { showStack(item); });
}

void OomExplainer::setSession(std::shared_ptr<const Session> session) {
  session_ = std::move(session);
  const QSignalBlocker block(choices_);
  choices_->clear();
  choices_->addItem(tr("At the moment shown"));
  if (session_) {
    const Analysis& a = session_->whole();
    for (const OomEvent& oom : session_->ooms()) {
      choices_->addItem(tr("oom at %1: %2 requested from %3")
                            .arg(format_moment(oom.time_ns), format_bytes(oom.requested),
                                 pool_label(a, oom.pool)));
    }
  }
  // Nothing to explain until a moment is set or an oom event chosen.
  has_moment_ = false;
  ready_ = false;
  explanation_ = {};
  tree_->clear();
  stack_->clear();
  headline_->setText(session_ ? tr("Choose an oom event, or a moment.") : tr("No trace loaded."));
}

void OomExplainer::setMoment(std::uint64_t time_ns) {
  if (has_moment_ && moment_ == time_ns) return;
  moment_ = time_ns;
  has_moment_ = true;
  if (choices_->currentIndex() <= 0) request();
}

void OomExplainer::choose(int choice) {
  choices_->setCurrentIndex(choice);
}

int OomExplainer::choice() const {
  return choices_->currentIndex();
}

QString OomExplainer::stackText() const {
  return stack_->toPlainText();
}

void OomExplainer::request() {
  ready_ = false;
  tree_->clear();
  stack_->clear();
  if (!session_) {
    headline_->setText(tr("No trace loaded."));
    return;
  }
  std::uint64_t t = moment_, requested = 0;
  const int i = choices_->currentIndex();
  if (i <= 0 && !has_moment_) {
    headline_->setText(tr("Choose an oom event, or a moment."));
    return;
  }
  if (i > 0 && static_cast<std::size_t>(i) <= session_->ooms().size()) {
    const OomEvent& oom = session_->ooms()[static_cast<std::size_t>(i) - 1];
    t = oom.time_ns;
    requested = oom.requested;
  }
  headline_->setText(tr("Explaining…"));
  worker_->submit([session = session_, t, requested, this] {
    auto e = std::make_shared<OomExplanation>(session->explain(t, requested));
    return [this, e] { display(std::move(*e)); };
  });
}

void OomExplainer::display(OomExplanation e) {
  if (!session_) return;  // cleared while it was computed
  explanation_ = std::move(e);
  tree_->clear();
  if (!explanation_.error.empty()) {
    headline_->setText(QString::fromStdString(explanation_.error));
  } else if (explanation_.pools.empty()) {
    headline_->setText(
        tr("No pool of this trace has segments: there is no free block to weigh a "
           "request against."));
  } else if (explanation_.requested) {
    std::size_t fits = 0;
    for (const auto& part : explanation_.pools) fits += part.request_fits;
    headline_->setText(
        tr("%1 requested at %2: it fits in %3 of %4 pools' largest free block.")
            .arg(format_bytes(explanation_.requested), format_moment(explanation_.time_ns))
            .arg(fits)
            .arg(explanation_.pools.size()));
  } else {
    headline_->setText(tr("At %1: the largest free block of each pool, and the live blocks that "
                          "keep partly used segments from being released.")
                           .arg(format_moment(explanation_.time_ns)));
  }
  for (std::size_t i = 0; i < explanation_.pools.size(); ++i) {
    QTreeWidgetItem* pool = pool_item(session_->whole(), explanation_, i);
    const auto& pinned = explanation_.pools[i].pinned;
    for (std::size_t s = 0; s < pinned.size(); ++s) {
      QTreeWidgetItem* seg = segment_item(pinned[s], s);
      for (std::size_t b = 0; b < pinned[s].segment.blocks.size(); ++b)
        seg->addChild(block_item(pinned[s].segment.blocks[b], b));
      pool->addChild(seg);
    }
    tree_->addTopLevelItem(pool);
    pool->setExpanded(true);
  }
  ready_ = true;
  emit ready();
}

void OomExplainer::showStack(QTreeWidgetItem* item) {
  stack_->clear();
  if (!item || !session_ || !item->data(kWhat, kBlockIndexRole).isValid()) return;
  QTreeWidgetItem* seg = item->parent();
  QTreeWidgetItem* pool = seg ? seg->parent() : nullptr;
  if (!pool) return;
  const auto& part = explanation_.pools.at(pool->data(kWhat, kPoolIndexRole).toUInt());
  const auto& segment = part.pinned.at(seg->data(kWhat, kSegmentIndexRole).toUInt()).segment;
  const BlockInfo& b = segment.blocks.at(item->data(kWhat, kBlockIndexRole).toUInt());
  QString text = tr("%1 at 0x%2 in %3, allocated at %4 by thread %5\n")
                     .arg(format_bytes(b.size))
                     .arg(b.address, 0, 16)
                     .arg(pool_label(session_->whole(), part.pool), format_moment(b.alloc_ns))
                     .arg(b.thread);
  const std::vector<Frame> frames =
      has_stack(b.stack) ? session_->frames(b.stack) : std::vector<Frame>{};
  if (frames.empty()) text += tr("  (no stack recorded)");
  for (const Frame& f : frames)
    text += QStringLiteral("  ") + QString::fromStdString(f.describe()) + '\n';
  stack_->setPlainText(text);
}

}  // namespace memtrail::gui
