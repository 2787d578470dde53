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

namespace {

// The query checked, its bucket edges as score bounds (they tile the range without gaps) and
// the buckets' time spans.
struct WindowShape {
    std::vector<LogBucket> buckets;
    std::vector<double> edges;
    QByteArray lo, hi;
};

WindowShape shapeOf(const LogWindowQuery &q)
{
    if (q.buckets < 1 || q.buckets > 10000)
        throw UsageError(QStringLiteral("bucket count must be 1..10000, got %1").arg(q.buckets));
    if (q.toUs <= q.fromUs)
        throw UsageError(QStringLiteral("empty time range"));
    if (q.entryCap < 0)
        throw UsageError(QStringLiteral("negative entry cap"));
    const qint64 span = q.toUs - q.fromUs;
    WindowShape w;
    w.buckets.resize(size_t(q.buckets));
    w.edges.resize(size_t(q.buckets) + 1);
    for (int i = 0; i <= q.buckets; ++i) {
        const qint64 at = q.fromUs + qint64((__int128(span) * i) / q.buckets);
        w.edges[size_t(i)] = scoreBound(at, q.unit);
        if (i < q.buckets)
            w.buckets[size_t(i)].fromUs = at;
        if (i > 0)
            w.buckets[size_t(i - 1)].toUs = at;
    }
    w.lo = scoreBoundText(w.edges.front());
    w.hi = "(" + scoreBoundText(w.edges.back());
    return w;
}

Command entriesCommand(const LogWindowQuery &q, const WindowShape &w)
{
    return {"ZRANGE", q.key, w.lo, w.hi, "BYSCORE", "LIMIT", "0", QByteArray::number(q.entryCap), "WITHSCORES"};
}

std::vector<Command> bucketCounts(const LogWindowQuery &q, const WindowShape &w)
{
    std::vector<Command> counts;
    counts.reserve(w.buckets.size());
    for (size_t i = 0; i < w.buckets.size(); ++i)
        counts.push_back({"ZCOUNT", q.key, scoreBoundText(w.edges[i]), "(" + scoreBoundText(w.edges[i + 1])});
    return counts;
}

} // namespace

std::vector<Command> logWindowReads(const LogWindowQuery &q, bool bucketed)
{
    const WindowShape w = shapeOf(q);
    std::vector<Command> reads{{"ZCOUNT", q.key, w.lo, w.hi}};
    if (bucketed) {
        for (Command &c : bucketCounts(q, w))
            reads.push_back(std::move(c));
    } else {
        reads.push_back(entriesCommand(q, w));
    }
    return reads;
}

LogWindow readLogWindow(Connection &connection, const LogWindowQuery &q)
{
    WindowShape shape = shapeOf(q);
    std::vector<LogBucket> &buckets = shape.buckets;
    const std::vector<double> &edges = shape.edges;
    const qint64 perUnit = unitUs(q.unit);

    LogWindow w;
    w.total = connection.command({"ZCOUNT", q.key, shape.lo, shape.hi}).toInteger();
    if (w.total <= q.entryCap) {
        if (w.total > 0)
            w.entries = entriesOf(connection.command(entriesCommand(q, shape)), perUnit);
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
        const auto replies = connection.pipeline(bucketCounts(q, shape));
        for (size_t i = 0; i < buckets.size(); ++i) {
            if (replies[i].isError())
                throw ReplyError(replies[i].text());
            buckets[i].count = replies[i].toInteger();
        }
    }
    w.buckets = std::move(buckets);
    return w;
}

std::vector<Command> logPageReads(const QByteArray &key, ScoreUnit unit, qint64 fromUs, qint64 toUs, qint64 offset, int count)
{
    const QByteArray lo = scoreBoundText(scoreBound(fromUs, unit)), hi = "(" + scoreBoundText(scoreBound(toUs, unit));
    return {{"ZCOUNT", key, lo, hi},
            {"ZRANGE", key, lo, hi, "BYSCORE", "LIMIT", QByteArray::number(offset), QByteArray::number(count), "WITHSCORES"}};
}

LogPage readLogPage(Connection &connection, const QByteArray &key, ScoreUnit unit, qint64 fromUs, qint64 toUs, qint64 offset, int count)
{
    if (toUs <= fromUs || offset < 0 || count < 0)
        throw UsageError(QStringLiteral("bad page of log entries"));
    const auto r = connection.pipeline(logPageReads(key, unit, fromUs, toUs, offset, count));
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
