// What if: replaying a trace of requests through limit specs with the real scripts and an
// explicit now, on a private sandbox redis-server (never on the server being inspected).
// docs/cli.md ("simulate") describes the trace formats and the results.
#pragma once

#include "limiters/algorithm.h"
#include "limiters/limiter.h"
#include "admin/policy.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

class QFile;

namespace ratescope {

class Connection;

struct TraceRequest {
    qint64 timeUs = 0; // since the epoch, 0..2^52
    QByteArray key;
    qint64 cost = 0; // 0: the spec's cost
};

enum class TraceTimeUnit { Auto, Microseconds, Milliseconds, Iso8601 };
// "us", "ms", "iso", "auto"; parseTraceTimeUnit throws UsageError naming the choices.
QString traceTimeUnitName(TraceTimeUnit unit);
TraceTimeUnit parseTraceTimeUnit(const QString &name);

// A stream of requests grouped by key, each key's requests in time order (readers sort as
// needed, spilling sorted runs to temporary files past a memory budget, so a trace is never
// held whole in memory). Equal times keep the trace's order.
class TraceReader {
public:
    virtual ~TraceReader() = default;
    // Appends up to `max` requests to `out`; false when nothing was appended (the end).
    // Throws UsageError naming the file and line for a bad row, IoError for a read failure.
    virtual bool next(std::vector<TraceRequest> &out, int max) = 0;
    virtual QString description() const = 0; // "trace.csv (98,311 requests)", "logs of api:* ..."
    virtual bool admittedOnly() const = 0;   // true: a lower bound of the real traffic
    virtual double progress() const = 0;     // 0..1, for progress bars
    // What was read but not exactly as written (a CSV trace's ISO times with digits past the
    // µs, which are dropped): one sentence each, for a warning before the replay.
    virtual QStringList warnings() const { return {}; }
};

// A CSV file of `time,key[,cost]` rows (RFC 4180 quoting; an optional header row whose
// first field is "time", after an optional UTF-8 byte order mark). Times: integer µs (Auto,
// Microseconds) or ms since the epoch, or ISO 8601 (Iso8601; Auto takes a row with a '-' or 'T'
// after its first digit as ISO 8601). The whole file is read and checked here, before anything
// runs: a bad row throws UsageError "FILE line N: why" (also a time with spaces around it, an
// empty cost field). maxCost > 0 refuses costs above it (the smallest limit).
std::unique_ptr<TraceReader> openCsvTrace(const QString &path, TraceTimeUnit unit, qint64 maxCost = 0);
// The same from a file opened already (the CLI opens a path by its exact bytes, which a QString
// path cannot always carry); name is what the description and messages call it.
std::unique_ptr<TraceReader> openCsvTrace(QFile &file, const QString &name, TraceTimeUnit unit, qint64 maxCost = 0);
// The sorted-set logs matching `glob` on `inspected`, read only (SCAN + ZRANGE, nothing is
// written): each entry is an admitted request at its score (s, ms or µs, as detected or as
// `unit` declares); Ratescope's own members carry their cost ("245:4"). Sorted sets that
// are not limiter logs are skipped.
std::unique_ptr<TraceReader> openLogKeysTrace(Connection &inspected, const QByteArray &glob, ScoreUnit unit = ScoreUnit::Auto);
// A burst timeline CSV (elapsed_ms,allowed,denied,errors,unknown per slice, as `burst
// --timeline` writes it): the requests of each slice (allowed + denied + unknown), spread
// evenly over the slice, all on `key`, the burst starting at `startUs`. A timeline of more than
// kMaxTimelineRequests requests in all is refused (UsageError naming the line) before any is
// expanded. A UTF-8 byte order mark before the header is skipped, as in a CSV trace.
inline constexpr qint64 kMaxTimelineRequests = 100000000; // 10^8: about 10 minutes of replay
std::unique_ptr<TraceReader> openBurstTimelineTrace(const QString &path, const QByteArray &key, qint64 startUs);
std::unique_ptr<TraceReader> openBurstTimelineTrace(QFile &file, const QString &name, const QByteArray &key, qint64 startUs);

struct SimKeyResult {
    QByteArray key;
    qint64 requests = 0, allowed = 0, denied = 0;
    std::optional<qint64> firstDenialUs;
    // The longest run of consecutive denied requests: from its first to its last request
    // (µs), and how many requests it held.
    qint64 longestDeniedUs = 0;
    qint64 longestDeniedRun = 0;
};

struct SimBin {
    qint64 fromUs = 0; // aligned to a multiple of the bin width since the epoch
    qint64 allowed = 0, denied = 0;
};

struct SimSpecResult {
    LimitSpec spec;
    qint64 requests = 0, allowed = 0, denied = 0, keys = 0, keysDenied = 0;
    // Equal-width bins, from the first request's bin to the last one's (at most
    // kMaxSimBins; the width grows through 1, 2, 10, 20, 100 ... ms, 1 s, 2 s, 10 s ... as
    // the trace spans more time).
    std::vector<SimBin> timeline;
};

inline constexpr int kMaxSimBins = 200;

struct SimResult {
    std::vector<SimSpecResult> specs;
    QString traceDescription;
    bool admittedOnly = false;
    bool cancelled = false;
    qint64 firstUs = 0, lastUs = 0; // the trace's first and last request times
    qint64 binUs = 0;               // the timeline's bin width
};

struct SimOptions {
    std::vector<LimitSpec> specs; // specs[0] is the baseline ("now"); the rest are compared to it
    int pipeline = 256;           // commands per round trip to the sandbox
    // Optional: every decision, per key in time order.
    std::function<void(int spec, const TraceRequest &, const Decision &)> onDecision;
    // Optional: each key's result per spec once its requests are done.
    std::function<void(int spec, const SimKeyResult &)> onKey;
    // Optional: called between batches with 0..1; return false to cancel.
    std::function<bool(double)> onProgress;
    // Optional: where the sandbox redis-server comes from (default: redis-server on PATH).
    QString serverExecutable;
};

// Blocking; runs on the calling thread (the console calls it from a worker). Starts its own
// SandboxServer and stops it before returning; throws IoError when redis-server is missing,
// UsageError for a request whose cost exceeds a spec's limit or a time beyond 2^52 µs.
SimResult simulate(TraceReader &trace, const SimOptions &options);

// "40 per 10s sliding-log" (cost shown when it is not 1).
QString describeSpec(const LimitSpec &spec);
// "3 of 5 keys throttled, 41 of 138 requests denied" / "no key throttled, all 138 requests allowed".
QString simOutcomeText(const SimSpecResult &result);
// "ALGO:LIMIT/WINDOW" as --compare takes it ("token-bucket:40/10s"), with "/B" after a
// sliding-buckets window for its sub-buckets ("sliding-buckets:300/1m/12"; 60 without);
// throws UsageError.
LimitSpec parseCompareSpec(const QString &text, qint64 cost);

} // namespace ratescope
