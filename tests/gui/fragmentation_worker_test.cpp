// SegmentWorker, the fragmentation view's off-thread runner: only the newest
// request's answer is delivered; a request replaced before it started never
// runs; a late answer to an older request is dropped.
#include <QtTest>
#include <atomic>
#include <future>

#include "segment_worker.hpp"

using memtrail::gui::SegmentWorker;

class FragmentationWorkerTest : public QObject {
  Q_OBJECT

 private slots:
  void onlyTheNewestAnswerIsDelivered() {
    SegmentWorker worker;
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    std::atomic<bool> a_started{false}, b_ran{false};
    int delivered_a = 0, delivered_c = 0;
    worker.submit([&, released] {
      a_started = true;
      released.wait();  // still running when B and C come
      return std::function<void()>([&] { ++delivered_a; });
    });
    QVERIFY(QTest::qWaitFor([&] { return a_started.load(); }, 5000));
    worker.submit([&] {
      b_ran = true;
      return std::function<void()>();
    });
    worker.submit([&] { return std::function<void()>([&] { ++delivered_c; }); });
    QVERIFY(worker.busy());
    release.set_value();
    QVERIFY(QTest::qWaitFor([&] { return !worker.busy(); }, 5000));
    QCOMPARE(delivered_a, 0);  // finished after newer requests: dropped
    QVERIFY(!b_ran);           // replaced before it started: never run
    QCOMPARE(delivered_c, 1);
    QCOMPARE(worker.dropped(), 2u);
  }

  void destroyingItWaitsForTheRunningJob() {
    std::atomic<bool> started{false}, finished{false};
    {
      SegmentWorker worker;
      worker.submit([&] {
        started = true;
        QThread::msleep(50);
        finished = true;
        return std::function<void()>([] { QFAIL("delivered after the worker was destroyed"); });
      });
      while (!started) QThread::yieldCurrentThread();
    }
    QVERIFY(finished);
    QTest::qWait(20);  // the queued delivery went with the worker
  }
};

QTEST_GUILESS_MAIN(FragmentationWorkerTest)
#include "fragmentation_worker_test.moc"
