// A sliding log's read for its view: the window on a time axis (bucketed when large), the
// capacity a request of cost 1 (and of the policy's cost) would find, and a page of entries.
#pragma once

#include "admin/policy.h"
#include "formats/recognition.h"
#include "formats/usage.h"
#include "keys/logwindow.h"
#include "limiters/algorithm.h"

#include <optional>
#include <utility>

namespace ratescope {
class Connection;
}

namespace ratescope::ui {

// What one read brought back from the worker.
struct LogRead {
    qint64 nowUs = 0;
    std::optional<LimitSpec> spec;
    KeyKind kind;
    QString type;          // the Redis type ("zset", "none", ...)
    qint64 axisFromUs = 0; // the chart's time axis starts here...
    qint64 readFromUs = 0; // ...and the read one window earlier, for the rolling count at its start
    LogWindow window;
    std::optional<Usage> forOne;  // a request of cost 1 now
    std::optional<Usage> forCost; // a request of the policy's cost now (when it is not 1)
    QString peekProblem;
    LogPage page;
};

struct LogReadRequest {
    static constexpr qint64 kEntryCap = 10000; // entries read for one chart, at most
    static constexpr int kBucketsPerWindow = 200;

    QByteArray key;
    std::optional<LimitSpec> spec; // the limits in force; none: from the oldest entry to now
    ScoreUnit unit = ScoreUnit::Auto;
    qint64 nowUs = 0;
    bool history = false; // one window more before the current one
    std::optional<std::pair<qint64, qint64>> filter; // the entries page's time range (else the window)
    qint64 pageOffset = 0;
    int pageSize = 100;
    // What the last read found (its kind, whether its window was over the entry cap): what
    // this read asks ahead, in one round with the rest. A guess proved wrong costs a round.
    std::optional<KeyKind> expected;
    bool expectBucketed = false;
};
// One round when the key is what request.expected says (everything is read ahead together),
// none when the caller read logReadsAhead() along with its own; refuses (UsageError) a key
// that is neither a sorted set nor missing.
LogRead readLog(Connection &c, const LogReadRequest &request);
// What readLog() asks when the key is what request.expected says: the type and classification,
// the window, the peeks and the page. Throws UsageError for a range readLog() refuses.
std::vector<Command> logReadsAhead(Connection &c, const LogReadRequest &request);

} // namespace ratescope::ui
