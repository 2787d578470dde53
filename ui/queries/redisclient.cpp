#include "redisclient.h"

#include "redis/connection.h"
#include "connectionworker.h"
#include "ticktimer.h"
#include "base/errors.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QScopeGuard>
#include <QMutex>
#include <QThread>

#include <algorithm>
#include <cmath>

namespace ratescope::ui {

struct RedisClient::Link {
    std::atomic<bool> closing{false};
    std::atomic<bool> online{true}; // the worker's view: false after a connection error
    QMutex mutex;
    RedisClient *client = nullptr; // under mutex: cleared when the client goes away
    // The worker's alone: the server's clock as the last repeats' round read it (TIME), and
    // when that round started on the worker's steady clock.
    qint64 serverUs = 0;
    qint64 serverUsAtNs = 0;
    QElapsedTimer steady;
};

bool RedisClient::runnable(const Link &link, const Token &token)
{
    return !link.closing.load() && !token->load();
}

bool RedisClient::online(const Link &link)
{
    return link.online.load();
}

void RedisClient::setOnline(Link &link, bool online)
{
    link.online.store(online);
}

void RedisClient::deliver(const std::shared_ptr<Link> &link, std::function<void()> answer)
{
    // Posted while the client exists; Qt drops the call if the client is destroyed before it
    // runs.
    QMutexLocker lock(&link->mutex);
    if (link->client)
        QMetaObject::invokeMethod(link->client, std::move(answer), Qt::QueuedConnection);
}

namespace {

RedisClient::Status withInfo(Connection &c, RedisClient::Status s)
{
    try {
        s.info = ServerInfo::fetch(c);
    } catch (const ReplyError &) {
        // INFO may be outside a read-only ACL user's commands; DBSIZE is a read.
        s.info = ServerInfo::fetchWithoutInfo(c);
    }
    return s;
}

} // namespace

RedisClient::Status RedisClient::probe(Connection &c)
{
    QElapsedTimer t;
    t.start();
    RedisClient::Status s;
    if (c.isCluster()) {
        // Every master, one after the other: the cluster is up while any of them answers
        // (ServerInfo names those that do not). The round trip is their average.
        int answered = 0;
        for (const auto &replies : c.onEachMaster({{"PING"}}))
            answered += replies.front().isError() ? 0 : 1;
        s.roundTripMs = double(t.nsecsElapsed()) / 1e6 / std::max(answered, 1);
        return withInfo(c, s);
    }
    // One server: the PING and what ServerInfo reads in one round trip, which is timed (the
    // round of the request they went along with, when they did: RedisClient::repeat).
    const std::vector<Command> ahead = ServerInfo::reads();
    c.prefetch(ahead);
    s.roundTripMs = double(c.lastRoundNs()) / 1e6;
    const auto forget = qScopeGuard([&] { c.forget(ahead); });
    return withInfo(c, s);
}

RedisClient::Status RedisClient::connectAndProbe(Connection &c)
{
    c.connect();
    return probe(c);
}

namespace {

// 0.5 s, 1 s, 2 s, ... 30 s: quick after a blip, patient with a server that is down.
int backoffMs(int failedAttempts)
{
    return int(std::min<qint64>(30000, 500LL << std::min(failedAttempts, 6)));
}

} // namespace

RedisClient::RedisClient(ConnectionOptions options, QObject *parent)
    : QObject(parent)
    , m_endpoint(options.endpoint())
    , m_url(options.toUrl())
    , m_link(std::make_shared<Link>())
{
    m_link->client = this;
    m_thread = new QThread(this);
    m_thread->setObjectName(QStringLiteral("redis %1").arg(m_endpoint));
    // Raised by the destructor: the request under way stops waiting on the network.
    options.abort = AbortSignal::create();
    m_abort = options.abort;
    auto *worker = new ConnectionWorker(std::move(options));
    worker->moveToThread(m_thread);
    connect(m_thread, &QThread::finished, worker, &QObject::deleteLater);
    m_worker = worker;
    m_thread->start();

    m_link->steady.start();
    m_tickTimer.setInterval(kTickMs);
    connect(&m_tickTimer, &QTimer::timeout, this, &RedisClient::tick);
    m_tickTimer.start();
    m_heartbeat = new TickTimer(this);
    m_heartbeat->setClient(this);
    m_heartbeat->setInterval(kHeartbeatMs);
    connect(m_heartbeat, &TickTimer::timeout, this, &RedisClient::heartbeat);
    m_retry.setSingleShot(true);
    connect(&m_retry, &QTimer::timeout, this, &RedisClient::attempt);
}

RedisClient::~RedisClient()
{
    // The request under way gives up its network waits (a silent cluster master, a chain of
    // connect timeouts) within a slice, so the join is short; queued requests never start.
    m_link->closing.store(true);
    m_abort.raise();
    m_thread->quit();
    {
        QMutexLocker lock(&m_link->mutex);
        m_link->client = nullptr; // answers from now on are dropped
    }
    if (!m_thread->wait(QDeadlineTimer(kJoinLimitMs))) {
        // Every network wait (lookups and connects included) is sliced, so this is a worker
        // busy elsewhere than on the network. Its jobs hold only the link, never this object:
        // the thread is left to end by itself and deletes itself then (its worker with it).
        qWarning("ratescope: the connection to %s is still busy %d ms after closing; leaving it to finish", qPrintable(m_endpoint),
                 kJoinLimitMs);
        m_thread->setParent(nullptr);
        connect(m_thread, &QThread::finished, m_thread, &QObject::deleteLater);
    }
}

void RedisClient::retire()
{
    m_link->closing.store(true);
    m_heartbeat->stop();
    m_tickTimer.stop();
    m_retry.stop();
    QObject::disconnect(this, nullptr, nullptr, nullptr);
    // Still destroyed (and waited for) at exit if the worker is slow to finish.
    setParent(QCoreApplication::instance());
    connect(m_thread, &QThread::finished, this, &QObject::deleteLater);
    m_thread->quit();
}

RedisClient::Token RedisClient::tokenFor(QObject *owner)
{
    auto it = m_tokens.find(owner);
    if (it != m_tokens.end())
        return it.value();
    Token token = std::make_shared<std::atomic<bool>>(false);
    m_tokens.insert(owner, token);
    if (owner != this)
        connect(owner, &QObject::destroyed, this, [this, owner] {
            if (Token t = m_tokens.take(owner))
                t->store(true);
        });
    return token;
}

void RedisClient::cancel(QObject *owner)
{
    auto it = m_tokens.find(owner);
    if (it == m_tokens.end())
        return;
    it.value()->store(true);
    it.value() = std::make_shared<std::atomic<bool>>(false);
}

void RedisClient::enqueue(std::function<void(Connection &)> job, Lane lane, const void *ownerKey)
{
    if (m_link->closing.load())
        return; // retired: the worker may be gone already, and nothing would run anyway
    if (m_attemptInTurn) {
        m_held.push_back({std::move(job), lane, ownerKey}); // after the attempt (postRepeats)
        return;
    }
    m_worker->post(std::move(job), lane == Lane::Interactive ? ConnectionWorker::Lane::Interactive : ConnectionWorker::Lane::Background,
                   ownerKey);
}

bool RedisClient::interactiveWaiting() const
{
    return m_worker->interactiveWaiting() > 0;
}

std::function<bool()> RedisClient::betweenRequests() const
{
    // The worker outlives every job it runs.
    return [worker = m_worker] {
        worker->serveInteractive();
        return false;
    };
}

void RedisClient::lockReadOnlyForSession()
{
    m_readOnlyForSession = true;
    setReadOnly(true);
}

void RedisClient::setReadOnly(bool readOnly)
{
    if (m_readOnlyForSession && !readOnly)
        return;
    if (m_readOnly == readOnly)
        return;
    m_readOnly = readOnly;
    emit readOnlyChanged(readOnly);
}

void RedisClient::open()
{
    if (m_state != State::Idle)
        return;
    setState(State::Connecting);
    attempt();
}

void RedisClient::retryNow()
{
    if (m_state != State::Reconnecting && m_state != State::Failed)
        return;
    m_retry.stop();
    attempt();
}

int RedisClient::secondsUntilRetry() const
{
    if (!m_retry.isActive())
        return 0;
    return int(std::ceil(double(m_retryAt.remainingTime()) / 1000.0));
}

int RedisClient::msUntilRetry() const
{
    if (!m_retry.isActive())
        return 0;
    return int(std::max<qint64>(1, m_retryAt.remainingTime()));
}

void RedisClient::attempt()
{
    if (m_attemptPending || m_link->closing.load())
        return;
    m_attemptPending = true;
    m_attemptInTurn = true; // sent with this turn's repeats, once the turn is over
    scheduleRepeats();
}

RedisClient::Attempt RedisClient::attemptJob()
{
    return [this, link = m_link, token = tokenFor(this)](Connection &c, std::vector<Command> &along) {
        // On the worker: `this` only inside the answer, which runs while this object exists.
        if (!runnable(*link, token))
            return;
        std::optional<Outcome<Status>> outcome;
        try {
            // The handshake and the reads in one round trip; the probe's among them, read
            // ahead (not for a cluster: probe() asks every master in turn).
            if (!c.isCluster()) {
                const std::vector<Command> info = ServerInfo::reads();
                along.insert(along.begin(), info.begin(), info.end()); // forgotten with the rest
            }
            if (!c.isConnected()) { // requests made before open() may have connected it already
                c.prefetch(along); // connects: the handshake and the reads in one write
                if (!c.isConnected())
                    c.connect(); // nothing to read ahead
            } else {
                c.readAlong(along); // with the probe's round
            }
            outcome.emplace(probe(c));
            setOnline(*link, true);
        } catch (...) {
            outcome.emplace(Failure::from(std::current_exception()));
            setOnline(*link, false);
        }
        deliver(link, [this, o = std::move(*outcome)] {
            m_attemptPending = false;
            if (o.ok()) {
                m_failedAttempts = 0;
                m_lastError.clear();
                m_credentialsRefused = false;
                m_status = o.value();
                setState(State::Connected);
                emit statusChanged();
                return;
            }
            m_lastError = o.failure().message;
            const auto kind = o.failure().kind;
            m_credentialsRefused = kind == Failure::Kind::Auth;
            if (kind == Failure::Kind::Auth || kind == Failure::Kind::Usage) {
                setState(State::Failed); // retrying cannot help: the user must change something
                return;
            }
            setState(State::Reconnecting);
            scheduleRetry();
        });
    };
}

void RedisClient::scheduleRetry()
{
    const int delay = backoffMs(m_failedAttempts++);
    m_retryAt = QDeadlineTimer(delay);
    m_retry.start(delay);
    emit stateChanged(m_state); // the countdown changed
}

int RedisClient::pacedMs(int wantedMs) const
{
    if (wantedMs <= 0 || !m_status || m_status->roundTripMs <= 0)
        return wantedMs;
    const double floorMs = std::ceil(m_status->roundTripMs * kPaceRoundTrips / 100.0) * 100.0;
    return int(std::max<double>(wantedMs, std::min(floorMs, 600000.0)));
}

void RedisClient::heartbeat()
{
    if (m_heartbeatPending || m_state != State::Connected)
        return;
    m_heartbeatPending = true;
    repeat(this, m_heartbeatMemory, [](Connection &c, const Tick &) { return probe(c); }, [this](const Outcome<Status> &o) {
        m_heartbeatPending = false;
        if (o.ok()) {
            m_status = o.value();
            emit statusChanged();
        }
    });
}

void RedisClient::setManualTicks(bool manual)
{
    if (manual)
        m_tickTimer.stop();
    else if (!m_link->closing.load())
        m_tickTimer.start();
}

void RedisClient::tickNow()
{
    tick();
}

void RedisClient::tick()
{
    emit ticked(++m_ticks);
}

void RedisClient::scheduleRepeats()
{
    if (m_repeatsScheduled)
        return;
    m_repeatsScheduled = true;
    // Once this turn of the event loop is over: every view the tick made due has asked by then.
    QMetaObject::invokeMethod(this, &RedisClient::postRepeats, Qt::QueuedConnection);
}

void RedisClient::postRepeats()
{
    m_repeatsScheduled = false;
    const bool attempting = std::exchange(m_attemptInTurn, false);
    std::vector<Held> held = std::exchange(m_held, {});
    if (!m_repeats.empty() || attempting) {
        auto repeats = std::make_shared<std::vector<Repeat>>(std::exchange(m_repeats, {}));
        static const char turn = 0; // the job's owner key: its repeats' owners keep their order in the interactive lane
        enqueue([link = m_link, repeats, attempt = attempting ? attemptJob() : Attempt()](
                    Connection &c) { runRepeats(c, *link, *repeats, attempt); },
                Lane::Interactive, &turn);
    }
    for (Held &h : held) // in the order they were made
        enqueue(std::move(h.job), h.lane, h.ownerKey);
}

namespace {

std::optional<qint64> timeReplyUs(const std::optional<Reply> &r)
{
    if (!r || !r->isArray() || r->elements().size() != 2)
        return std::nullopt;
    bool secondsOk = false;
    bool microsOk = false;
    const qint64 seconds = r->elements()[0].bytes().toLongLong(&secondsOk);
    const qint64 micros = r->elements()[1].bytes().toLongLong(&microsOk);
    if (!secondsOk || !microsOk)
        return std::nullopt;
    return seconds * 1000000 + micros;
}

} // namespace

void RedisClient::runRepeats(Connection &c, Link &link, std::vector<Repeat> &repeats, const Attempt &attempt)
{
    const qint64 startedNs = link.steady.nsecsElapsed();
    Tick tick;
    if (link.serverUs > 0)
        tick.predictedNowUs = link.serverUs + (startedNs - link.serverUsAtNs) / 1000;
    // What each will read, rehearsed on its last replies, and the clock for the next turn: one
    // read-along, sent with the first request any of them makes (or with the handshake).
    std::vector<Command> along;
    if ((attempt || online(link)) && !link.closing.load()) {
        for (Repeat &r : repeats)
            if (runnable(link, r.token)) {
                const std::vector<Command> plan = c.rehearse([&] { r.rehearse(c, tick); }, r.memory->last);
                along.insert(along.end(), plan.begin(), plan.end());
            }
        along.push_back({"TIME"});
        if (!attempt)
            c.readAlong(along);
    }
    if (attempt)
        attempt(c, along); // connects (online or not, for the repeats below) and answers
    for (Repeat &r : repeats) {
        if (!runnable(link, r.token))
            continue;
        Connection::Transcript transcript;
        c.setTranscript(&transcript);
        r.run(c, tick);
        c.setTranscript(nullptr);
        r.memory->last = std::move(transcript);
    }
    if (const auto serverUs = timeReplyUs(c.takePrefetched({"TIME"}))) {
        link.serverUs = *serverUs;
        link.serverUsAtNs = startedNs;
    }
    c.forget(along); // what nobody asked: nothing read now answers a later read
}

void RedisClient::noteFailure(const Failure &failure)
{
    if (m_state != State::Connected)
        return;
    if (failure.kind == Failure::Kind::Auth) {
        m_lastError = failure.message;
        m_credentialsRefused = true;
        setState(State::Failed);
    } else if (failure.isConnectionLoss()) {
        m_lastError = failure.message;
        setState(State::Reconnecting);
        scheduleRetry();
    }
}

void RedisClient::setState(State state)
{
    if (state == State::Connected) {
        m_hasConnected = true;
        m_heartbeat->start();
    } else {
        m_heartbeat->stop();
    }
    if (m_state == state)
        return;
    m_state = state;
    emit stateChanged(state);
}

} // namespace ratescope::ui
