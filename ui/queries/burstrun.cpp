#include "burstrun.h"

#include "admin/audit.h"
#include "redis/connection.h"
#include "base/errors.h"

#include <QRandomGenerator>

#include <mutex>

namespace ratescope::ui {

// What the engine reported and the GUI has not taken yet (shared with the run's thread).
struct BurstRun::Progress {
    std::mutex mutex;
    BurstSnapshot pending;
    size_t slicesTaken = 0; // of the engine's timeline, into `pending` so far
    std::unique_ptr<BurstEngine> engine;
};

BurstRun::BurstRun(ConnectionOptions options, QString ns, QObject *parent)
    : BackgroundRun(parent)
    , m_options(std::move(options))
    , m_ns(std::move(ns))
{
    qRegisterMetaType<BurstOutcome>();
}

QByteArray BurstRun::scratchKey(Algorithm algorithm)
{
    return "ratescope-scratch:boundary:" + algorithmName(algorithm).toUtf8() + ':' +
           QByteArray::number(QRandomGenerator::global()->generate64(), 16);
}

namespace {

QString describe(const std::exception &e)
{
    return QString::fromUtf8(e.what());
}

// `run` is only used on the GUI thread, and only while it exists (Thread::finish).
void deliver(BurstRun *run, BackgroundRun::Thread &thread, BurstOutcome outcome)
{
    thread.finish([run, outcome = std::move(outcome)] { emit run->finished(outcome); });
}

} // namespace

void BurstRun::startBurst(const BurstConfig &config)
{
    m_progress = std::make_shared<Progress>();
    m_progress->engine = std::make_unique<BurstEngine>(m_options, config);
    launch(
        [run = this, progress = m_progress, options = m_options, ns = m_ns, op = m_operator, config](Thread &thread) {
            progress->engine->setProgressCallback([progress, &thread](const BurstProgress &p) {
                {
                    std::lock_guard lock(progress->mutex);
                    BurstSnapshot &s = progress->pending;
                    s.elapsedUs = p.elapsedUs;
                    s.sent = p.sent;
                    s.allowed = p.allowed;
                    s.denied = p.denied;
                    s.errors = p.errors;
                    for (size_t i = progress->slicesTaken; i < p.timeline.size(); ++i)
                        s.newSlices.push_back(p.timeline[i]);
                    progress->slicesTaken = p.timeline.size();
                }
                thread.notifyProgress();
            });
            BurstOutcome outcome;
            try {
                outcome.summary = progress->engine->run();
            } catch (const std::exception &e) {
                outcome.error = describe(e); // nothing was sent: nothing to audit (as the CLI)
            }
            if (outcome.summary) {
                try {
                    Connection c(options);
                    c.connect();
                    AuditLog(c, ns).append(burstAuditEntry(config, *outcome.summary), op);
                    outcome.auditEntries = 1;
                } catch (const std::exception &e) {
                    outcome.auditError = describe(e);
                }
            }
            deliver(run, thread, std::move(outcome));
        },
        [progress = m_progress] { progress->engine->cancel(); });
}

void BurstRun::startBoundary(const std::vector<LimitSpec> &specs)
{
    m_progress = std::make_shared<Progress>();
    launch([run = this, progress = m_progress, options = m_options, ns = m_ns, op = m_operator, specs](Thread &thread) {
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
            if (thread.cancelled())
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
                    AuditLog(c, ns).append(burstAuditEntry(run.key, boundaryAuditParameters(spec), after, run.sent), op);
                    ++outcome.auditEntries;
                } catch (const std::exception &e) {
                    outcome.auditError = describe(e);
                }
            }
            outcome.boundary.push_back(std::move(run));
            {
                std::lock_guard lock(progress->mutex);
                progress->pending.boundaryDone = int(outcome.boundary.size());
            }
            thread.notifyProgress();
        }
        deliver(run, thread, std::move(outcome));
    });
}

BurstSnapshot BurstRun::takeSnapshot()
{
    if (!m_progress)
        return {};
    std::lock_guard lock(m_progress->mutex);
    BurstSnapshot s = std::move(m_progress->pending);
    BurstSnapshot &next = m_progress->pending;
    next = {};
    next.elapsedUs = s.elapsedUs;
    next.sent = s.sent;
    next.allowed = s.allowed;
    next.denied = s.denied;
    next.errors = s.errors;
    next.boundaryDone = s.boundaryDone;
    return s;
}

} // namespace ratescope::ui
