// The skeleton of a run on a thread of its own that may outlive the page that started it (a
// burst, a What-if comparison): progress notices coalesced to one queued at a time, the result
// delivered on the GUI thread only while the run object lives, a bounded wait on close.
#pragma once

#include <QObject>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>

namespace ratescope::ui {

class BackgroundRun : public QObject {
    Q_OBJECT
public:
    static constexpr int kCloseWaitMs = 3000;

    // Cancels and waits at most kCloseWaitMs; a run still going then ends on its own, its
    // result dropped.
    ~BackgroundRun() override;

    bool isRunning() const { return m_running; }
    // Asks the work to stop (Thread::cancelled(), and the hook given to launch()).
    void cancel();
    // Blocks the calling thread at most timeoutMs; true when the run has ended.
    bool wait(int timeoutMs);

    // What the work sees of its run, from its own thread.
    class Thread {
    public:
        bool cancelled() const;
        // At most one progressed() queued at a time, however often it is called.
        void notifyProgress();
        // Runs `done` on the GUI thread (after isRunning() turns false) if the run object
        // still exists then; otherwise drops it.
        void finish(std::function<void()> done);

    private:
        friend class BackgroundRun;
        struct State;
        explicit Thread(std::shared_ptr<State> state)
            : m_state(std::move(state))
        {
        }
        std::shared_ptr<State> m_state;
    };

signals:
    void progressed();

protected:
    explicit BackgroundRun(QObject *parent = nullptr);
    // Starts work on a detached thread (joined through wait()); onCancel, if given, is called
    // by cancel() from the GUI thread (e.g. to stop an engine at once).
    void launch(std::function<void(Thread &)> work, std::function<void()> onCancel = {});

private:
    std::shared_ptr<Thread::State> m_state;
    bool m_running = false;
};

} // namespace ratescope::ui
