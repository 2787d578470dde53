// One What-if comparison run from the console, on a thread of its own: the trace is opened
// there (a log trace with its own connection to the inspected server, which it only reads),
// then the core's simulate() replays it against every spec in a private sandbox server.
// Nothing is ever written to the inspected server, so it runs under the read-only lock too.
#pragma once

#include "backgroundrun.h"
#include "redis/connectionoptions.h"
#include "admin/policy.h"
#include "load/simulator.h"

#include <QString>

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

namespace ratescope::ui {

// Where the trace comes from.
struct WhatIfTrace {
    enum class Source { LogKeys, CsvFile };
    Source source = Source::LogKeys;
    QByteArray glob; // LogKeys: the keys whose logs are read
    ScoreUnit scoreUnit = ScoreUnit::Auto;
    QString path; // CsvFile
    TraceTimeUnit timeUnit = TraceTimeUnit::Auto;
};

// A key that some spec denied: its requests, and per spec what that spec did to it (a spec
// that denied it nothing has denied 0 and no first denial).
struct WhatIfKey {
    QByteArray key;
    qint64 requests = 0;
    struct PerSpec {
        qint64 denied = 0;
        std::optional<qint64> firstDenialUs;
        qint64 longestDeniedUs = 0;
    };
    std::vector<PerSpec> specs;
    qint64 mostDenied() const;
};

// What a run came back with.
struct WhatIfOutcome {
    std::optional<SimResult> result; // empty when it could not run: see error
    QString error;
    std::vector<WhatIfKey> keys; // the affected keys, most denied first, at most kMaxKeys
    qint64 affectedKeys = 0;     // all keys denied under some spec (keys.size() when not truncated)
};

// Lives on the GUI thread; the work runs on a thread of its own (BackgroundRun), so a run that
// outlasts the page ends by itself. cancel() stops it at the simulator's next progress report
// (the run then ends as cancelled).
class WhatIfRun : public BackgroundRun {
    Q_OBJECT
public:
    static constexpr size_t kMaxKeys = 10000; // affected keys kept for the table

    explicit WhatIfRun(QObject *parent = nullptr);

    // inspected: how to reach the inspected server (a log trace opens its own connection with
    // it); unused for a file.
    void start(const ConnectionOptions &inspected, const WhatIfTrace &trace, const std::vector<LimitSpec> &specs);
    double progress() const; // 0..1, as the simulator last reported it

signals:
    void finished(const ratescope::ui::WhatIfOutcome &outcome);

private:
    std::shared_ptr<std::atomic<double>> m_progress = std::make_shared<std::atomic<double>>(0);
};

} // namespace ratescope::ui

Q_DECLARE_METATYPE(ratescope::ui::WhatIfOutcome)
