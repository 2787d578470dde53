#include "limiter.h"

#include "connection.h"
#include "errors.h"
#include "limiterscript.h"

#include <algorithm>

namespace ratescope {

Decision Decision::fromReply(const Reply &reply)
{
    reply.orThrow();
    if (!reply.isArray() || reply.size() != 6)
        throw UnexpectedReplyError(QStringLiteral("a limiter script returned %1, expected six integers").arg(reply.debugString()));
    qint64 v[6];
    for (size_t i = 0; i < 6; ++i) {
        if (!reply[i].isInteger())
            throw UnexpectedReplyError(QStringLiteral("a limiter script returned %1, expected six integers").arg(reply.debugString()));
        v[i] = reply[i].integer();
    }
    return {v[0] != 0, v[1], v[2], v[3], v[4], v[5]};
}

QList<QByteArray> Limiter::arguments(const QByteArray &key, const LimitSpec &spec, std::optional<qint64> nowUs, bool peek)
{
    if (key.isEmpty())
        throw UsageError(QStringLiteral("the key must not be empty"));
    spec.validate();
    if (nowUs && *nowUs < 0)
        throw UsageError(QStringLiteral("now must not be negative"));
    return {QByteArray::number(spec.limit), QByteArray::number(spec.windowUs), QByteArray::number(spec.cost),
            nowUs ? QByteArray::number(*nowUs) : QByteArray(), peek ? QByteArrayLiteral("peek") : QByteArrayLiteral("check")};
}

Decision Limiter::run(const QByteArray &key, const LimitSpec &spec, std::optional<qint64> nowUs, bool peek)
{
    const QList<QByteArray> argv = arguments(key, spec, nowUs, peek);
    return Decision::fromReply(LimiterScript::forAlgorithm(spec.algorithm).run(m_connection, key, argv, peek));
}

Decision Limiter::check(const QByteArray &key, const LimitSpec &spec, std::optional<qint64> nowUs)
{
    return run(key, spec, nowUs, false);
}

Decision Limiter::peek(const QByteArray &key, const LimitSpec &spec, std::optional<qint64> nowUs)
{
    try {
        return run(key, spec, nowUs, true);
    } catch (const ReplyError &e) {
        if (e.prefix() != QLatin1String("NOPERM") || !nowUs)
            throw;
        // May read, may not run scripts: the plain reads give the same answer where they can.
        if (const auto d = peekFromFields(key, spec, *nowUs))
            return *d;
        throw;
    }
}

namespace {

__extension__ typedef __int128 i128; // exact products of limits and windows

// ceil(a * b / c) for a, b >= 0, c > 0, as the scripts' ceil_muldiv.
qint64 ceilMulDiv(i128 a, i128 b, i128 c)
{
    const i128 p = a * b;
    return qint64(p <= 0 ? 0 : (p + c - 1) / c);
}

// The scripts' read_fields(): each field digits only (at most 16) and at most its bound; a
// missing key gives nullopt; a hash that is not the script's is refused in the scripts' words.
std::optional<std::vector<qint64>> readFields(Connection &c, const QByteArray &key, const char *algo, const char *kind,
                                              const std::vector<std::pair<QByteArray, qint64>> &fields)
{
    Command hmget{"HMGET", key};
    for (const auto &f : fields)
        hmget << f.first;
    const auto replies = c.pipeline({{"TYPE", key}, hmget});
    const QByteArray type = replies[0].orThrow().bytes();
    if (type == "none")
        return std::nullopt;
    if (type != "hash")
        throw ReplyError(QStringLiteral("WRONGTYPE key '%1' holds a %2, %3 needs a hash")
                             .arg(QString::fromUtf8(key), QString::fromUtf8(type), QLatin1String(algo)));
    const Reply &raw = replies[1].orThrow();
    std::vector<qint64> values;
    for (size_t i = 0; i < fields.size(); ++i) {
        const Reply &r = raw[i];
        QByteArray digits = r.isNil() ? QByteArray() : r.bytes();
        bool ok = !digits.isEmpty() && std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
        while (ok && digits.size() > 1 && digits.startsWith('0'))
            digits.remove(0, 1);
        const qint64 v = ok && digits.size() <= 16 ? digits.toLongLong(&ok) : (ok = false, 0);
        if (!ok || v > fields[i].second) {
            const QString shown =
                r.isNil() ? QStringLiteral("missing") : QLatin1Char('\'') + QString::fromUtf8(r.bytes().left(64)) + QLatin1Char('\'');
            throw ReplyError(QStringLiteral("ERR ratescope: key '%1' is not a ratescope %2 (field %3 is %4)")
                                 .arg(QString::fromUtf8(key), QLatin1String(kind), QString::fromUtf8(fields[i].first), shown));
        }
        values.push_back(v);
    }
    return values;
}

constexpr qint64 kMaxNow = 4503599627370496LL; // the scripts' MAX_NOW

} // namespace

std::optional<Decision> Limiter::peekFromFields(const QByteArray &key, const LimitSpec &spec, qint64 nowUs)
{
    if (spec.algorithm != Algorithm::FixedWindow && spec.algorithm != Algorithm::SlidingCounter)
        return std::nullopt;
    arguments(key, spec, nowUs, true); // the same validation as the scripts' arguments
    const qint64 L = spec.limit, W = spec.windowUs, cost = spec.cost;
    qint64 id = nowUs / W, elapsed = nowUs % W;
    Decision d;
    d.limit = L;
    if (spec.algorithm == Algorithm::FixedWindow) {
        const auto state = readFields(m_connection, key, "fixed-window", "fixed window", {{"w", kMaxNow}, {"n", kMaxLimit}});
        qint64 count = 0;
        if (state) {
            const qint64 w = (*state)[0];
            if (w > id)
                id = w, elapsed = 0;
            if (w == id)
                count = (*state)[1];
        }
        d.allowed = count + cost <= L;
        if (d.allowed)
            count += cost;
        d.used = count;
        d.remaining = std::max<qint64>(0, L - count);
        d.retryAfterUs = d.allowed ? 0 : W - elapsed;
        d.resetAfterUs = count > 0 ? W - elapsed : 0;
        return d;
    }
    const auto state =
        readFields(m_connection, key, "sliding-counter", "sliding counter", {{"w", kMaxNow}, {"c", kMaxLimit}, {"p", kMaxLimit}});
    qint64 curr = 0, prev = 0;
    if (state) {
        const qint64 w = (*state)[0];
        if (w > id)
            id = w, elapsed = 0;
        if (w == id)
            curr = (*state)[1], prev = (*state)[2];
        else if (w == id - 1)
            prev = (*state)[1];
    }
    const qint64 x0 = W - elapsed;
    const qint64 weighted = qint64(i128(prev) * x0 / W);
    d.allowed = weighted + curr + cost <= L;
    if (d.allowed) {
        curr += cost;
    } else {
        // The scripts' retry_after().
        const qint64 k = L - curr - cost;
        qint64 ymax = 0;
        if (k >= 0 && prev > 0)
            ymax = ceilMulDiv(k + 1, W, prev) - 1;
        if (ymax >= 1)
            d.retryAfterUs = x0 - ymax;
        else if (curr + cost <= L)
            d.retryAfterUs = x0;
        else
            d.retryAfterUs = x0 + W - (ceilMulDiv(L - cost + 1, W, curr) - 1);
    }
    d.used = weighted + curr;
    d.remaining = std::max<qint64>(0, L - d.used);
    // The scripts' reset_after().
    if (curr > 0)
        d.resetAfterUs = x0 + W - (ceilMulDiv(1, W, curr) - 1);
    else if (prev > 0)
        d.resetAfterUs = std::max<qint64>(0, x0 - (ceilMulDiv(1, W, prev) - 1));
    return d;
}

} // namespace ratescope
