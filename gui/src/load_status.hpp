// The status bar's loading part: stage name, a progress bar in bytes of the
// file (sites while symbolizing) and Cancel. The loading thread writes a
// LoadState; the widget polls it (a signal per 64 KiB read would flood the
// event loop).
#pragma once

#include <QWidget>
#include <atomic>
#include <cstdint>
#include <memory>

#include "memtrail/session.hpp"

class QLabel;
class QProgressBar;
class QPushButton;
class QTimer;

namespace memtrail::gui {

// Shared between the loading thread and the GUI thread.
struct LoadState {
  std::atomic<std::uint8_t> stage{static_cast<std::uint8_t>(LoadStage::opening)};
  std::atomic<std::uint64_t> done{0}, total{0};
  std::atomic<bool> cancel{false};
  // The Session progress callback: records progress, false once cancelled.
  bool update(const LoadProgress& p);
};

// The longest text the bar shows (bytesText gives at most 7 characters).
extern const char* const kWidestProgressText;

class LoadStatus : public QWidget {
  Q_OBJECT

 public:
  explicit LoadStatus(QWidget* parent = nullptr);
  // Shows the widgets and follows `state` until stop().
  void follow(std::shared_ptr<LoadState> state);
  void stop();
  QString stageText() const;
  int progressPerMille() const;
  QProgressBar* bar() const { return bar_; }

 signals:
  void cancelClicked();

 private:
  void poll();
  std::shared_ptr<LoadState> state_;
  QLabel* stage_ = nullptr;
  QProgressBar* bar_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QTimer* timer_ = nullptr;
};

}  // namespace memtrail::gui
