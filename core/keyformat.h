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
    ForeignSlidingLog,  // a sorted set whose scores are epoch times (s, ms or us)
    CounterWindow,      // a string integer named <base>:<window id>
    ForeignTokenBucket, // a hash with a tokens field and a timestamp field
};

struct KeyClass {
    KeyFormat format = KeyFormat::Other;
    ScoreUnit unit = ScoreUnit::Auto; // ForeignSlidingLog: the detected (or declared) unit
    QByteArray base;                  // CounterWindow: the key without ":<window id>"
    qint64 windowId = 0;              // CounterWindow
    qint64 windowSeconds = 0;         // CounterWindow: inferred from the id and the clock

    // The algorithm this format implements, when it says (a counter window may be fixed or
    // sliding: that is the policy's to say).
    std::optional<Algorithm> algorithm() const;
    bool isLimiter() const { return format != KeyFormat::Other; }
    // "sliding-log", "sliding-log (ms scores)", "counter window", ...
    QString label() const;
};

// The score unit an epoch-like score implies: about 1e9 s, 1e12 ms, 1e15 us for dates
// between 2001 and 2286; Auto when it looks like no epoch time.
ScoreUnit detectScoreUnit(double score);

// The window length (s) for which `id` = floor(epoch seconds / window) is the current or
// previous window at `nowSeconds`, among the usual window lengths; 0 when none fits.
qint64 inferWindowSeconds(qint64 id, qint64 nowSeconds);

// Splits "<base>:<digits>" into base and id.
bool splitCounterWindowKey(const QByteArray &key, QByteArray *base, qint64 *id);

// The commands that tell a key of this Redis type apart, and the classification from their
// replies (in the same order). `nowUs` is the server's clock; `declaredUnit` a policy's.
std::vector<Command> sampleCommands(const QByteArray &key, const QByteArray &type);
KeyClass classify(const QByteArray &key, const QByteArray &type, const std::vector<Reply> &samples, qint64 nowUs,
                  ScoreUnit declaredUnit = ScoreUnit::Auto);

// The format Ratescope's own script for this algorithm writes.
KeyFormat ownFormat(Algorithm a);

// Whether a sorted-set member is one of Ratescope's ticket members ("17", "245:4", ...).
bool isTicketMember(const QByteArray &member);

} // namespace ratescope
