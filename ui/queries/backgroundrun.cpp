#include "backgroundrun.h"

#include <QMetaObject>

#include <thread>

namespace ratescope::ui {

// What the run's thread and the GUI-thread object share. `owner` is cleared (under the mutex)
// when the object goes away, so the thread never posts to a destroyed object.
struct BackgroundRun::Thread::State {
    std::mutex mutex;
    std::condition_variable endedChanged;
    bool ended = false;
    BackgroundRun *owner = nullptr;
    bool progressQueued = false;
    std::atomic<bool> cancelled{false};
    std::function<void()> onCancel; // GUI thread only
};

BackgroundRun::BackgroundRun(QObject *parent)
    : QObject(parent)
{
}

BackgroundRun::~BackgroundRun()
{
    if (!m_state)
        return;
    {
        std::lock_guard lock(m_state->mutex);
        m_state->owner = nullptr;
    }
    cancel();
    wait(kCloseWaitMs);
}

void BackgroundRun::launch(std::function<void(Thread &)> work, std::function<void()> onCancel)
{
    Q_ASSERT(!m_running);
    m_state = std::make_shared<Thread::State>();
    m_state->owner = this;
    m_state->onCancel = std::move(onCancel);
    m_running = true;
    std::thread([state = m_state, work = std::move(work)] {
        Thread thread(state);
        work(thread);
        std::lock_guard lock(state->mutex);
        state->ended = true;
        state->endedChanged.notify_all();
    }).detach(); // joined through wait(); a run outliving its page ends by itself
}

void BackgroundRun::cancel()
{
    if (!m_state)
        return;
    m_state->cancelled.store(true);
    if (m_state->onCancel)
        m_state->onCancel();
}

bool BackgroundRun::wait(int timeoutMs)
{
    if (!m_state)
        return true;
    std::unique_lock lock(m_state->mutex);
    return m_state->endedChanged.wait_for(lock, std::chrono::milliseconds(timeoutMs), [this] { return m_state->ended; });
}

bool BackgroundRun::Thread::cancelled() const
{
    return m_state->cancelled.load();
}

void BackgroundRun::Thread::notifyProgress()
{
    std::lock_guard lock(m_state->mutex);
    if (m_state->progressQueued || !m_state->owner)
        return;
    m_state->progressQueued = true;
    BackgroundRun *o = m_state->owner;
    QMetaObject::invokeMethod(
        o,
        [o, state = m_state] {
            {
                std::lock_guard lock(state->mutex);
                state->progressQueued = false;
            }
            emit o->progressed();
        },
        Qt::QueuedConnection);
}

void BackgroundRun::Thread::finish(std::function<void()> done)
{
    std::lock_guard lock(m_state->mutex);
    if (BackgroundRun *o = m_state->owner)
        QMetaObject::invokeMethod(
            o,
            [o, done = std::move(done)] {
                o->m_running = false;
                done();
            },
            Qt::QueuedConnection);
}

} // namespace ratescope::ui
