// Upstash Ratelimit (TypeScript, @upstash/ratelimit), default prefix "@upstash/ratelimit":
//  - fixed window: "<prefix>:<identifier>:<bucket>", bucket = floor(now ms / window ms), a
//    string counter INCRBY'd and given PEXPIRE window by its first request;
//  - sliding window: the same keys, the current and the previous bucket; the previous count
//    is weighted by the part of it still inside the window, floor((1 - elapsed / window) x prev);
//  - token bucket: "<prefix>:<identifier>", a hash {refilledAt: ms, tokens}, refilled
//    refillRate tokens every interval up to maxTokens; only an empty bucket refuses (a request
//    costing more than is left passes and takes it below zero).
// The two windows share one key shape: the policy's algorithm says which it is.
#include "formats/readers/readersupport.h"

#include "base/glob.h"

#include <cmath>

namespace ratescope::formats {

namespace {

constexpr char kPrefix[] = "@upstash/ratelimit:";

// Window lengths (ms) people give Upstash ("10 s", "1 m", ...), to infer one from a bucket.
constexpr std::initializer_list<qint64> kUsualWindowsMs = {1000,   2000,   5000,   10000,   15000,   20000,   30000,    60000,    120000,
                                                           300000, 600000, 900000, 1800000, 3600000, 7200000, 21600000, 43200000, 86400000};
// "<prefix>:<identifier>:<bucket>": the bucket and the window it matches at nowUs.
bool splitBucketKey(const QByteArray &key, QByteArray *stem, qint64 *bucket)
{
    const qsizetype colon = key.lastIndexOf(':');
    if (colon <= 0)
        return false;
    const auto id = integerValue(key.mid(colon + 1));
    if (!id || *id <= 0)
        return false;
    *stem = key.left(colon);
    *bucket = *id;
    return true;
}

class UpstashWindow final : public FormatReader {
public:
    QString name() const override { return QStringLiteral("upstash-window"); }
    QString label() const override { return QStringLiteral("Upstash Ratelimit window"); }
    QString library() const override { return QStringLiteral("@upstash/ratelimit (TypeScript)"); }
    QString keyShape() const override { return QStringLiteral("@upstash/ratelimit:<identifier>:<floor(ms / window)>"); }
    const char *type() const override { return "string"; }
    std::optional<Algorithm> family() const override { return std::nullopt; } // fixed or sliding: the policy says

    bool match(const QByteArray &key, const Reply &sample, qint64 nowUs, bool declared, KeyKind &kind) const override
    {
        // The key's prefix first: the cheapest test, and the one most keys fail.
        if (!declared && !key.startsWith(kPrefix))
            return false;
        QByteArray stem;
        qint64 bucket = 0;
        if (!integerReply(sample) || !splitBucketKey(key, &stem, &bucket))
            return false;
        if (!declared && !stem.startsWith(kPrefix))
            return false;
        kind.windowUs = windowOfIndex(bucket, nowUs / 1000, kUsualWindowsMs) * 1000;
        if (!kind.windowUs && !declared)
            return false;
        kind.base = stem;
        return true;
    }

    QByteArray windowKeysGlob(const QByteArray &name, bool declared) const override
    {
        return declared || name.startsWith(kPrefix) ? escapeGlob(name) + ":*" : QByteArray();
    }

    QByteArray limiterNameOf(const QByteArray &key, qint64 nowUs) const override
    {
        // A bucket of now, or of the two windows before, for a usual window length: not any
        // key that ends in a number (a token bucket "<prefix>:api:42" is another limiter).
        QByteArray stem;
        qint64 bucket = 0;
        if (!splitBucketKey(key, &stem, &bucket))
            return {};
        const qint64 nowMs = nowUs / 1000;
        for (qint64 w : kUsualWindowsMs)
            if (bucket <= nowMs / w && bucket >= nowMs / w - 2)
                return stem;
        return {};
    }

    std::optional<KeyKind> nameKind(const QByteArray &name, const LimitSpec *spec, bool declared) const override
    {
        if ((!declared && !name.startsWith(kPrefix)) || !spec || spec->windowUs < 1000 || spec->windowUs % 1000)
            return std::nullopt;
        KeyKind kind;
        kind.base = name;
        kind.windowUs = spec->windowUs;
        return kind;
    }

    QByteArrayList keys(const KeyKind &kind, qint64 nowUs) const override
    {
        if (!kind.windowUs)
            return {};
        const qint64 bucket = nowUs / kind.windowUs;
        return {kind.base + ":" + QByteArray::number(bucket), kind.base + ":" + QByteArray::number(bucket - 1)};
    }

    std::vector<Command> read(const KeyKind &kind, const LimitSpec *spec, qint64 nowUs) const override
    {
        const qint64 w = kind.windowUs ? kind.windowUs : spec ? spec->windowUs : 0;
        if (w < 1000)
            return {};
        const qint64 bucket = (nowUs / 1000) / (w / 1000);
        const QByteArray current = kind.base + ":" + QByteArray::number(bucket);
        return {{"GET", current}, {"GET", kind.base + ":" + QByteArray::number(bucket - 1)}, {"PTTL", current}};
    }

    Usage usage(const KeyKind &, const std::vector<Reply> &r, const LimitSpec &spec, qint64 nowUs) const override
    {
        if (r.size() != 3)
            throw UnexpectedReplyError(QStringLiteral("no window to read"));
        const qint64 wMs = spec.windowUs / 1000, nowMs = nowUs / 1000;
        const qint64 curr = integerReply(r[0]).value_or(0);
        const qint64 endsIn = (wMs - nowMs % wMs) * 1000 - nowUs % 1000;
        if (spec.algorithm != Algorithm::SlidingCounter)
            return windowCounterUsage(curr, spec, endsIn, spec.windowUs);
        const qint64 prev = saneCount(integerReply(r[1]).value_or(0));
        const double inCurrent = double(nowMs % wMs) / double(wMs);
        return weightedCounterUsage(std::floor((1.0 - inCurrent) * double(prev)), curr, spec, endsIn, spec.windowUs);
    }

    QJsonObject state(const KeyKind &kind, const std::vector<Reply> &r, qint64 nowUs) const override
    {
        if (r.size() != 3 || !kind.windowUs)
            return {};
        const qint64 bucket = nowUs / kind.windowUs;
        QJsonObject s{{QStringLiteral("current_window"), valueJson(kind.base + ":" + QByteArray::number(bucket), r[0], &r[2])},
                      {QStringLiteral("previous_window"), valueJson(kind.base + ":" + QByteArray::number(bucket - 1), r[1])},
                      {QStringLiteral("window_us"), kind.windowUs},
                      {QStringLiteral("current"), integerReply(r[0]).value_or(0)},
                      {QStringLiteral("previous"), integerReply(r[1]).value_or(0)},
                      {QStringLiteral("count"), integerReply(r[0]).value_or(0)},
                      {QStringLiteral("elapsed_us"), nowUs % kind.windowUs},
                      {QStringLiteral("window_ends_in_us"), kind.windowUs - nowUs % kind.windowUs}};
        return s;
    }
};

class UpstashTokenBucket final : public FormatReader {
public:
    QString name() const override { return QStringLiteral("upstash-token-bucket"); }
    QString label() const override { return QStringLiteral("Upstash Ratelimit token bucket"); }
    QString library() const override { return QStringLiteral("@upstash/ratelimit (TypeScript)"); }
    QString keyShape() const override { return QStringLiteral("@upstash/ratelimit:<identifier> {refilledAt, tokens}"); }
    const char *type() const override { return "hash"; }
    std::optional<Algorithm> family() const override { return Algorithm::TokenBucket; }

    bool match(const QByteArray &key, const Reply &sample, qint64, bool declared, KeyKind &kind) const override
    {
        QList<QByteArray> fields;
        for (const Reply &f : sample.elements())
            fields << f.bytes();
        if (fields.size() != 2 || !fields.contains("refilledAt") || !fields.contains("tokens"))
            return false;
        if (!declared && !key.startsWith(kPrefix))
            return false;
        kind.base = key;
        return true;
    }

    std::vector<Command> read(const KeyKind &kind, const LimitSpec *, qint64) const override
    {
        return {{"HMGET", kind.base, "refilledAt", "tokens"}, {"PTTL", kind.base}};
    }

    // Read as refilling one token every window / limit (refillRate 1 per interval); a bucket
    // configured with several tokens per interval refills the same on average.
    Usage usage(const KeyKind &, const std::vector<Reply> &r, const LimitSpec &spec, qint64 nowUs) const override
    {
        const qint64 interval = std::max<qint64>(1, spec.windowUs / spec.limit / 1000) * 1000; // the script works in ms
        qint64 tokens = spec.limit;
        qint64 refilledAt = (nowUs / 1000) * 1000;
        if (r[0].size() == 2 && !r[0][0].isNil()) {
            refilledAt = scoreToUs(numberReply(r[0][0]).value_or(0), 1000.0);
            tokens = saneInteger(numberReply(r[0][1]).value_or(0));
        }
        if (nowUs >= refilledAt + interval) {
            const qint64 refills = (nowUs - refilledAt) / interval;
            tokens = std::min<qint64>(spec.limit, tokens + refills);
            refilledAt += refills * interval;
        }
        tokens = std::min<qint64>(tokens, spec.limit);
        Decision d;
        d.limit = spec.limit;
        // The script refuses only an empty bucket: a request costing more than is left passes
        // and leaves the bucket below zero.
        d.allowed = tokens > 0;
        const qint64 after = d.allowed ? tokens - spec.cost : tokens;
        d.used = spec.limit - after;
        d.remaining = std::max<qint64>(0, after);
        const qint64 next = refilledAt + interval - nowUs; // the next refill
        d.retryAfterUs = d.allowed ? 0 : std::max<qint64>(1, next + std::max<qint64>(0, -tokens) * interval);
        d.resetAfterUs = after < spec.limit ? next + (spec.limit - after - 1) * interval : 0;
        return {spec.limit - std::max<qint64>(0, tokens), d};
    }

    QJsonObject state(const KeyKind &kind, const std::vector<Reply> &r, qint64 nowUs) const override
    {
        QJsonObject s;
        insertBytes(s, QStringLiteral("key"), kind.base);
        if (r[0].size() == 2 && !r[0][0].isNil()) {
            const qint64 at = scoreToUs(numberReply(r[0][0]).value_or(0), 1000.0);
            s.insert(QStringLiteral("refilled_at_us"), at);
            s.insert(QStringLiteral("refilled_ago_us"), nowUs - at);
            s.insert(QStringLiteral("tokens"), double(numberReply(r[0][1]).value_or(0)));
        }
        if (r[1].isInteger())
            s.insert(QStringLiteral("ttl_ms"), r[1].integer());
        return s;
    }
};

} // namespace

const FormatReader &upstashWindowFormat()
{
    static const UpstashWindow f;
    return f;
}

const FormatReader &upstashTokenBucketFormat()
{
    static const UpstashTokenBucket f;
    return f;
}

} // namespace ratescope::formats
