// What a key is: which format wrote it (one of Ratescope's algorithms, another library's, or
// another service's log or counters), with what recognition learnt of it (KeyKind), and the
// interface of the readers that decode other libraries' state (FormatReader; one per
// library in formats/readers/). The two refer to each other, so they are one component.
#pragma once

#include "formats/scoreunit.h"
#include "limiters/algorithm.h"
#include "redis/resp.h"

#include <optional>
#include <QJsonObject>
#include <vector>

namespace ratescope {

struct Usage;
class FormatReader;

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
    Library,            // another library's or gateway's limiter, decoded by `reader` (a FormatReader)
};

struct KeyKind {
    KeyFormat format = KeyFormat::Other;
    ScoreUnit unit = ScoreUnit::Auto;      // ForeignSlidingLog: the detected (or declared) unit
    QByteArray base;                       // CounterWindow: the key without ":<window id>"
    qint64 windowId = 0;                   // CounterWindow
    qint64 windowSeconds = 0;              // CounterWindow: inferred from the id and the clock
    const FormatReader *reader = nullptr; // Library
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

class FormatReader {
public:
    virtual ~FormatReader() = default;

    // "rate-limiter-flexible": what --format and a policy's "format" take.
    virtual QString name() const = 0;
    // What the Format column says: the library, and the algorithm when it has several.
    virtual QString label() const = 0;
    // The project that writes it, with its language: "rate-limiter-flexible (Node.js)".
    virtual QString library() const = 0;
    // The key shape, as people configure it: "rlflx:<key>".
    virtual QString keyShape() const = 0;
    // The Redis type detection looks at.
    virtual const char *type() const = 0;
    // The algorithm family the key view draws it as; nullopt when the policy says (a counter
    // shape shared by a fixed and a sliding window) or when the state is opaque.
    virtual std::optional<Algorithm> family() const = 0;
    // False for a state Ratescope recognises but never decodes (bucket4j): listed, never read.
    virtual bool readable() const { return true; }

    // Whether `key` (of type(), `sample` being the reply to sampleCommands) holds this
    // format's state. Without `declared` only shapes nothing else has (a default prefix, the
    // limits in the key, a window index matching the clock); with it (a policy names this
    // format) any key of the right shape. Fills kind's base (the limiter's name, the one row
    // it is listed as), window and the limits the key states.
    virtual bool match(const QByteArray &key, const Reply &sample, qint64 nowUs, bool declared, KeyKind &kind) const = 0;

    // For formats whose keys carry their window (a bucket index, a window start): the glob
    // that finds the window keys of the limiter listed as `name` (empty when `name` is no such
    // limiter's), the limiter a window key belongs to at nowUs (empty when it is none of this
    // format's windows: a bucket far from now, another shape), and the limiter `name` as a
    // kind (its window from the name or from `spec`), so that keys() names its windows.
    // Reset deletes every window of a name; check, peek and the views take the name.
    virtual QByteArray windowKeysGlob(const QByteArray &name, bool declared) const
    {
        Q_UNUSED(name);
        Q_UNUSED(declared);
        return {};
    }
    virtual QByteArray limiterNameOf(const QByteArray &windowKey, qint64 nowUs) const
    {
        Q_UNUSED(windowKey);
        Q_UNUSED(nowUs);
        return {};
    }
    virtual std::optional<KeyKind> nameKind(const QByteArray &name, const LimitSpec *spec, bool declared) const;
    // For formats kept in several keys: the other keys whose existence makes `key` (no limiter
    // by its own shape, such as a Laravel counter without its policy) the first key of one of
    // this format's limiters.
    virtual QByteArrayList probeKeys(const QByteArray &key) const
    {
        Q_UNUSED(key);
        return {};
    }
    // Every key of the limiter that can hold state at nowUs (reset deletes those that exist).
    virtual QByteArrayList keys(const KeyKind &kind, qint64 nowUs) const;
    // The reads that usage() and state() take, pipelined by the caller. `spec` is the limits
    // in force when known (a window in the limits may pick the window key to read).
    virtual std::vector<Command> read(const KeyKind &kind, const LimitSpec *spec, qint64 nowUs) const = 0;
    // What a request of spec.cost would be told now, from read()'s replies; the library's
    // own rule, in microseconds. Throws UnexpectedReplyError for a state it cannot read.
    virtual Usage usage(const KeyKind &kind, const std::vector<Reply> &replies, const LimitSpec &spec, qint64 nowUs) const = 0;
    // The stored state as people read it, for inspect and the key view.
    virtual QJsonObject state(const KeyKind &kind, const std::vector<Reply> &replies, qint64 nowUs) const = 0;
};

// The format Ratescope's own script for this algorithm writes.
KeyFormat ownFormat(Algorithm a);

// Whether a sorted-set member is one of Ratescope's ticket members ("17", "245:4", ...).
bool isTicketMember(const QByteArray &member);

// Whether the key belongs to another service's limiter (its library's log, counters, bucket):
// check and burst refuse it, with this message naming what it is; empty for Ratescope's own
// formats and for keys that are no limiter.
QString notOursToDecide(const QString &shownKey, const KeyKind &kind);

} // namespace ratescope
