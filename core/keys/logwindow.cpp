#include "keys/logwindow.h"

#include "formats/usage.h"

#include "redis/connection.h"
#include "base/errors.h"
#include "formats/recognition.h"

#include <cmath>
#include <cstdio>

namespace ratescope {

namespace {

qint64 unitUs(ScoreUnit unit)
{
    return unit == ScoreUnit::Auto ? 1 : scoreUnitUs(unit);
}

LogEntry entryFrom(const QByteArray &member, const QByteArray &scoreText, qint64 perUnit)
{
    LogEntry e;
    e.member = member;
    e.score = scoreText.toDouble();
    e.timeUs = scoreToUs(e.score, double(perUnit)); // another service's double: clamped, never UB
    e.cost = memberCost(member);
    return e;
}

std::vector<LogEntry> entriesOf(const Reply &r, qint64 perUnit)
{
    std::vector<LogEntry> out;
    out.reserve(r.size() / 2);
    for (size_t i = 0; i + 1 < r.size(); i += 2)
        out.push_back(entryFrom(r[i].bytes(), r[i + 1].bytes(), perUnit));
    return out;
}

} // namespace

double scoreBound(qint64 timeUs, ScoreUnit unit)
{
    // An entry's time is scoreToUs(score, per): the product score * per in floating point,
    // rounded to the nearest µs. That is monotonic in the score, so the bound is the smallest
    // double whose time is at least timeUs: from the exact quotient (t - 1/2) / per, stepped
    // up or down to it by the same arithmetic the entries are read with (an ulp or two). The
    // product's own rounding is why: a score an ulp below (t - 1/2) / per can still read as t.
    const double per = double(unitUs(unit));
    double d = (double(timeUs) - 0.5) / per;
    while (scoreToUs(d, per) < timeUs)
        d = std::nextafter(d, HUGE_VAL);
    for (double below = std::nextafter(d, -HUGE_VAL); scoreToUs(below, per) >= timeUs; below = std::nextafter(d, -HUGE_VAL))
        d = below;
    return d;
}

QByteArray scoreBoundText(double bound)
{
    char text[40];
    std::snprintf(text, sizeof text, "%.17g", bound);
    return QByteArray(text);
}

qint64 memberCost(const QByteArray &member)
{
    const qsizetype colon = member.indexOf(':');
    if (colon < 0 || !isTicketMember(member))
        return 1;
    bool ok = false;
    const qint64 cost = member.mid(colon + 1).toLongLong(&ok);
    return ok && cost > 0 ? cost : 1;
}

LogWindow readLogWindow(Connection &connection, const LogWindowQuery &q)
{
    if (q.buckets < 1 || q.buckets > 10000)
        throw UsageError(QStringLiteral("bucket count must be 1..10000, got %1").arg(q.buckets));
    if (q.toUs <= q.fromUs)
        throw UsageError(QStringLiteral("empty time range"));
    if (q.entryCap < 0)
        throw UsageError(QStringLiteral("negative entry cap"));
    const qint64 perUnit = unitUs(q.unit);
    const qint64 span = q.toUs - q.fromUs;

    // Equal slices; edges are computed from the range so that they tile it without gaps.
    std::vector<LogBucket> buckets(size_t(q.buckets));
    std::vector<double> edges(size_t(q.buckets) + 1);
    for (int i = 0; i <= q.buckets; ++i) {
        const qint64 at = q.fromUs + qint64((__int128(span) * i) / q.buckets);
        edges[size_t(i)] = scoreBound(at, q.unit);
        if (i < q.buckets)
            buckets[size_t(i)].fromUs = at;
        if (i > 0)
            buckets[size_t(i - 1)].toUs = at;
    }
    const QByteArray lo = scoreBoundText(edges.front()), hi = "(" + scoreBoundText(edges.back());

    LogWindow w;
    w.total = connection.command({"ZCOUNT", q.key, lo, hi}).toInteger();
    if (w.total <= q.entryCap) {
        if (w.total > 0)
            w.entries = entriesOf(
                connection.command({"ZRANGE", q.key, lo, hi, "BYSCORE", "LIMIT", "0", QByteArray::number(q.entryCap), "WITHSCORES"}),
                perUnit);
        w.entriesRead = qint64(w.entries.size());
        // The same comparisons as the server's, on the stored doubles.
        size_t b = 0;
        for (const LogEntry &e : w.entries) {
            while (b + 1 < buckets.size() && e.score >= edges[b + 1])
                ++b;
            if (e.score >= edges[b] && e.score < edges[b + 1])
                buckets[b].count += 1;
        }
        // Never more than the cap, even when writers added entries between the two commands.
        w.total = qint64(w.entries.size());
    } else {
        w.bucketed = true;
        std::vector<Command> counts;
        counts.reserve(buckets.size());
        for (size_t i = 0; i < buckets.size(); ++i)
            counts.push_back({"ZCOUNT", q.key, scoreBoundText(edges[i]), "(" + scoreBoundText(edges[i + 1])});
        const auto replies = connection.pipeline(counts);
        for (size_t i = 0; i < buckets.size(); ++i) {
            if (replies[i].isError())
                throw ReplyError(replies[i].text());
            buckets[i].count = replies[i].toInteger();
        }
    }
    w.buckets = std::move(buckets);
    return w;
}

LogPage readLogPage(Connection &connection, const QByteArray &key, ScoreUnit unit, qint64 fromUs, qint64 toUs, qint64 offset, int count)
{
    if (toUs <= fromUs || offset < 0 || count < 0)
        throw UsageError(QStringLiteral("bad page of log entries"));
    const QByteArray lo = scoreBoundText(scoreBound(fromUs, unit)), hi = "(" + scoreBoundText(scoreBound(toUs, unit));
    const auto r = connection.pipeline(
        {{"ZCOUNT", key, lo, hi},
         {"ZRANGE", key, lo, hi, "BYSCORE", "LIMIT", QByteArray::number(offset), QByteArray::number(count), "WITHSCORES"}});
    for (const Reply &x : r)
        if (x.isError())
            throw ReplyError(x.text());
    LogPage p;
    p.total = r[0].toInteger();
    p.offset = offset;
    p.entries = entriesOf(r[1], unitUs(unit));
    return p;
}

} // namespace ratescope
