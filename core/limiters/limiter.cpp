#include "limiters/limiter.h"

#include "redis/connection.h"
#include "base/errors.h"
#include "base/keytext.h"
#include "limiters/limiterscript.h"
#include "limiters/slidingbuckets.h"

#include <algorithm>
#include <cmath>

namespace ratescope {

QList<QByteArray> Limiter::arguments(const QByteArray &key, const LimitSpec &spec, std::optional<qint64> nowUs, bool peek)
{
    if (key.isEmpty())
        throw UsageError(QStringLiteral("the key must not be empty"));
    spec.validate();
    if (nowUs && *nowUs < 0)
        throw UsageError(QStringLiteral("now must not be negative"));
    QList<QByteArray> argv{QByteArray::number(spec.limit), QByteArray::number(spec.windowUs), QByteArray::number(spec.cost),
                           nowUs ? QByteArray::number(*nowUs) : QByteArray(),
                           peek ? QByteArrayLiteral("peek") : QByteArrayLiteral("check")};
    if (spec.algorithm == Algorithm::SlidingBuckets)
        argv << QByteArray::number(spec.buckets);
    return argv;
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
                             .arg(escapeInvalidUtf8(key), QString::fromUtf8(type), QLatin1String(algo)));
    const Reply &raw = replies[1].orThrow();
    std::vector<qint64> values;
    for (size_t i = 0; i < fields.size(); ++i) {
        const Reply &r = raw[i];
        QByteArray digits = r.isNil() ? QByteArray() : r.bytes();
        // At most 16 characters as stored, leading zeros included, like the scripts' field_in.
        bool ok = !digits.isEmpty() && digits.size() <= 16 &&
                  std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
        while (ok && digits.size() > 1 && digits.startsWith('0'))
            digits.remove(0, 1);
        const qint64 v = ok ? digits.toLongLong(&ok) : 0;
        if (!ok || v > fields[i].second) {
            const QString shown =
                r.isNil() ? QStringLiteral("missing") : QLatin1Char('\'') + QString::fromUtf8(r.bytes().left(64)) + QLatin1Char('\'');
            throw ReplyError(QStringLiteral("ERR ratescope: key '%1' is not a ratescope %2 (field %3 is %4)")
                                 .arg(escapeInvalidUtf8(key), QLatin1String(kind), QString::fromUtf8(fields[i].first), shown));
        }
        values.push_back(v);
    }
    return values;
}

} // namespace

namespace {

// floor(a / b) for b > 0, as the scripts' divmod.
qint64 floorDiv(qint64 a, qint64 b)
{
    qint64 q = a / b;
    if (a % b < 0)
        --q;
    return q;
}

// The token-bucket script's time_to(): us until tk + fr / window reaches `want` tokens.
qint64 timeTo(qint64 want, qint64 tk, qint64 fr, qint64 limit, qint64 window)
{
    if (tk >= want)
        return 0;
    const i128 p = i128(want - tk) * window;
    const qint64 q = qint64(p / limit), r = qint64(p % limit);
    qint64 extraQ = floorDiv(r - fr, limit);
    if (r - fr - extraQ * limit > 0)
        ++extraQ;
    return q + extraQ;
}

Decision peekTokenBucket(Connection &c, const QByteArray &key, const LimitSpec &spec, qint64 now)
{
    const qint64 limit = spec.limit, window = spec.windowUs, cost = spec.cost;
    const auto state = readFields(c, key, "token-bucket", "token bucket", {{"tk", kMaxLimit}, {"fr", kMaxWindowUs}, {"ts", kMaxNowUs}});
    qint64 tk = limit, fr = 0; // a missing key is a full bucket
    if (state) {
        tk = (*state)[0], fr = (*state)[1];
        const qint64 ts = (*state)[2];
        now = std::max(now, ts);
        if (fr >= window)
            fr = 0;
        if (now - ts >= window) {
            tk = limit, fr = 0;
        } else {
            const i128 p = i128(now - ts) * limit;
            tk += qint64(p / window), fr += qint64(p % window);
            if (fr >= window)
                ++tk, fr -= window;
            if (tk >= limit)
                tk = limit, fr = 0;
        }
    }
    Decision d;
    d.limit = limit;
    d.allowed = tk >= cost;
    if (d.allowed)
        tk -= cost;
    else
        d.retryAfterUs = timeTo(cost, tk, fr, limit, window);
    d.used = limit - tk;
    d.remaining = tk;
    d.resetAfterUs = timeTo(limit, tk, fr, limit, window);
    return d;
}

Decision peekGcra(Connection &c, const QByteArray &key, const LimitSpec &spec, qint64 now)
{
    const qint64 limit = spec.limit, window = spec.windowUs, cost = spec.cost;
    const auto state = readFields(c, key, "gcra", "GCRA limiter", {{"tat", kMaxNowUs + kMaxWindowUs}, {"f", kMaxLimit}});
    qint64 sw = now, sf = 0; // start = max(tat, now), whole us + fraction in 1/limit us
    if (state) {
        qint64 tat = (*state)[0], f = (*state)[1];
        if (f >= limit)
            ++tat, f = 0;
        if (tat >= now)
            sw = tat, sf = f;
    }
    const i128 p = i128(cost) * window; // cost * T = cost * window / limit
    qint64 nw = sw + qint64(p / limit), nf = sf + qint64(p % limit);
    if (nf >= limit)
        ++nw, nf -= limit;
    Decision d;
    d.limit = limit;
    d.allowed = nw - now < window || (nw - now == window && nf == 0);
    if (d.allowed)
        sw = nw, sf = nf;
    else
        d.retryAfterUs = nw - window - now + (nf > 0 ? 1 : 0);
    qint64 remaining = 0;
    const qint64 dw = sw - now;
    if (dw < window) {
        const i128 m = i128(window - dw) * limit;
        remaining = std::max<qint64>(0, qint64(m / window) + floorDiv(qint64(m % window) - sf, window));
    }
    d.used = limit - remaining;
    d.remaining = remaining;
    d.resetAfterUs = sw - now + (sf > 0 ? 1 : 0);
    return d;
}

// A sliding-log entry as the script decodes it: time, ticket (hi * 10^14 + lo) and cost.
struct LogEntry {
    qint64 time = 0;
    i128 ticket = 0;
    qint64 cost = 1;
};

constexpr qint64 kTicketBase = 100000000000000LL; // 10^14

bool allDigits(const QByteArray &s)
{
    return !s.isEmpty() && std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

// The script's decode_member(): the ticket and cost of a member it could have written.
std::optional<std::pair<i128, qint64>> decodeMember(const QByteArray &member)
{
    const int code = member.isEmpty() ? 0 : member[0] - '0';
    if (code >= 1 && code <= 8 && member.size() == code + 1 && member[1] != '0' && allDigits(member))
        return std::pair<i128, qint64>{member.mid(1).toLongLong(), 1};
    QByteArray body = member, costText = "1";
    if (const qsizetype colon = member.indexOf(':'); colon >= 0) {
        body = member.left(colon), costText = member.mid(colon + 1);
        if (!allDigits(costText) || costText[0] == '0')
            return std::nullopt;
    }
    if (!allDigits(body) || costText.size() > 13)
        return std::nullopt;
    qsizetype nines = 0;
    while (nines < body.size() && body[nines] == '9')
        ++nines;
    if (nines >= body.size())
        return std::nullopt;
    const qsizetype n = 9 * nines + (body[nines] - '0');
    const QByteArray digits = body.mid(nines + 1);
    if (n < 1 || n > 28 || digits.size() != n || digits[0] == '0')
        return std::nullopt;
    qint64 hi = 0, lo = digits.toLongLong();
    if (n > 14)
        hi = digits.left(n - 14).toLongLong(), lo = digits.mid(n - 14).toLongLong();
    const qint64 cost = costText.toLongLong();
    if (hi == 0 && lo < cost)
        return std::nullopt;
    return std::pair<i128, qint64>{i128(hi) * kTicketBase + lo, cost};
}

// The script's entry_of(): one ZRANGE ... WITHSCORES element, or its refusal.
LogEntry entryOf(const QByteArray &key, const Reply &member, const Reply &score)
{
    const auto decoded = decodeMember(member.bytes());
    bool ok = false;
    const double t = score.bytes().toDouble(&ok);
    if (!decoded || !ok || !std::isfinite(t) || t != std::floor(t) || std::fabs(t) > 4e18)
        throw ReplyError(QStringLiteral("ERR ratescope: key '%1' is not a ratescope sliding log (member '%2', score %3)")
                             .arg(escapeInvalidUtf8(key), escapeInvalidUtf8(member.bytes().left(64)), QString::fromUtf8(score.bytes())));
    return {qint64(t), decoded->first, decoded->second};
}

// The script's peek, read in a few round trips instead of one script: the newest entry, the
// first (and the oldest live one when the first has expired), and on a denial the entry whose
// expiry makes room. `snapshot` is the {newest, ZCARD} read first, for the caller to compare.
Decision peekSlidingLogOnce(Connection &c, const QByteArray &key, const LimitSpec &spec, qint64 now, QByteArray *snapshot)
{
    const qint64 limit = spec.limit, window = spec.windowUs, cost = spec.cost;
    const auto first =
        c.pipeline({{"TYPE", key}, {"ZRANGE", key, "-1", "-1", "WITHSCORES"}, {"ZRANGE", key, "0", "0", "WITHSCORES"}, {"ZCARD", key}});
    const QByteArray type = first[0].orThrow().bytes();
    if (type != "none" && type != "zset")
        throw ReplyError(
            QStringLiteral("WRONGTYPE key '%1' holds a %2, sliding-log needs a zset").arg(escapeInvalidUtf8(key), QString::fromUtf8(type)));
    const Reply &newestReply = first[1].orThrow(), &firstReply = first[2].orThrow();
    const qint64 card = first[3].orThrow().integer();
    *snapshot = newestReply.debugString().toUtf8() + ' ' + QByteArray::number(card);
    Decision d;
    d.limit = limit;
    std::optional<LogEntry> newest;
    if (newestReply.size() >= 2) {
        newest = entryOf(key, newestReply[0], newestReply[1]);
        now = std::max(now, newest->time);
    }
    const qint64 cut = now - window; // an entry at or before cut has expired
    const bool live = newest && newest->time > cut;
    std::optional<qint64> expired = 0; // nullopt: some, not counted yet
    i128 used = 0, base = 0;
    LogEntry oldest;
    if (live) {
        oldest = entryOf(key, firstReply[0], firstReply[1]);
        if (!(oldest.time > cut)) {
            expired.reset();
            const auto r = c.pipeline({{"ZRANGEBYSCORE", key, "(" + QByteArray::number(cut), "+inf", "WITHSCORES", "LIMIT", "0", "1"}});
            const Reply &live1 = r[0].orThrow();
            if (live1.size() < 2) // pruned meanwhile: read again
                throw UnexpectedReplyError(QStringLiteral("the sliding log changed while it was read"));
            oldest = entryOf(key, live1[0], live1[1]);
        }
        base = oldest.ticket - oldest.cost; // the ticket before the oldest live entry's first
        used = newest->ticket - base;
        if (used < newest->cost || used > kMaxNowUs)
            throw ReplyError(QStringLiteral("ERR ratescope: key '%1' is not a ratescope sliding log (tickets out of order)")
                                 .arg(escapeInvalidUtf8(key)));
    } else if (newest) {
        expired.reset();
    }
    d.allowed = used + cost <= limit;
    if (d.allowed) {
        d.resetAfterUs = window;
    } else if (live) {
        const qint64 target = qint64(used) + cost - limit;
        qint64 owner = oldest.time;
        if (target > oldest.cost) { // the script's owner_of()
            if (!expired)
                expired = c.pipeline({{"ZCOUNT", key, "-inf", QByteArray::number(cut)}})[0].orThrow().integer();
            // The entry at a live index, with its last ticket counted from base; nullopt past the end.
            auto entryAt = [&](qint64 index) -> std::optional<std::pair<LogEntry, i128>> {
                const QByteArray rank = QByteArray::number(*expired + index);
                const Reply r = c.pipeline({{"ZRANGE", key, rank, rank, "WITHSCORES"}})[0].orThrow();
                if (r.size() < 2)
                    return std::nullopt;
                const LogEntry e = entryOf(key, r[0], r[1]);
                return std::pair<LogEntry, i128>{e, e.ticket - base};
            };
            qint64 guess = target - 1;
            auto entry = entryAt(guess);
            if (!entry) {
                guess = card - *expired - 1;
                entry = entryAt(guess);
                if (!entry)
                    throw UnexpectedReplyError(QStringLiteral("the sliding log changed while it was read"));
            }
            if (entry->second - entry->first.cost < target) {
                owner = entry->first.time;
            } else {
                qint64 lo = 0, hi = guess - 1;
                while (lo < hi) {
                    const qint64 mid = lo + (hi - lo) / 2;
                    entry = entryAt(mid);
                    if (!entry)
                        throw UnexpectedReplyError(QStringLiteral("the sliding log changed while it was read"));
                    if (entry->second >= target)
                        hi = mid;
                    else
                        lo = mid + 1;
                }
                entry = entryAt(lo);
                if (!entry)
                    throw UnexpectedReplyError(QStringLiteral("the sliding log changed while it was read"));
                owner = entry->first.time;
            }
        }
        d.retryAfterUs = owner + window - now;
        d.resetAfterUs = newest->time + window - now;
    }
    if (d.allowed)
        used += cost;
    d.used = qint64(used);
    d.remaining = std::max<qint64>(0, limit - d.used);
    return d;
}

// The log may change between the round trips (services keep writing): the answer stands only
// when the newest entry and the count read last are those read first; else it is read again.
Decision peekSlidingLog(Connection &c, const QByteArray &key, const LimitSpec &spec, qint64 now)
{
    constexpr int kAttempts = 5;
    for (int attempt = 1;; ++attempt) {
        QByteArray before;
        std::optional<Decision> d;
        try {
            d = peekSlidingLogOnce(c, key, spec, now, &before);
        } catch (const UnexpectedReplyError &) {
            if (attempt == kAttempts)
                throw;
            continue;
        }
        const auto after = c.pipeline({{"ZRANGE", key, "-1", "-1", "WITHSCORES"}, {"ZCARD", key}});
        if (after[0].orThrow().debugString().toUtf8() + ' ' + QByteArray::number(after[1].orThrow().integer()) == before ||
            attempt == kAttempts)
            return *d;
    }
}

} // namespace

std::optional<Decision> Limiter::peekFromFields(const QByteArray &key, const LimitSpec &spec, qint64 nowUs)
{
    arguments(key, spec, nowUs, true); // the same validation as the scripts' arguments
    switch (spec.algorithm) {
    case Algorithm::SlidingLog:
        return peekSlidingLog(m_connection, key, spec, nowUs);
    case Algorithm::TokenBucket:
        return peekTokenBucket(m_connection, key, spec, nowUs);
    case Algorithm::Gcra:
        return peekGcra(m_connection, key, spec, nowUs);
    case Algorithm::SlidingBuckets: {
        const auto replies = m_connection.pipeline({{"TYPE", key}, bucketHashScan(key)});
        const QByteArray type = replies[0].orThrow().bytes();
        if (type != "none" && type != "hash")
            throw ReplyError(QStringLiteral("WRONGTYPE key '%1' holds a %2, sliding-buckets needs a hash")
                                 .arg(escapeInvalidUtf8(key), QString::fromUtf8(type)));
        return bucketsDecision(key, spec, bucketStateFrom(m_connection, key, spec, nowUs, replies[1]), nowUs);
    }
    case Algorithm::FixedWindow:
    case Algorithm::SlidingCounter:
        break;
    }
    const qint64 L = spec.limit, W = spec.windowUs, cost = spec.cost;
    qint64 id = nowUs / W, elapsed = nowUs % W;
    Decision d;
    d.limit = L;
    if (spec.algorithm == Algorithm::FixedWindow) {
        const auto state = readFields(m_connection, key, "fixed-window", "fixed window", {{"w", kMaxNowUs}, {"n", kMaxLimit}});
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
        readFields(m_connection, key, "sliding-counter", "sliding counter", {{"w", kMaxNowUs}, {"c", kMaxLimit}, {"p", kMaxLimit}});
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
