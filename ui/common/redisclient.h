// The console's handle on one Redis connection. Requests run on the connection's worker
// thread and answer on the GUI thread, each tied to an owner object: when the owner is
// destroyed (or cancels), its queued work is skipped and late answers are dropped. Long walks
// (SCAN) run in a background lane that yields to the short reads views wait for. A
// heartbeat (PING every 2 s) measures the round trip and notices a lost connection, which is
// reopened with backoff.
#pragma once

#include "redis/connectionoptions.h"
#include "outcome.h"
#include "redis/serverinfo.h"

#include <QDeadlineTimer>
#include <QHash>
#include <QPointer>
#include <QTimer>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>

class QThread;

namespace ratescope {
class Connection;
}

namespace ratescope::ui {

class ConnectionWorker;

class RedisClient : public QObject {
    Q_OBJECT
public:
    enum class State {
        Idle,       // not opened yet
        Connecting, // the first attempt is under way
        Connected,
        Reconnecting, // lost, or not reached yet: the next attempt is scheduled
        Failed,       // refused for good (credentials, unsupported URL): needs the user
    };
    Q_ENUM(State)

    struct Status {
        ServerInfo info;         // version empty when INFO is not allowed for this user
        double roundTripMs = -1; // PING on the worker; time spent queued not included
    };

    static constexpr int kHeartbeatMs = 2000;
    // PING (timed) and INFO/DBSIZE on a connection: what the heartbeat and tests run.
    static Status probe(Connection &connection);

    explicit RedisClient(ConnectionOptions options, QObject *parent = nullptr);
    // Stops the worker thread: the request under way is given up (its network waits end
    // within a slice, ConnectionOptions::abort), then joined, normally well within
    // kJoinLimitMs whatever the timeouts.
    ~RedisClient() override;
    static constexpr int kJoinLimitMs = 2000;

    QString endpoint() const { return m_endpoint; }
    QString url() const { return m_url; } // the password redacted

    void open();     // connect now, then keep the connection alive
    void retryNow(); // skip the rest of a backoff wait
    // Stops taking requests and deletes itself once the worker has finished the request
    // under way: for views that go away without making the GUI wait on the network.
    void retire();

    State state() const { return m_state; }
    QString lastError() const { return m_lastError; }
    int secondsUntilRetry() const;
    std::optional<Status> status() const { return m_status; }

    // The read-only lock: while set, mutations are refused before anything is sent.
    bool isReadOnly() const { return m_readOnly; }
    void setReadOnly(bool readOnly);

    // Interactive: what a view shows as soon as it is read (columns, a key's page, a poll).
    // Background: long work nobody waits on row by row (a SCAN walk, a page at a time). The
    // worker runs every waiting interactive request before the next background one, so a
    // short read waits at most for the request under way; background work that loops should
    // stop early when interactiveWaiting() says so. One owner's requests still run in the
    // order they were made, whatever their lanes.
    enum class Lane { Interactive, Background };

    // Runs work(Connection &) on the worker, then done(const Outcome<T> &) on the GUI thread,
    // unless owner was destroyed or cancel(owner) was called meanwhile. While the connection
    // is down, requests fail at once instead of each waiting for a timeout.
    template <typename Work, typename Done> void request(QObject *owner, Work work, Done done)
    {
        request(owner, Lane::Interactive, std::move(work), std::move(done));
    }
    template <typename Work, typename Done> void request(QObject *owner, Lane lane, Work work, Done done);
    // Any thread (background work reads it on the worker): interactive requests are queued
    // and waiting for the worker.
    bool interactiveWaiting() const;
    // Skips owner's queued requests and drops its answers not delivered yet.
    void cancel(QObject *owner);

signals:
    void stateChanged(ratescope::ui::RedisClient::State state);
    void statusChanged();
    void readOnlyChanged(bool readOnly);

private:
    using Token = std::shared_ptr<std::atomic<bool>>; // true: cancelled

    Token tokenFor(QObject *owner);
    // ownerKey: the owner's token, which keeps its requests in order across the lanes.
    void enqueue(std::function<void(Connection &)> job, Lane lane, const void *ownerKey);
    void deliver(std::function<void()> answer); // from the worker thread to this one
    bool runnable(const Token &token) const { return !m_closing.load() && !token->load(); }
    void noteFailure(const Failure &failure);
    void attempt();
    void heartbeat();
    void setState(State state);
    void scheduleRetry();

    QString m_endpoint;
    QString m_url;
    QThread *m_thread = nullptr;
    ConnectionWorker *m_worker = nullptr; // lives on m_thread
    std::atomic<bool> m_closing{false};
    AbortSignal m_abort;
    std::atomic<bool> m_online{true}; // the worker's view: false after a connection error
    QHash<QObject *, Token> m_tokens;
    State m_state = State::Idle;
    QString m_lastError;
    std::optional<Status> m_status;
    bool m_readOnly = false;
    bool m_heartbeatPending = false;
    bool m_attemptPending = false;
    int m_failedAttempts = 0;
    QTimer m_heartbeat;
    QTimer m_retry;
    QDeadlineTimer m_retryAt;
};

template <typename Work, typename Done> void RedisClient::request(QObject *owner, Lane lane, Work work, Done done)
{
    using T = std::decay_t<std::invoke_result_t<Work &, Connection &>>;
    Token token = tokenFor(owner);
    QPointer<QObject> guard(owner);
    const void *ownerKey = token.get();
    enqueue(
        [this, token, guard, work = std::move(work), done = std::move(done)](Connection &c) mutable {
            if (!runnable(token))
                return; // the owner is gone or has cancelled: skip the work
            std::optional<Outcome<T>> outcome;
            if (!m_online.load()) {
                outcome.emplace(Failure{Failure::Kind::Connection, QStringLiteral("not connected (waiting to reconnect)")});
            } else {
                try {
                    outcome.emplace(work(c));
                } catch (...) {
                    outcome.emplace(Failure::from(std::current_exception()));
                    if (outcome->failure().isConnectionLoss())
                        m_online.store(false);
                }
            }
            // The guard is read on the GUI thread only, where owners live and die.
            deliver([this, token, guard, done, o = std::move(*outcome)]() {
                if (!o.ok())
                    noteFailure(o.failure());
                if (guard && !token->load())
                    done(o);
            });
        },
        lane, ownerKey);
}

} // namespace ratescope::ui
