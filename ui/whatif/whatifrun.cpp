#include "whatifrun.h"

#include "redis/connection.h"

#include <QHash>
#include <QMetaObject>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace ratescope::ui {

qint64 WhatIfKey::mostDenied() const
{
    qint64 most = 0;
    for (const PerSpec &s : specs)
        most = std::max(most, s.denied);
    return most;
}

// What the run's thread and the GUI-thread object share. `owner` is cleared (under the mutex)
// when the object goes away, so the thread never posts to a destroyed object.
struct WhatIfRun::Shared {
    std::mutex mutex;
    std::condition_variable endedChanged;
    bool ended = false;
    WhatIfRun *owner = nullptr;
    bool progressQueued = false;
    std::atomic<double> progress{0};
    std::atomic<bool> cancelled{false};

    void notifyProgress()
    {
        std::lock_guard lock(mutex);
        if (progressQueued || !owner)
            return;
        progressQueued = true;
        WhatIfRun *o = owner;
        QMetaObject::invokeMethod(
            o,
            [o] {
                if (o->m_shared) {
                    std::lock_guard lock(o->m_shared->mutex);
                    o->m_shared->progressQueued = false;
                }
                emit o->progressed();
            },
            Qt::QueuedConnection);
    }
};

WhatIfRun::WhatIfRun(QObject *parent)
    : QObject(parent)
{
    qRegisterMetaType<WhatIfOutcome>();
}

WhatIfRun::~WhatIfRun()
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

namespace {

// The affected keys, most denied first (then by name), at most `max`.
std::vector<WhatIfKey> topKeys(QHash<QByteArray, WhatIfKey> &all, size_t max)
{
    std::vector<WhatIfKey> keys;
    keys.reserve(size_t(all.size()));
    for (auto it = all.begin(); it != all.end(); ++it)
        keys.push_back(std::move(it.value()));
    all.clear();
    auto before = [](const WhatIfKey &a, const WhatIfKey &b) {
        const qint64 da = a.mostDenied(), db = b.mostDenied();
        return da != db ? da > db : a.key < b.key;
    };
    if (keys.size() > max) {
        std::partial_sort(keys.begin(), keys.begin() + qsizetype(max), keys.end(), before);
        keys.resize(max);
    } else {
        std::sort(keys.begin(), keys.end(), before);
    }
    return keys;
}

} // namespace

void WhatIfRun::start(const ConnectionOptions &inspected, const WhatIfTrace &trace, const std::vector<LimitSpec> &specs)
{
    Q_ASSERT(!m_running);
    m_shared = std::make_shared<Shared>();
    m_shared->owner = this;
    m_running = true;
    std::thread([shared = m_shared, inspected, trace, specs] {
        WhatIfOutcome outcome;
        QHash<QByteArray, WhatIfKey> affected; // keys some spec denied (this thread only)
        try {
            // The inspected server is only read, on a connection of this thread's own.
            std::unique_ptr<Connection> connection;
            std::unique_ptr<TraceReader> reader;
            if (trace.source == WhatIfTrace::Source::LogKeys) {
                connection = std::make_unique<Connection>(inspected);
                connection->connect();
                reader = openLogKeysTrace(*connection, trace.glob, trace.scoreUnit);
            } else {
                // A cost no spec could ever admit is refused with its line before anything runs.
                qint64 smallest = 0;
                for (const LimitSpec &spec : specs)
                    smallest = smallest == 0 ? spec.limit : std::min(smallest, spec.limit);
                reader = openCsvTrace(trace.path, trace.timeUnit, smallest);
            }
            SimOptions options;
            options.specs = specs;
            options.onKey = [&affected, n = specs.size()](int spec, const SimKeyResult &r) {
                if (r.denied <= 0 && !affected.contains(r.key))
                    return;
                WhatIfKey &k = affected[r.key];
                if (k.specs.empty()) {
                    k.key = r.key;
                    k.specs.resize(n);
                }
                k.requests = std::max(k.requests, r.requests);
                if (spec >= 0 && size_t(spec) < n)
                    k.specs[size_t(spec)] = {r.denied, r.firstDenialUs, r.longestDeniedUs};
            };
            Shared *s = shared.get();
            options.onProgress = [s](double p) {
                s->progress.store(std::clamp(p, 0.0, 1.0));
                s->notifyProgress();
                return !s->cancelled.load();
            };
            outcome.result = simulate(*reader, options);
        } catch (const std::exception &e) {
            outcome.error = QString::fromUtf8(e.what());
        }
        // A key seen (denied 0) before another spec denied it keeps that spec's zero; one whose
        // first result was a denial may have missed earlier zero results: they are zero anyway.
        outcome.affectedKeys = affected.size();
        outcome.keys = topKeys(affected, kMaxKeys);
        std::lock_guard lock(shared->mutex);
        if (WhatIfRun *o = shared->owner)
            QMetaObject::invokeMethod(
                o,
                [o, outcome = std::move(outcome)] {
                    o->m_running = false;
                    emit o->finished(outcome);
                },
                Qt::QueuedConnection);
        shared->ended = true;
        shared->endedChanged.notify_all();
    }).detach(); // joined through wait(); a run outliving its page ends by itself
}

void WhatIfRun::cancel()
{
    if (m_shared)
        m_shared->cancelled.store(true);
}

bool WhatIfRun::wait(int timeoutMs)
{
    if (!m_shared)
        return true;
    std::unique_lock lock(m_shared->mutex);
    return m_shared->endedChanged.wait_for(lock, std::chrono::milliseconds(timeoutMs), [this] { return m_shared->ended; });
}

double WhatIfRun::progress() const
{
    return m_shared ? m_shared->progress.load() : 0.0;
}

} // namespace ratescope::ui
