// What the readers of other libraries' formats share: parsing another service's values
// safely, and the usage rules of the algorithm families (a counter whose window ends at a
// known time, two weighted windows, GCRA) and the shapes several readers share (a counter
// ending with its TTL, a TAT in a string), each in microseconds.
#pragma once

#include "base/errors.h"
#include "base/keytext.h"
#include "formats/keykind.h"
#include "formats/keyshapes.h"
#include "formats/usage.h"

#include <optional>

namespace ratescope::formats {

// A whole decimal integer and nothing else ("12", "-3"); nullopt otherwise.
std::optional<qint64> integerValue(const QByteArray &s);
// A finite decimal number ("1732459200.123", "7", "1e9"); nullopt otherwise.
std::optional<double> numberValue(const QByteArray &s);
// A reply's integer or number value; nullopt for nil and anything else.
std::optional<qint64> integerReply(const Reply &r);
std::optional<double> numberReply(const Reply &r);

// Seconds (a double another service wrote) as microseconds, clamped like scoreToUs.
qint64 secondsToUs(double seconds);
// A number another service wrote as an integer clamped to +-2^61, so that sums and
// differences of a few of them cannot overflow (NaN: 0).
qint64 saneInteger(double v);

// Splits "<prefix><rest>" for any of the prefixes; the rest is non-empty.
bool stripPrefix(const QByteArray &key, std::initializer_list<const char *> prefixes, QByteArray *rest);

// A counter of `used` units whose window ends in `endsInUs` (< 0: no window runs; the
// request would start one of `windowUs`). Used is shown as it is (above the limit when the
// library counts denied requests); remaining never negative.
Usage windowCounterUsage(qint64 used, const LimitSpec &spec, qint64 endsInUs, qint64 windowUs);

// Two consecutive windows weighed as the sliding counter family does: `weighted` is the
// previous window's contribution as the library computes it (already multiplied), curr the
// current count; the request is allowed when weighted + curr + cost <= limit.
Usage weightedCounterUsage(double weighted, qint64 curr, const LimitSpec &spec, qint64 endsInUs, qint64 windowUs);

// GCRA with a burst of the whole limit (emission interval T = window / limit, tolerance =
// window), as redis_rate and redis-cell decide: tat the stored theoretical arrival time in µs
// (nullopt: none yet). Remaining = floor((now - (new_tat - window)) / T).
Usage gcraUsage(std::optional<double> tatUs, const LimitSpec &spec, qint64 nowUs);

// The generic JSON of a string value: {"key": ..., "value": ..., "ttl_ms": ...}.
QJsonObject valueJson(const QByteArray &key, const Reply &value, const Reply *pttl = nullptr);

// A string counter whose TTL ends its window, the window starting at the first request
// (rate-limiter-flexible, rate-limit-redis, Python limits' fixed window): used = the value,
// the window ends when the key expires. A reader says which key names are its own.
class TtlCounterFormat : public FormatReader {
public:
    const char *type() const override { return "string"; }
    std::optional<Algorithm> family() const override { return Algorithm::FixedWindow; }
    bool match(const QByteArray &key, const Reply &sample, qint64 nowUs, bool declared, KeyKind &kind) const override;
    std::vector<Command> read(const KeyKind &kind, const LimitSpec *spec, qint64 nowUs) const override;
    Usage usage(const KeyKind &kind, const std::vector<Reply> &replies, const LimitSpec &spec, qint64 nowUs) const override;
    QJsonObject state(const KeyKind &kind, const std::vector<Reply> &replies, qint64 nowUs) const override;

protected:
    // Whether the name is this library's (its prefix; any name when declared), and what the
    // key states (limits, window) into kind.
    virtual bool keyFits(const QByteArray &key, bool declared, KeyKind &kind) const = 0;
};

// A string counter per clock-aligned window of whole seconds, the window in the key (Envoy's
// start, rack-attack's index): the current window's key read with GET and PTTL, the window
// ending at its boundary; the window from the key (kind.windowUs) or the limits. A reader
// says how its window keys are named and how its state calls the window.
class AlignedCounterFormat : public FormatReader {
public:
    const char *type() const override { return "string"; }
    std::optional<Algorithm> family() const override { return Algorithm::FixedWindow; }
    QByteArrayList keys(const KeyKind &kind, qint64 nowUs) const override;
    std::vector<Command> read(const KeyKind &kind, const LimitSpec *spec, qint64 nowUs) const override;
    Usage usage(const KeyKind &kind, const std::vector<Reply> &replies, const LimitSpec &spec, qint64 nowUs) const override;
    QJsonObject state(const KeyKind &kind, const std::vector<Reply> &replies, qint64 nowUs) const override;

protected:
    // The key of the window of `windowUs` (whole seconds) that holds nowUs.
    virtual QByteArray windowKey(const KeyKind &kind, qint64 windowUs, qint64 nowUs) const = 0;
    // The state's name for the window's length ("unit_us", "period_us").
    virtual QString windowField() const = 0;
};

// GCRA with its theoretical arrival time in one string (redis_rate, redis-cell): read with
// GET and PTTL, decided by gcraUsage. A reader says how its value counts time.
class TatStringFormat : public FormatReader {
public:
    const char *type() const override { return "string"; }
    std::optional<Algorithm> family() const override { return Algorithm::Gcra; }
    std::vector<Command> read(const KeyKind &kind, const LimitSpec *spec, qint64 nowUs) const override;
    Usage usage(const KeyKind &kind, const std::vector<Reply> &replies, const LimitSpec &spec, qint64 nowUs) const override;
    QJsonObject state(const KeyKind &kind, const std::vector<Reply> &replies, qint64 nowUs) const override;

protected:
    // The TAT in whole µs since the Unix epoch, from the stored value; nullopt for none.
    virtual std::optional<qint64> tatUs(const Reply &value) const = 0;
    // Whether a TAT lies where a live limiter's can: from a day behind now to a year ahead.
    static bool nearNow(qint64 tatUs, qint64 nowUs);
};

// The registry's readers, one per file.
const FormatReader &envoyFormat();
const FormatReader &kongFormat();
const FormatReader &upstashWindowFormat();
const FormatReader &upstashTokenBucketFormat();
const FormatReader &rackAttackFormat();
const FormatReader &rateLimiterFlexibleFormat();
const FormatReader &rateLimitRedisFormat();
const FormatReader &limitsFixedWindowFormat();
const FormatReader &limitsSlidingWindowFormat();
const FormatReader &limitsMovingWindowFormat();
const FormatReader &laravelFormat();
const FormatReader &laravelDurationFormat();
const FormatReader &springTokenBucketFormat();
const FormatReader &redisRateFormat();
const FormatReader &redisCellFormat();
const FormatReader &rollingRateLimiterFormat();
const FormatReader &bucket4jFormat();
const FormatReader &bucketedCounterFormat();

} // namespace ratescope::formats
