#include "whatifrun.h"

#include "redis/connection.h"

#include <QHash>

#include <algorithm>

namespace ratescope::ui {

qint64 WhatIfKey::mostDenied() const
{
    qint64 most = 0;
    for (const PerSpec &s : specs)
        most = std::max(most, s.denied);
    return most;
}

WhatIfRun::WhatIfRun(QObject *parent)
    : BackgroundRun(parent)
{
    qRegisterMetaType<WhatIfOutcome>();
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
    m_progress->store(0);
    launch([run = this, progress = m_progress, inspected, trace, specs](Thread &thread) {
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
            options.onProgress = [&progress, &thread](double p) {
                progress->store(std::clamp(p, 0.0, 1.0));
                thread.notifyProgress();
                return !thread.cancelled();
            };
            outcome.result = simulate(*reader, options);
        } catch (const std::exception &e) {
            outcome.error = QString::fromUtf8(e.what());
        }
        // A key seen (denied 0) before another spec denied it keeps that spec's zero; one whose
        // first result was a denial may have missed earlier zero results: they are zero anyway.
        outcome.affectedKeys = affected.size();
        outcome.keys = topKeys(affected, kMaxKeys);
        // `run` is only used on the GUI thread, and only while it exists.
        thread.finish([run, outcome = std::move(outcome)] { emit run->finished(outcome); });
    });
}

double WhatIfRun::progress() const
{
    return m_progress->load();
}

} // namespace ratescope::ui
