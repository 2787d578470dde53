#include "burstrun.h"

#include "admin/audit.h"
#include "redis/connection.h"
#include "base/errors.h"

#include <QRandomGenerator>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace ratescope::ui {

// What the run's thread and the GUI-thread object share. `owner` is cleared (under the mutex)
// when the object goes away, so the thread never posts to a destroyed object.
struct BurstRun::Shared {
    std::mutex mutex;
    std::condition_variable endedChanged;
    bool ended = false;
    BurstRun *owner = nullptr;
    bool progressQueued = false;
    BurstSnapshot pending;
    size_t slicesTaken = 0; // of the engine's timeline, into `pending` so far
    std::atomic<bool> cancelled{false};
    std::unique_ptr<BurstEngine> engine;

    // Under the lock: one queued notification at a time, however often the engine reports.
    void notifyProgressLocked()
    {
        if (progressQueued || !owner)
            return;
        progressQueued = true;
        BurstRun *o = owner;
        QMetaObject::invokeMethod(
            o, [o] { emit o->progressed(); }, Qt::QueuedConnection);
    }
};

BurstRun::BurstRun(ConnectionOptions options, QString ns, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    , m_ns(std::move(ns))
{
    qRegisterMetaType<BurstOutcome>();
}

BurstRun::~BurstRun()
{
    if (!m_shared)
        return;
    {
        std::lock_guard lock(m_shared->mutex);
        m_shared->owner = nullptr;
    }
    cancel();
    wait(kCloseWaitMs);
}

QByteArray BurstRun::scratchKey(Algorithm algorithm)
{
    return "ratescope-scratch:boundary:" + algorithmName(algorithm).toUtf8() + ':' +
           QByteArray::number(QRandomGenerator::global()->generate64(), 16);
}

void BurstRun::launch(std::function<void(Shared &)> work)
{
    m_running = true;
    m_shared->owner = this;
    std::thread([shared = m_shared, work = std::move(work)] {
        work(*shared);
        std::lock_guard lock(shared->mutex);
        shared->ended = true;
        shared->endedChanged.notify_all();
    }).detach(); // joined through wait(); a run outliving its page ends by itself
}

namespace {

QString describe(const std::exception &e)
{
    return QString::fromUtf8(e.what());
}

void post(std::mutex &mutex, BurstRun *const &owner, BurstOutcome outcome, const std::function<void(BurstRun *, BurstOutcome)> &deliver)
{
    std::lock_guard lock(mutex);
    if (BurstRun *o = owner)
        QMetaObject::invokeMethod(
            o, [o, outcome = std::move(outcome), deliver] { deliver(o, outcome); }, Qt::QueuedConnection);
}

} // namespace

void BurstRun::startBurst(const BurstConfig &config)
{
    Q_ASSERT(!m_running);
    m_shared = std::make_shared<Shared>();
    m_shared->engine = std::make_unique<BurstEngine>(m_options, config);
    Shared *shared = m_shared.get();
    m_shared->engine->setProgressCallback([shared](const BurstProgress &p) {
        std::lock_guard lock(shared->mutex);
        BurstSnapshot &s = shared->pending;
        s.elapsedUs = p.elapsedUs;
        s.sent = p.sent;
        s.allowed = p.allowed;
        s.denied = p.denied;
        s.errors = p.errors;
        for (size_t i = shared->slicesTaken; i < p.timeline.size(); ++i)
            s.newSlices.push_back(p.timeline[i]);
        shared->slicesTaken = p.timeline.size();
        shared->notifyProgressLocked();
    });
    launch([options = m_options, ns = m_ns, config](Shared &shared) {
        BurstOutcome outcome;
        try {
            outcome.summary = shared.engine->run();
        } catch (const std::exception &e) {
            outcome.error = describe(e); // nothing was sent: nothing to audit (as the CLI)
        }
        if (outcome.summary) {
            try {
                Connection c(options);
                c.connect();
                AuditLog(c, ns).append(burstAuditEntry(config, *outcome.summary));
                outcome.auditEntries = 1;
            } catch (const std::exception &e) {
                outcome.auditError = describe(e);
            }
        }
        post(shared.mutex, shared.owner, std::move(outcome), [](BurstRun *o, const BurstOutcome &out) {
            o->m_running = false;
            emit o->finished(out);
        });
    });
}

void BurstRun::startBoundary(const std::vector<LimitSpec> &specs)
{
    Q_ASSERT(!m_running);
    m_shared = std::make_shared<Shared>();
    launch([options = m_options, ns = m_ns, specs](Shared &shared) {
        BurstOutcome outcome;
        // One connection for the whole test: the scenarios run one after the other, so each
        // has the server to itself at its boundary.
        Connection c(options);
        try {
            c.connect();
        } catch (const std::exception &e) {
            outcome.error = describe(e);
        }
        for (const LimitSpec &spec : outcome.error.isEmpty() ? specs : std::vector<LimitSpec>{}) {
            if (shared.cancelled.load())
                break;
            BoundaryRun run{spec, scratchKey(spec.algorithm), std::nullopt, {}, 0};
            BoundaryScenario scenario(c, run.key, spec);
            try {
                run.result = scenario.run();
            } catch (const std::exception &e) {
                run.error = describe(e);
            }
            run.sent = scenario.requestsSent();
            if (run.sent > 0) { // it wrote: audited, result or not (as the CLI)
                const QJsonObject after = run.result ? run.result->toJson() : QJsonObject{{QStringLiteral("error"), run.error}};
                try {
                    AuditLog(c, ns).append(burstAuditEntry(run.key, boundaryAuditParameters(spec), after, run.sent));
                    ++outcome.auditEntries;
                } catch (const std::exception &e) {
                    outcome.auditError = describe(e);
                }
            }
            outcome.boundary.push_back(std::move(run));
            std::lock_guard lock(shared.mutex);
            shared.pending.boundaryDone = int(outcome.boundary.size());
            shared.notifyProgressLocked();
        }
        post(shared.mutex, shared.owner, std::move(outcome), [](BurstRun *o, const BurstOutcome &out) {
            o->m_running = false;
            emit o->finished(out);
        });
    });
}

void BurstRun::cancel()
{
    if (!m_shared)
        return;
    m_shared->cancelled.store(true);
    if (m_shared->engine)
        m_shared->engine->cancel();
}

bool BurstRun::wait(int timeoutMs)
{
    if (!m_shared)
        return true;
    std::unique_lock lock(m_shared->mutex);
    return m_shared->endedChanged.wait_for(lock, std::chrono::milliseconds(timeoutMs), [this] { return m_shared->ended; });
}

BurstSnapshot BurstRun::takeSnapshot()
{
    if (!m_shared)
        return {};
    std::lock_guard lock(m_shared->mutex);
    BurstSnapshot s = std::move(m_shared->pending);
    m_shared->pending = {};
    m_shared->pending.elapsedUs = s.elapsedUs;
    m_shared->pending.sent = s.sent;
    m_shared->pending.allowed = s.allowed;
    m_shared->pending.denied = s.denied;
    m_shared->pending.errors = s.errors;
    m_shared->pending.boundaryDone = s.boundaryDone;
    m_shared->progressQueued = false;
    return s;
}

} // namespace ratescope::ui
