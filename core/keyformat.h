// Recognising limiter keys: Ratescope's own formats and those other services write (docs/key-formats.md).
#pragma once

#include "algorithm.h"
#include "policy.h"
#include "resp.h"

#include <optional>

namespace ratescope {

enum class KeyFormat {
    Other,              // not a limiter we recognise
    SlidingLog,         // Ratescope's sorted set (ticket members, microsecond scores)
    SlidingCounter,     // Ratescope's hash {w, c, p}
    FixedWindow,        // Ratescope's hash {w, n}
    TokenBucket,        // Ratescope's hash {tk, fr, ts}
    Gcra,               // Ratescope's hash {tat, f}
    SlidingBuckets,     // Ratescope's hash {ws, bn, t, l, h, b<id>...}
    ForeignSlidingLog,  // a sorted set whose scores are epoch times (s, ms or us)
    CounterWindow,      // a string integer named <base>:<window id>
    ForeignTokenBucket, // a hash with a tokens field and a timestamp field
    Library,            // another library's or gateway's limiter, read by `reader` (limiterformat.h)
};

class LimiterFormat;

struct KeyClass {
    KeyFormat format = KeyFormat::Other;
    ScoreUnit unit = ScoreUnit::Auto;      // ForeignSlidingLog: the detected (or declared) unit
    QByteArray base;                       // CounterWindow: the key without ":<window id>"
    qint64 windowId = 0;                   // CounterWindow
    qint64 windowSeconds = 0;              // CounterWindow: inferred from the id and the clock
    const LimiterFormat *reader = nullptr; // Library
    qint64 windowUs = 0;                   // Library: a window the key states (its period, its unit)
    std::optional<LimitSpec> keyLimits;    // Library: limits the key itself states (Python limits)

    // The algorithm this format implements, when it says (a counter window may be fixed or
    // sliding: that is the policy's to say).
    std::optional<Algorithm> algorithm() const;
    bool isLimiter() const { return format != KeyFormat::Other; }
    // The limiter a key belongs to, the one row it is listed as: a counter window's base, a
    // two-key format's first key; the key itself otherwise.
    QByteArray subject(const QByteArray &key) const { return base.isEmpty() ? key : base; }
    // Whether its state can be read (not an opaque format, not a hash it only recognises).
    bool readable() const;
    // "sliding-log", "sliding-log (ms scores)", "counter window", ...
    QString label() const;
};

// The score unit an epoch-like score implies: about 1e9 s, 1e12 ms, 1e15 us for dates
// between 2001 and 2286; Auto when it looks like no epoch time.
ScoreUnit detectScoreUnit(double score);

// The window length (s) for which `id` = floor(epoch seconds / window) is the current or
// previous window at `nowSeconds`, among the usual window lengths; 0 when none fits.
qint64 inferWindowSeconds(qint64 id, qint64 nowSeconds);

// The first of `lengths` (in any unit) for which `index` = floor(now / length) is the current
// or previous window at `now` (the same unit); 0 when none fits. inferWindowSeconds, and the
// readers of other libraries' window indexes, use it.
qint64 windowOfIndex(qint64 index, qint64 now, std::initializer_list<qint64> lengths);

// Splits "<base>:<digits>" into base and id.
bool splitCounterWindowKey(const QByteArray &key, QByteArray *base, qint64 *id);
// The key of a counter window's window `id`: "<base>:<id>".
QByteArray counterWindowKey(const QByteArray &base, qint64 id);
// The keys of a counter window's current and previous windows at `nowUs`: "<base>:<id>",
// "<base>:<id - 1>", id = nowUs / windowUs.
std::pair<QByteArray, QByteArray> counterWindowKeys(const QByteArray &base, qint64 windowUs, qint64 nowUs);

// Appends the commands that tell a key of this Redis type apart (how many: none for a type
// that is never a limiter); classify() below reads their replies, in the same order. `nowUs`
// is the server's clock; `declaredUnit` a policy's.
size_t appendSampleCommands(std::vector<Command> &out, const QByteArray &key, const QByteArray &type);
std::vector<Command> sampleCommands(const QByteArray &key, const QByteArray &type); // the same, alone
// `declaredFormat` a policy's format (limiterformat.h): keys of its shape are read that way;
// `declaredWindowUs` its window: a counter window <base>:<id> of it is recognised whatever its length.
KeyClass classify(const QByteArray &key, const QByteArray &type, const std::vector<Reply> &samples, qint64 nowUs,
                  ScoreUnit declaredUnit = ScoreUnit::Auto, const QString &declaredFormat = {}, qint64 declaredWindowUs = 0);

// Whether the key belongs to another service's limiter (its library's log, counters, bucket):
// check and burst refuse it, with this message naming what it is; empty for Ratescope's own
// formats and for keys that are no limiter.
QString notOursToDecide(const QString &shownKey, const KeyClass &kind);

// The format Ratescope's own script for this algorithm writes.
KeyFormat ownFormat(Algorithm a);

// Whether a sorted-set member is one of Ratescope's ticket members ("17", "245:4", ...).
bool isTicketMember(const QByteArray &member);

} // namespace ratescope
