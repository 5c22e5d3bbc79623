#include "background.hpp"

#include <algorithm>

namespace memtrail::gui {

BackgroundTasks::~BackgroundTasks() {
  cancel();
  for (auto& t : threads_)
    if (t) t->wait();
}

void BackgroundTasks::start(std::function<void()> body) {
  // Threads that finished are deleted (deleteLater); forget their pointers.
  threads_.erase(std::remove_if(threads_.begin(), threads_.end(),
                                [](const QPointer<QThread>& t) { return t.isNull(); }),
                 threads_.end());
  QThread* thread = QThread::create(std::move(body));
  connect(thread, &QThread::finished, thread, &QObject::deleteLater);
  threads_.emplace_back(thread);
  thread->start();
}

bool BackgroundTasks::busy() const {
  return std::any_of(threads_.begin(), threads_.end(),
                     [](const QPointer<QThread>& t) { return t && t->isRunning(); });
}

}  // namespace memtrail::gui
