#include "limiters/slidingbuckets.h"

#include "base/errors.h"
#include "base/keytext.h"
#include "redis/connection.h"

#include <algorithm>

namespace ratescope {

namespace {

__extension__ typedef __int128 i128; // exact products of times, bucket counts and windows

// ceil(a * b / c) for a, b >= 0, c > 0, as the scripts' ceil_muldiv.
qint64 ceilMulDiv(i128 a, i128 b, i128 c)
{
    const i128 p = a * b;
    return qint64(p <= 0 ? 0 : (p + c - 1) / c);
}

// The scripts' field_in(): digits only, at most 16 characters, at most hi.
std::optional<qint64> fieldIn(const QByteArray &raw, qint64 hi)
{
    if (raw.isEmpty() || raw.size() > 16 || !std::all_of(raw.begin(), raw.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    const qint64 v = raw.toLongLong();
    if (v > hi)
        return std::nullopt;
    return v;
}

[[noreturn]] void notOurs(const QByteArray &key, const QString &what)
{
    throw ReplyError(
        QStringLiteral("ERR ratescope: key '%1' is not a ratescope sliding-buckets hash (%2)").arg(escapeInvalidUtf8(key), what));
}

// The script's bucket_us(): us from now until m periods on plus d units into that period
// (period 0: the x0 units left of the current bucket), rounded up.
qint64 bucketUs(qint64 m, qint64 d, qint64 x0, qint64 window, qint64 b)
{
    const i128 units = m > 0 ? i128(x0) + i128(m - 1) * window + d : i128(d);
    return qint64((units + b - 1) / b);
}

// The script's retry (a denial's walk over the buckets) and buckets_reset(): c[0..b] are
// buckets id - b .. id.
// s: what buckets id - b + 1 .. id hold (the stored total less the oldest bucket's), as the
// script counts it.
qint64 retryAfter(qint64 limit, qint64 cost, const std::vector<qint64> &c, qint64 s, qint64 b, qint64 window, qint64 x0)
{
    for (qint64 m = 0; m <= b; ++m) {
        const qint64 ystart = m == 0 ? x0 : window, k = limit - cost - s, cm = c[size_t(m)];
        if (k >= 0) {
            const qint64 ymax = cm > 0 ? ceilMulDiv(k + 1, window, cm) - 1 : ystart;
            if (ymax >= ystart)
                return bucketUs(m, 0, x0, window, b);
            if (ymax >= 1)
                return bucketUs(m, ystart - ymax, x0, window, b);
        }
        if (m < b)
            s -= c[size_t(m + 1)];
    }
    return bucketUs(b + 1, 0, x0, window, b);
}

qint64 resetAfter(qint64 c, qint64 m, qint64 window, qint64 b, qint64 x0)
{
    if (c == 0 || m < 0)
        return 0;
    const qint64 ystart = m == 0 ? x0 : window, ymax = ceilMulDiv(1, window, c) - 1;
    return ymax >= ystart ? bucketUs(m, 0, x0, window, b) : bucketUs(m, ystart - ymax, x0, window, b);
}

} // namespace

BucketPosition bucketOf(qint64 timeUs, qint64 windowUs, int buckets)
{
    const i128 units = i128(timeUs) * buckets;
    return {qint64(units / windowUs), qint64(units % windowUs)};
}

BucketPosition readPosition(const BucketHash &state, qint64 nowUs, qint64 windowUs, int buckets)
{
    const BucketPosition at = bucketOf(nowUs, windowUs, buckets);
    if (at.id >= state.high)
        return at;
    return bucketOf(qint64((i128(state.high) * windowUs + buckets - 1) / buckets), windowUs, buckets);
}

std::optional<BucketHash> parseBucketHash(const QByteArray &key, const Reply &hgetall)
{
    if (hgetall.size() == 0)
        return std::nullopt;
    std::map<QByteArray, QByteArray> fields;
    for (size_t i = 0; i + 1 < hgetall.size(); i += 2)
        fields[hgetall[i].bytes()] = hgetall[i + 1].bytes();
    auto meta = [&](const char *name, qint64 hi) {
        const auto it = fields.find(QByteArray(name));
        const auto v = it == fields.end() ? std::nullopt : fieldIn(it->second, hi);
        if (!v)
            notOurs(key, QStringLiteral("field %1 is %2")
                             .arg(QLatin1String(name),
                                  it == fields.end() ? QStringLiteral("missing")
                                                     : QLatin1Char('\'') + QString::fromUtf8(it->second.left(64)) + QLatin1Char('\'')));
        return *v;
    };
    BucketHash h;
    h.windowUs = meta("ws", kMaxWindowUs);
    h.buckets = int(meta("bn", kMaxBuckets));
    h.total = meta("t", kMaxNowUs);
    h.low = meta("l", kMaxNowUs);
    h.high = meta("h", kMaxNowUs);
    if (h.low > h.high || h.high - h.low > kMaxBuckets)
        notOurs(key, QStringLiteral("fields l and h are %1 and %2").arg(h.low).arg(h.high));
    for (const auto &[name, value] : fields) {
        if (name.size() < 2 || name[0] != 'b' || name == "bn")
            continue;
        if (const auto id = fieldIn(name.mid(1), kMaxNowUs))
            h.counts[*id] = fieldIn(value, kMaxLimit).value_or(-1);
    }
    return h;
}

Command bucketHashScan(const QByteArray &key)
{
    return {QByteArrayLiteral("HSCAN"), key, QByteArrayLiteral("0"), QByteArrayLiteral("COUNT"), QByteArray::number(kBucketScanCount)};
}

bool isWholeHash(const Reply &hscan)
{
    return hscan.isArray() && hscan.size() == 2 && hscan[0].bytes() == "0";
}

const Reply &scannedFields(const Reply &hscan)
{
    static const Reply kNone;
    return hscan.isArray() && hscan.size() == 2 && hscan[1].isArray() ? hscan[1] : kNone;
}

std::optional<BucketHash> bucketStateFrom(Connection &connection, const QByteArray &key, const LimitSpec &spec, qint64 nowUs,
                                          const Reply &hscan)
{
    hscan.orThrow();
    if (isWholeHash(hscan))
        return parseBucketHash(key, scannedFields(hscan));
    // The fields the script may read when its newest bucket is `to`: ws, bn, t, l, h, and the
    // buckets from the oldest one a valid l can name (h - 3600) and the window's oldest to `to`.
    const qint64 b = spec.buckets;
    auto readUpTo = [&](qint64 to) {
        Command hmget{QByteArrayLiteral("HMGET"), key, QByteArrayLiteral("ws"), QByteArrayLiteral("bn"), QByteArrayLiteral("t"),
                      QByteArrayLiteral("l"), QByteArrayLiteral("h")};
        const qint64 from = to - b - kMaxBuckets;
        for (qint64 j = from; j <= to; ++j)
            hmget.push_back('b' + QByteArray::number(j));
        const Reply values = connection.command(hmget).orThrow();
        std::vector<Reply> flat; // as HGETALL would give the fields that exist
        for (size_t i = 0; i < values.size() && i + 2 < size_t(hmget.size()); ++i)
            if (!values[i].isNil()) {
                flat.push_back(Reply::string(hmget[qsizetype(i) + 2]));
                flat.push_back(values[i]);
            }
        return parseBucketHash(key, Reply::array(std::move(flat)));
    };
    const qint64 id = bucketOf(nowUs, spec.windowUs, int(b)).id;
    std::optional<BucketHash> state = readUpTo(id);
    if (state && state->high > id) // the clock is behind its newest bucket: the script reads there
        state = readUpTo(state->high);
    return state;
}

Decision bucketsDecision(const QByteArray &key, const LimitSpec &spec, const std::optional<BucketHash> &state, qint64 nowUs)
{
    const qint64 b = spec.buckets, window = spec.windowUs, limit = spec.limit, cost = spec.cost;
    BucketPosition at = bucketOf(nowUs, window, int(b));
    if (state)
        for (const qint64 j : {at.id - b, at.id})
            if (state->count(j) < 0)
                notOurs(key, QStringLiteral("field b%1 is not a count").arg(j));
    // Kept for other limits: read as empty (the next admission replaces it), as the script does.
    const bool stored = state && state->windowUs == window && state->buckets == b;
    qint64 total = 0, oldest = 0, curr = 0;
    if (stored) {
        const BucketHash &s = *state;
        at = readPosition(s, nowUs, window, int(b));
        oldest = std::max<qint64>(0, s.count(at.id - b)), curr = std::max<qint64>(0, s.count(at.id));
        total = s.total;
        if (at.id - b > s.high)
            total = 0, oldest = 0, curr = 0;
        else
            for (qint64 j = s.low; j < at.id - b; ++j)
                total -= std::max<qint64>(0, s.count(j));
    }
    const qint64 x0 = window - at.elapsed;
    Decision d;
    d.limit = limit;
    d.used = total - oldest + qint64(i128(oldest) * x0 / window);
    d.allowed = d.used + cost <= limit;
    qint64 newest = 0, ahead = -1;
    if (d.allowed) {
        d.used += cost;
        newest = curr + cost, ahead = b;
    } else { // something is stored in the window, or nothing would be denied
        std::vector<qint64> c(size_t(b + 1), 0);
        for (qint64 k = 0; k <= b && at.id - b + k <= state->high; ++k)
            c[size_t(k)] = std::max<qint64>(0, state->count(at.id - b + k));
        d.retryAfterUs = retryAfter(limit, cost, c, total - oldest, b, window, x0);
        ahead = state->high - at.id + b;
        newest = c[size_t(ahead)];
    }
    d.remaining = std::max<qint64>(0, limit - d.used);
    d.resetAfterUs = resetAfter(newest, ahead, window, b, x0);
    return d;
}

} // namespace ratescope
