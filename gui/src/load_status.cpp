#include "load_status.hpp"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTimer>

#include "format.hpp"

namespace memtrail::gui {

const char* const kWidestProgressText = "1023.99 MiB of 1023.99 MiB";

bool LoadState::update(const LoadProgress& p) {
  stage.store(static_cast<std::uint8_t>(p.stage));
  total.store(p.total);
  done.store(p.done);
  return !cancel.load();
}

LoadStatus::LoadStatus(QWidget* parent) : QWidget(parent) {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  stage_ = new QLabel(this);
  bar_ = new QProgressBar(this);
  bar_->setRange(0, 1000);
  // Wide enough for the longest text it shows: clipped inside the bar before.
  bar_->setMinimumWidth(bar_->fontMetrics().horizontalAdvance(kWidestProgressText) + 48);
  cancel_ = new QPushButton(tr("Cancel"), this);
  layout->addWidget(stage_);
  layout->addWidget(bar_);
  layout->addWidget(cancel_);
  connect(cancel_, &QPushButton::clicked, this, &LoadStatus::cancelClicked);
  timer_ = new QTimer(this);
  timer_->setInterval(50);
  connect(timer_, &QTimer::timeout, this, &LoadStatus::poll);
  hide();
}

void LoadStatus::follow(std::shared_ptr<LoadState> state) {
  state_ = std::move(state);
  poll();
  show();
  timer_->start();
}

void LoadStatus::stop() {
  timer_->stop();
  state_.reset();
  hide();
}

void LoadStatus::poll() {
  if (!state_) return;
  const auto stage = static_cast<LoadStage>(state_->stage.load());
  const std::uint64_t done = state_->done.load(), total = state_->total.load();
  bar_->setValue(
      total ? static_cast<int>(1000.0 * static_cast<double>(done) / static_cast<double>(total))
            : 0);
  QString amount = stage == LoadStage::symbolizing
                       ? tr("%1 of %2 sites").arg(countText(done), countText(total))
                       : tr("%1 of %2").arg(bytesText(done), bytesText(total));
  bar_->setFormat(amount);
  stage_->setText(QString::fromUtf8(stage_name(stage)));
}

QString LoadStatus::stageText() const {
  return stage_->text();
}

int LoadStatus::progressPerMille() const {
  return bar_->value();
}

}  // namespace memtrail::gui
