// The worker side of one connection: owns the core Connection on its own thread and runs
// the console's requests there one at a time: interactive ones (what a view waits for) before
// background ones (a SCAN walk), each owner's requests in the order they were made.
#pragma once

#include "redis/connectionoptions.h"

#include <QMutex>
#include <QObject>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <optional>

namespace ratescope {
class Connection;
}

namespace ratescope::ui {

class ConnectionWorker : public QObject {
    Q_OBJECT
public:
    using Job = std::function<void(Connection &)>;
    enum class Lane { Interactive, Background };

    explicit ConnectionWorker(ConnectionOptions options);
    ~ConnectionWorker() override;

    // Any thread. Queues the job; `owner` (any stable address per owner, never dereferenced)
    // keeps one owner's jobs in order across the lanes: an interactive job never overtakes
    // a background job of its own owner.
    void post(Job job, Lane lane, const void *owner);
    // Any thread: interactive jobs queued and not started yet.
    int interactiveWaiting() const { return m_interactiveWaiting.load(std::memory_order_relaxed); }
    // On the worker thread, from inside a background job between two of its requests: runs the
    // interactive jobs waiting now, on the same connection, then returns to the job, which goes
    // on where it was. The running job's owner's interactive jobs stay behind it.
    void serveInteractive();

private:
    struct Queued {
        Job job;
        const void *owner;
        quint64 sequence;
    };

    void runNext(); // on the worker thread: once per posted job
    std::optional<Queued> takeNext(bool interactiveOnly = false);

    ConnectionOptions m_options;
    std::unique_ptr<Connection> m_connection; // created by the first job, on this thread
    QMutex m_mutex;
    std::deque<Queued> m_interactive; // under m_mutex
    std::deque<Queued> m_background;  // under m_mutex
    quint64 m_sequence = 0;           // under m_mutex
    std::atomic<int> m_interactiveWaiting{0};
    const void *m_runningOwner = nullptr; // the worker thread's: the owner of the job under way
    bool m_serving = false;               // the worker thread's: serveInteractive() under way
};

} // namespace ratescope::ui
