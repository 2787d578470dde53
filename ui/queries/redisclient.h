// The console's handle on one Redis connection. Requests run on the connection's worker
// thread and answer on the GUI thread, each tied to an owner object: when the owner is
// destroyed (or cancels), its queued work is skipped and late answers are dropped. Long walks
// (SCAN) run in a background lane that yields to the short reads views wait for. Views that
// refresh by themselves do it on one shared tick (TickTimer) with repeat(): what every view
// due at a tick reads goes in one round. A heartbeat (PING and INFO every 2 s, on the same
// tick) measures the round trip and notices a lost connection, which is reopened with backoff.
#pragma once

#include "redis/connectionoptions.h"
#include "outcome.h"
#include "redis/resp.h"
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
#include <utility>
#include <vector>

class QThread;

namespace ratescope {
class Connection;
}

namespace ratescope::ui {

class ConnectionWorker;
class TickTimer;

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
    // Connects first (a connection dialog's test).
    static Status connectAndProbe(Connection &connection);

    explicit RedisClient(ConnectionOptions options, QObject *parent = nullptr);
    // Stops the worker thread: the request under way is given up (its network waits end
    // within a slice, ConnectionOptions::abort), then joined for at most kJoinLimitMs. A worker
    // still busy then (work that is not on the network) is left to finish on its own: it
    // shares nothing with this object but the state its jobs hold, and its answers are dropped.
    ~RedisClient() override;
    static constexpr int kJoinLimitMs = 2000;

    QString endpoint() const { return m_endpoint; }
    QString url() const { return m_url; } // the password redacted

    // Connects, then keeps the connection alive. The attempt goes out once this turn of the
    // event loop is over, together with what the views ask in it: the reads of every repeat()
    // made in this turn go in the handshake's own round trip (HELLO, AUTH, SELECT, CLIENT
    // SETNAME and the reads in one write), and request()s made in it run right after. So a
    // window that opens its views in the same turn as the connection (MainWindow) shows them
    // one round trip after connecting, plus what each reads in later rounds.
    void open();
    void retryNow(); // skip the rest of a backoff wait
    // Stops taking requests and deletes itself once the worker has finished the request
    // under way: for views that go away without making the GUI wait on the network.
    void retire();

    State state() const { return m_state; }
    // Connected at least once: a failure after that is a lost connection, before it one that
    // could not be made.
    bool hasConnected() const { return m_hasConnected; }
    QString lastError() const { return m_lastError; }
    // Failed because the server wants a password (NOAUTH) or refused the one given
    // (WRONGPASS): what a password prompt answers.
    bool needsCredentials() const { return m_state == State::Failed && m_credentialsRefused; }
    // The server's own words for it: "NOAUTH Authentication required." needs a password,
    // anything else (WRONGPASS) refused the one given.
    bool passwordMissing() const { return needsCredentials() && m_lastError.startsWith(QLatin1String("NOAUTH")); }
    int secondsUntilRetry() const;
    int msUntilRetry() const; // 0 when no attempt is scheduled
    // Attempts scheduled since the connection was last up (or opened): the number of the next.
    int failedAttempts() const { return m_failedAttempts; }
    std::optional<Status> status() const { return m_status; }

    // Pacing on a slow link. A view that wants to read every wantedMs reads at most once per
    // kPaceRoundTrips of the measured round trip (rounded up to 100 ms), so that the views
    // open together (a key view takes 4 round trips a read, the keys panel 2, following
    // changes 1) leave the link mostly idle instead of queueing behind each other. On a round
    // trip up to 50 ms a 1 s refresh is kept; at 120 ms it becomes 2.4 s. wantedMs <= 0 (off)
    // is kept as it is. Views apply it when statusChanged() says the round trip moved.
    static constexpr int kPaceRoundTrips = 20;
    int pacedMs(int wantedMs) const;

    // The read-only lock: while set, mutations are refused before anything is sent.
    bool isReadOnly() const { return m_readOnly; }
    void setReadOnly(bool readOnly);
    // Locked read-only for the whole session (--read-only): setReadOnly(false) is refused.
    void lockReadOnlyForSession();
    bool isReadOnlyForSession() const { return m_readOnlyForSession; }

    // Interactive: what a view shows as soon as it is read (columns, a key's page, a poll).
    // Background: long work nobody waits on row by row (a SCAN walk, a page at a time). The
    // worker runs every waiting interactive request before the next background one, and
    // background work that loops lets them run between its requests (betweenRequests()), so a
    // short read waits at most for one request under way. One owner's requests still run in
    // the order they were made, whatever their lanes.
    enum class Lane { Interactive, Background };

    // Runs work(Connection &) on the worker, then done(const Outcome<T> &) on the GUI thread,
    // unless owner was destroyed or cancel(owner) was called meanwhile. While the connection
    // is down, requests fail at once instead of each waiting for a timeout.
    template <typename Work, typename Done> void request(QObject *owner, Work work, Done done)
    {
        request(owner, Lane::Interactive, std::move(work), std::move(done));
    }
    template <typename Work, typename Done> void request(QObject *owner, Lane lane, Work work, Done done);
    // The shared tick, every kTickMs: TickTimers fire on it, so that views whose periods meet
    // read at the same moment, and repeat() sends what they read in one round.
    static constexpr int kTickMs = 50; // every period offered (100 ms, 250 ms, 1 s ...) is whole ticks
    static constexpr int kTicksPerSecond = 1000 / kTickMs;
    qint64 ticks() const { return m_ticks; }
    // Tests: the tick stops running by itself; tickNow() is the only one (an explicit clock).
    void setManualTicks(bool manual);
    void tickNow();

    // Given to a repeated read's work, on the worker.
    struct Tick {
        // The server's clock when this round reaches it, from the rounds before (0 until one
        // has been read): a view reads its state for this time, so that what it will ask is
        // known before it asks (a script's arguments hold the time).
        qint64 predictedNowUs = 0;
    };
    // What one repeated read (a view's refresh) remembers between its runs, on the worker: what
    // it asked last time and the replies. One per read; the view keeps it.
    struct Repeated {
        std::vector<std::pair<Command, Reply>> last;
    };
    using RepeatMemory = std::shared_ptr<Repeated>;
    static RepeatMemory newRepeatMemory() { return std::make_shared<Repeated>(); }
    // A read a view repeats: as request(), but every repeat() made in one turn of the event
    // loop (a tick: every view due then) runs in one job whose first round carries what each
    // will read. What a read asks is learnt by rehearsing it on its last replies
    // (Connection::rehearse): while what it reads has not changed, each costs no round of its
    // own, and a read whose later rounds depend only on its first (a key view given
    // Tick::predictedNowUs) costs none beyond that shared round either.
    // work(Connection &, const Tick &) -> T; done(const Outcome<T> &).
    template <typename Work, typename Done> void repeat(QObject *owner, const RepeatMemory &memory, Work work, Done done);

    // Interactive requests are queued and waiting for the worker.
    bool interactiveWaiting() const;
    // For background work that loops (a SCAN walk), to call on the worker between two of its
    // requests: runs the interactive requests waiting then, on the same connection, and returns
    // false, so the background work goes on where it was (a page is never cut short for a
    // read) and a read waits at most for one request of it. It holds no pointer to this
    // object, which may be gone by then.
    std::function<bool()> betweenRequests() const;
    // Skips owner's queued requests and drops its answers not delivered yet.
    void cancel(QObject *owner);

signals:
    void ticked(qint64 tick);
    void stateChanged(ratescope::ui::RedisClient::State state);
    void statusChanged();
    void readOnlyChanged(bool readOnly);

private:
    using Token = std::shared_ptr<std::atomic<bool>>; // true: cancelled
    // What the worker's jobs share with this object: they hold it, never the object itself.
    struct Link;

    // One repeat() waiting for its turn's job.
    struct Repeat {
        Token token;
        RepeatMemory memory;
        std::function<void(Connection &, const Tick &)> rehearse; // runs the work, its result dropped
        std::function<void(Connection &, const Tick &)> run;      // runs the work and answers
    };
    // On the worker: runs work(c) and posts done(outcome) to this object, unless the owner went.
    template <typename T, typename Fn, typename Done>
    void answer(const std::shared_ptr<Link> &link, const Token &token, QPointer<QObject> guard, Fn &&work, Done done);
    void scheduleRepeats(); // posts this turn's repeats once the turn is over
    void postRepeats();
    // On the worker: the connection attempt, given what this turn's repeats will read (sent in
    // the handshake's round trip, with what it reads itself, which it adds); it answers the
    // attempt.
    using Attempt = std::function<void(Connection &, std::vector<Command> &along)>;
    // On the worker: one turn's repeats, rehearsed, sent ahead together (with the handshake
    // when the turn made a connection attempt), then run.
    static void runRepeats(Connection &c, Link &link, std::vector<Repeat> &repeats, const Attempt &attempt);
    Attempt attemptJob();
    void tick();

    Token tokenFor(QObject *owner);
    // ownerKey: the owner's token, which keeps its requests in order across the lanes.
    void enqueue(std::function<void(Connection &)> job, Lane lane, const void *ownerKey);
    // From the worker thread: runs answer on this object's thread if this object still exists.
    static void deliver(const std::shared_ptr<Link> &link, std::function<void()> answer);
    static bool runnable(const Link &link, const Token &token);
    static bool online(const Link &link);
    static void setOnline(Link &link, bool online);
    void noteFailure(const Failure &failure);
    void attempt();
    void heartbeat();
    void setState(State state);
    void scheduleRetry();

    QString m_endpoint;
    QString m_url;
    QThread *m_thread = nullptr;
    ConnectionWorker *m_worker = nullptr; // lives on m_thread
    std::shared_ptr<Link> m_link;
    AbortSignal m_abort;
    QHash<QObject *, Token> m_tokens;
    State m_state = State::Idle;
    QString m_lastError;
    std::optional<Status> m_status;
    bool m_readOnly = false;
    bool m_readOnlyForSession = false;
    bool m_hasConnected = false;
    bool m_credentialsRefused = false;
    bool m_heartbeatPending = false;
    bool m_attemptPending = false;
    int m_failedAttempts = 0;
    TickTimer *m_heartbeat = nullptr;
    QTimer m_tickTimer;
    qint64 m_ticks = 0;
    std::vector<Repeat> m_repeats; // made in this turn of the event loop
    bool m_repeatsScheduled = false;
    // A connection attempt made in this turn: it goes out with the turn's repeats, and the
    // requests made meanwhile are held until it has (so that none of them connects first).
    bool m_attemptInTurn = false;
    struct Held {
        std::function<void(Connection &)> job;
        Lane lane;
        const void *ownerKey;
    };
    std::vector<Held> m_held;
    RepeatMemory m_heartbeatMemory = newRepeatMemory();
    QTimer m_retry;
    QDeadlineTimer m_retryAt;
};

template <typename T, typename Fn, typename Done>
void RedisClient::answer(const std::shared_ptr<Link> &link, const Token &token, QPointer<QObject> guard, Fn &&work, Done done)
{
    // On the worker: `this` only inside the answer, which runs while this object exists.
    std::optional<Outcome<T>> outcome;
    if (!online(*link)) {
        outcome.emplace(Failure{Failure::Kind::Connection, QStringLiteral("not connected (waiting to reconnect)")});
    } else {
        try {
            outcome.emplace(work());
        } catch (...) {
            outcome.emplace(Failure::from(std::current_exception()));
            if (outcome->failure().isConnectionLoss())
                setOnline(*link, false);
        }
    }
    // The guard is read on the GUI thread only, where owners live and die.
    deliver(link, [this, token, guard, done = std::move(done), o = std::move(*outcome)]() {
        if (!o.ok())
            noteFailure(o.failure());
        if (guard && !token->load())
            done(o);
    });
}

template <typename Work, typename Done> void RedisClient::request(QObject *owner, Lane lane, Work work, Done done)
{
    using T = std::decay_t<std::invoke_result_t<Work &, Connection &>>;
    Token token = tokenFor(owner);
    QPointer<QObject> guard(owner);
    const void *ownerKey = token.get();
    enqueue(
        [this, link = m_link, token, guard, work = std::move(work), done = std::move(done)](Connection &c) mutable {
            if (!runnable(*link, token))
                return; // the owner is gone or has cancelled: skip the work
            answer<T>(link, token, guard, [&] { return work(c); }, std::move(done));
        },
        lane, ownerKey);
}

template <typename Work, typename Done> void RedisClient::repeat(QObject *owner, const RepeatMemory &memory, Work work, Done done)
{
    using T = std::decay_t<std::invoke_result_t<Work &, Connection &, const Tick &>>;
    Token token = tokenFor(owner);
    QPointer<QObject> guard(owner);
    auto shared = std::make_shared<Work>(std::move(work));
    Repeat r;
    r.token = token;
    r.memory = memory ? memory : newRepeatMemory();
    r.rehearse = [shared](Connection &c, const Tick &t) { (void)(*shared)(c, t); };
    r.run = [this, link = m_link, token, guard, shared, done = std::move(done)](Connection &c, const Tick &t) mutable {
        answer<T>(link, token, guard, [&] { return (*shared)(c, t); }, std::move(done));
    };
    m_repeats.push_back(std::move(r));
    scheduleRepeats();
}

} // namespace ratescope::ui
