#include "formats/usage.h"

#include "redis/connection.h"
#include "base/errors.h"
#include "base/keytext.h"
#include "formats/keykind.h"
#include "formats/keyshapes.h"
#include "limiters/limiterscript.h"
#include "limiters/slidingbuckets.h"

#include <cmath>

namespace ratescope {

namespace {

__extension__ typedef __int128 i128; // exact products of limits and windows

qint64 ceilDiv(i128 a, i128 b)
{
    return qint64(a <= 0 ? 0 : (a + b - 1) / b);
}

QByteArray scoreText(double v)
{
    return QByteArray::number(v, 'f', 6);
}

// Foreign logs count one entry per member: per request, or per unit of cost when the writer
// stores one member per unit; either way the entries in the window are the used units.
Command logCount(const QByteArray &key, const KeyKind &k, const LimitSpec &spec, qint64 nowUs)
{
    const double unit = double(scoreUnitUs(k.unit));
    return {"ZCOUNT", key, "(" + scoreText(double(nowUs - spec.windowUs) / unit), "+inf"};
}

// Window keys that a counter limiter at `base` reads now: current and previous.
std::pair<QByteArray, QByteArray> windowKeys(const QByteArray &base, const KeyKind &k, const LimitSpec &spec, qint64 nowUs)
{
    return counterWindowKeys(base, k.windowSeconds ? k.windowSeconds * 1000000 : spec.windowUs, nowUs);
}

Decision counterDecision(const LimitSpec &spec, qint64 windowUs, qint64 prev, qint64 curr, qint64 nowUs, bool sliding)
{
    const qint64 L = spec.limit, c = spec.cost, W = windowUs;
    const qint64 elapsed = nowUs % W, x0 = W - elapsed;
    Decision d;
    d.limit = L;
    if (!sliding) {
        d.allowed = curr + c <= L;
        d.used = curr + (d.allowed ? c : 0); // above the limit when the service counts denials: shown as it is
        d.retryAfterUs = d.allowed ? 0 : x0;
        d.resetAfterUs = d.used > 0 ? x0 : 0;
    } else {
        const qint64 weighted = qint64(i128(prev) * x0 / W);
        d.allowed = weighted + curr + c <= L;
        const qint64 currAfter = curr + (d.allowed ? c : 0);
        d.used = weighted + currAfter;
        if (!d.allowed) {
            const qint64 k = L - curr - c;
            const qint64 xmax = (k >= 0 && prev > 0) ? ceilDiv(i128(k + 1) * W, prev) - 1 : 0;
            if (xmax >= 1)
                d.retryAfterUs = x0 - xmax;
            else if (curr + c <= L)
                d.retryAfterUs = x0;
            else
                d.retryAfterUs = x0 + (W - (ceilDiv(i128(L - c + 1) * W, curr) - 1));
        }
        if (currAfter > 0)
            d.resetAfterUs = x0 + W - (ceilDiv(W, currAfter) - 1);
        else if (prev > 0)
            d.resetAfterUs = std::max<qint64>(0, x0 - (ceilDiv(W, prev) - 1));
    }
    d.remaining = std::max<qint64>(0, L - d.used);
    return d;
}

bool isScriptFormat(KeyFormat f)
{
    return f == KeyFormat::SlidingLog || f == KeyFormat::SlidingCounter || f == KeyFormat::FixedWindow || f == KeyFormat::TokenBucket ||
           f == KeyFormat::Gcra;
}

// A sliding-buckets hash read in bounded time (a page of bucketHashScan, completed by name when
// the hash is bigger than any the script keeps): the script's rule applied here, with the limits
// asked about, so the answer is what a check would be told (a hash kept for another window or
// B reads as empty, as the script reads it).
Usage bucketsUsage(Connection &connection, const QByteArray &key, const LimitSpec &spec, const Reply &hscan, qint64 nowUs)
{
    LimitSpec s = spec;
    s.algorithm = Algorithm::SlidingBuckets;
    s.validate();
    const auto state = bucketStateFrom(connection, key, s, nowUs, hscan);
    const Decision d = bucketsDecision(key, s, state, nowUs);
    return {d.used - (d.allowed ? spec.cost : 0), d};
}

} // namespace

qint64 scoreToUs(double score, double unitUs)
{
    constexpr double kBound = 4611686018427387904.0; // 2^62
    const double us = score * unitUs;
    if (std::isnan(us))
        return 0;
    return qint64(std::clamp(std::round(us), -kBound, kBound));
}

LimitSpec limitsAsRead(const KeyKind &kind, const LimitSpec &spec)
{
    if (kind.format != KeyFormat::Library)
        return spec;
    LimitSpec s = kind.keyLimits ? *kind.keyLimits : spec;
    s.cost = spec.cost;
    if (kind.windowUs > 0)
        s.windowUs = kind.windowUs;
    if (const auto family = kind.reader->family())
        s.algorithm = *family;
    return s;
}

std::optional<LimitSpec> limitsFor(const KeyKind &kind, const std::optional<LimitSpec> &spec)
{
    if (kind.format == KeyFormat::Library && kind.keyLimits)
        return limitsAsRead(kind, spec.value_or(*kind.keyLimits));
    if (!spec)
        return std::nullopt;
    return limitsAsRead(kind, *spec);
}

qint64 saneCount(qint64 count)
{
    return std::clamp<qint64>(count, 0, qint64(1) << 61);
}

std::vector<Command> counterWindowCommands(const UsageTarget &t, qint64 nowUs)
{
    const auto [curr, prev] = windowKeys(t.kind.base.isEmpty() ? t.key : t.kind.base, t.kind, t.spec, nowUs);
    return {{"GET", curr}, {"GET", prev}};
}

Usage counterWindowUsage(const UsageTarget &t, const Reply &current, const Reply &previous, qint64 nowUs)
{
    // Another service's counters: any 64-bit value (or a negative one) must not overflow below.
    const qint64 curr = current.isNil() ? 0 : saneCount(current.toInteger());
    const qint64 prev = previous.isNil() ? 0 : saneCount(previous.toInteger());
    const qint64 w = t.kind.windowSeconds ? t.kind.windowSeconds * 1000000 : t.spec.windowUs;
    const Decision d = counterDecision(t.spec, w, prev, curr, nowUs, t.spec.algorithm == Algorithm::SlidingCounter);
    return {d.used - (d.allowed ? t.spec.cost : 0), d};
}

std::vector<Command> foreignLogCommands(const UsageTarget &t, qint64 nowUs)
{
    const double unit = double(scoreUnitUs(t.kind.unit));
    const QByteArray lo = "(" + scoreText(double(nowUs - t.spec.windowUs) / unit);
    const QByteArray offset = QByteArray::number(std::max<qint64>(0, t.spec.limit - t.spec.cost));
    return {logCount(t.key, t.kind, t.spec, nowUs),
            {"ZRANGE", t.key, "-1", "-1", "WITHSCORES"},
            {"ZRANGE", t.key, "+inf", lo, "BYSCORE", "REV", "LIMIT", offset, "1", "WITHSCORES"}};
}

Usage foreignLogUsage(const UsageTarget &t, const Reply &count, const Reply &newest, const Reply &freeing, qint64 nowUs)
{
    const LimitSpec &spec = t.spec;
    const double unit = double(scoreUnitUs(t.kind.unit));
    const qint64 used = saneCount(count.orThrow().toInteger());
    newest.orThrow();
    freeing.orThrow();
    Decision d;
    d.limit = spec.limit;
    d.allowed = used + spec.cost <= spec.limit;
    // A log that keeps denied attempts (rolling-rate-limiter) holds more than the limit: used
    // is shown as it is, remaining 0, never negative and never clamped.
    d.used = used + (d.allowed ? spec.cost : 0);
    d.remaining = std::max<qint64>(0, spec.limit - d.used);
    // Scores are another service's doubles (1e300, inf, nan): clamped before any integer arithmetic.
    auto expiresIn = [&](double score) { return std::max<qint64>(0, scoreToUs(std::ceil(score * unit), 1.0) + spec.windowUs - nowUs); };
    if (d.allowed)
        d.resetAfterUs = spec.windowUs;
    else if (newest.size() == 2)
        d.resetAfterUs = expiresIn(newest[1].bytes().toDouble());
    // Over the limit, the entry whose expiry lets a request of `cost` pass: the (used + cost -
    // limit)-th oldest in the window, which is the (limit - cost + 1)-th newest (read without
    // knowing `used` first, so in the same round).
    if (!d.allowed)
        d.retryAfterUs = freeing.size() == 2 ? std::max<qint64>(1, expiresIn(freeing[1].bytes().toDouble())) : 0;
    return {used, d};
}

std::vector<Command> usageCommands(Connection &connection, const UsageTarget &t, qint64 nowUs, std::optional<ScriptCalls> &calls)
{
    t.spec.validate();
    if (isScriptFormat(t.kind.format)) {
        LimitSpec spec = t.spec;
        spec.algorithm = t.kind.algorithm().value_or(t.spec.algorithm);
        if (!calls)
            calls = LimiterScript::callsOn(connection);
        return {LimiterScript::forAlgorithm(spec.algorithm).command(t.key, Limiter::arguments(t.key, spec, nowUs, true), true, *calls)};
    }
    if (t.kind.format == KeyFormat::SlidingBuckets)
        return {bucketHashScan(t.key)};
    if (t.kind.format == KeyFormat::ForeignSlidingLog)
        return foreignLogCommands(t, nowUs);
    if (t.kind.format == KeyFormat::CounterWindow)
        return counterWindowCommands(t, nowUs);
    if (t.kind.format == KeyFormat::Library && t.kind.readable()) {
        const LimitSpec spec = limitsAsRead(t.kind, t.spec);
        return t.kind.reader->read(t.kind, &spec, nowUs);
    }
    throw UsageError(QStringLiteral("'%1' is not a limiter key Ratescope can read (%2)").arg(displayKey(t.key), t.kind.label()));
}

Usage usageFromReplies(Connection &connection, const UsageTarget &t, const Reply *replies, size_t n, qint64 nowUs)
{
    static const Reply kNone;
    const Reply &r = n > 0 ? replies[0] : kNone; // another library's reader may need no read
    if (isScriptFormat(t.kind.format)) {
        Decision d;
        if (LimiterScript::notLoaded(r)) {
            LimitSpec spec = t.spec;
            spec.algorithm = t.kind.algorithm().value_or(t.spec.algorithm);
            d = Limiter(connection).peek(t.key, spec, nowUs); // loads it (EVAL_RO) for the next time
        } else {
            d = Decision::fromReply(r);
        }
        return Usage{d.used - (d.allowed ? t.spec.cost : 0), d};
    }
    if (t.kind.format == KeyFormat::SlidingBuckets)
        return bucketsUsage(connection, t.key, t.spec, r, nowUs);
    if (t.kind.format == KeyFormat::ForeignSlidingLog && n == 3)
        return foreignLogUsage(t, replies[0], replies[1], replies[2], nowUs);
    if (t.kind.format == KeyFormat::CounterWindow && n == 2)
        return counterWindowUsage(t, replies[0], replies[1], nowUs);
    if (t.kind.format == KeyFormat::Library) {
        const std::vector<Reply> mine(replies, replies + n);
        for (const Reply &m : mine)
            m.orThrow();
        return t.kind.reader->usage(t.kind, mine, limitsAsRead(t.kind, t.spec), nowUs);
    }
    throw UsageError(QStringLiteral("'%1' is not a limiter key Ratescope can read (%2)").arg(displayKey(t.key), t.kind.label()));
}

std::vector<std::optional<Usage>> readUsage(Connection &connection, const std::vector<UsageTarget> &targets, qint64 nowUs,
                                            std::vector<std::exception_ptr> *errors)
{
    std::vector<std::optional<Usage>> result(targets.size());
    if (errors)
        errors->assign(targets.size(), nullptr);
    std::vector<Command> commands;
    std::vector<std::pair<size_t, size_t>> owned(targets.size(), {0, 0}); // first command, count
    std::vector<bool> readable(targets.size(), false);
    std::optional<ScriptCalls> calls; // asked once, and only when a script is run
    for (size_t i = 0; i < targets.size(); ++i) {
        try {
            std::vector<Command> mine = usageCommands(connection, targets[i], nowUs, calls);
            owned[i] = {commands.size(), mine.size()};
            readable[i] = true;
            for (Command &c : mine)
                commands.push_back(std::move(c));
        } catch (const UsageError &) {
            // unreadable with these limits, or no limiter: std::nullopt, the others still read
            if (errors)
                (*errors)[i] = std::current_exception();
        }
    }
    auto replies = connection.pipeline(commands);
    LimiterScript::resendNotLoaded(connection, commands, replies.data()); // the scripts lost: one more round, not one per key
    for (size_t i = 0; i < targets.size(); ++i) {
        if (!readable[i])
            continue;
        try {
            result[i] = usageFromReplies(connection, targets[i], replies.data() + owned[i].first, owned[i].second, nowUs);
        } catch (const ConnectionError &) {
            throw;
        } catch (const Error &) {
            result[i] = std::nullopt; // changed type or vanished meanwhile
            if (errors)
                (*errors)[i] = std::current_exception();
        }
    }
    return result;
}

Usage peekAnyFormat(Connection &connection, const QByteArray &key, const KeyKind &kind, const LimitSpec &spec, qint64 nowUs)
{
    spec.validate();
    if (isScriptFormat(kind.format)) {
        LimitSpec s = spec;
        s.algorithm = kind.algorithm().value_or(spec.algorithm);
        const Decision d = Limiter(connection).peek(key, s, nowUs);
        return {d.used - (d.allowed ? spec.cost : 0), d};
    }
    if (kind.format == KeyFormat::SlidingBuckets)
        return bucketsUsage(connection, key, spec, connection.command(bucketHashScan(key)), nowUs);
    if (kind.format == KeyFormat::CounterWindow) {
        const UsageTarget t{key, kind, spec};
        const auto r = connection.pipeline(counterWindowCommands(t, nowUs));
        return counterWindowUsage(t, r[0], r[1], nowUs);
    }
    if (kind.format == KeyFormat::Library && kind.reader->readable()) {
        // Read with plain commands only: another library's keys never meet Ratescope's scripts.
        const LimitSpec s = limitsAsRead(kind, spec);
        const auto replies = connection.pipeline(kind.reader->read(kind, &s, nowUs));
        for (const Reply &m : replies)
            m.orThrow();
        return kind.reader->usage(kind, replies, s, nowUs);
    }
    if (kind.format != KeyFormat::ForeignSlidingLog)
        throw UsageError(QStringLiteral("'%1' is not a limiter key Ratescope can read (%2)").arg(displayKey(key), kind.label()));

    // A foreign log: entries in the window by ZCOUNT, never pruned on read; one round.
    const UsageTarget t{key, kind, spec};
    const auto r = connection.pipeline(foreignLogCommands(t, nowUs));
    return foreignLogUsage(t, r[0], r[1], r[2], nowUs);
}

} // namespace ratescope
