// The limiters other libraries and gateways keep in Redis (docs/key-formats.md, "Other
// libraries"): one reader per format, each with its detection rule and its state-to-usage
// rule, behind one interface that classification, usage, inspection and reset all go through.
// Adding a format is adding one file in core/formats/ (and a line in the registry).
#pragma once

#include "algorithm.h"
#include "resp.h"

#include <optional>
#include <QJsonObject>
#include <vector>

namespace ratescope {

struct KeyClass;
struct Usage;

class LimiterFormat {
public:
    virtual ~LimiterFormat() = default;

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
    virtual bool match(const QByteArray &key, const Reply &sample, qint64 nowUs, bool declared, KeyClass &kind) const = 0;

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
    virtual std::optional<KeyClass> nameKind(const QByteArray &name, const LimitSpec *spec, bool declared) const;
    // For formats kept in several keys: the other keys whose existence makes `key` (no limiter
    // by its own shape, such as a Laravel counter without its policy) the first key of one of
    // this format's limiters.
    virtual QByteArrayList probeKeys(const QByteArray &key) const
    {
        Q_UNUSED(key);
        return {};
    }
    // Every key of the limiter that can hold state at nowUs (reset deletes those that exist).
    virtual QByteArrayList keys(const KeyClass &kind, qint64 nowUs) const;
    // The reads that usage() and state() take, pipelined by the caller. `spec` is the limits
    // in force when known (a window in the limits may pick the window key to read).
    virtual std::vector<Command> read(const KeyClass &kind, const LimitSpec *spec, qint64 nowUs) const = 0;
    // What a request of spec.cost would be told now, from read()'s replies; the library's
    // own rule, in microseconds. Throws UnexpectedReplyError for a state it cannot read.
    virtual Usage usage(const KeyClass &kind, const std::vector<Reply> &replies, const LimitSpec &spec, qint64 nowUs) const = 0;
    // The stored state as people read it, for inspect and the key view.
    virtual QJsonObject state(const KeyClass &kind, const std::vector<Reply> &replies, qint64 nowUs) const = 0;
};

// Every format, in detection order (the most specific first).
const std::vector<const LimiterFormat *> &limiterFormats();
// Those of one Redis type ("string", "hash", "zset", "list"), in the same order.
const std::vector<const LimiterFormat *> &limiterFormatsOfType(const QByteArray &type);
// nullptr when there is none of that name.
const LimiterFormat *findLimiterFormat(const QString &name);
// Throws UsageError naming the known formats.
const LimiterFormat *parseLimiterFormat(const QString &name);

} // namespace ratescope
