// Bucketed sliding counters other services keep: one hash per limiter whose fields are the
// start times of clock-aligned sub-buckets, in Unix seconds or milliseconds, and whose values
// are the counts admitted in them ("1795516200" -> "12"), summed over the trailing window. The
// bucket width is the smallest gap between two bucket starts (one unit while there is a single
// bucket). Read like the sliding counter family: the estimate over (now - window, now] is the
// sum of each bucket's count weighted by the part of it inside the window (the oldest one
// partly, the others wholly), floored; a request of cost c passes when estimate + c <= limit.
#include "formats/readers/readersupport.h"

#include <cmath>
#include <map>

namespace ratescope::formats {

namespace {

struct Buckets {
    std::map<qint64, qint64> counts; // bucket start (µs) -> count
    qint64 widthUs = 0;
};

// The unit all the names share (seconds or milliseconds), or Auto.
ScoreUnit unitOfNames(const QList<QByteArray> &names, qint64 nowUs)
{
    ScoreUnit unit = ScoreUnit::Auto;
    for (const QByteArray &n : names) {
        const auto v = integerValue(n);
        if (!v)
            return ScoreUnit::Auto;
        const ScoreUnit u = detectScoreUnit(double(*v));
        if (u != ScoreUnit::Seconds && u != ScoreUnit::Milliseconds)
            return ScoreUnit::Auto;
        if (unit != ScoreUnit::Auto && u != unit)
            return ScoreUnit::Auto;
        unit = u;
        // a bucket of the last year, not of the future
        const qint64 us = *v * scoreUnitUs(u);
        if (us < nowUs - 366LL * 86400 * 1000000 || us > nowUs + 86400LL * 1000000)
            return ScoreUnit::Auto;
    }
    return unit;
}

Buckets bucketsOf(const Reply &all, ScoreUnit unit)
{
    Buckets b;
    const qint64 unitUs = std::max<qint64>(1, scoreUnitUs(unit));
    for (size_t i = 0; i + 1 < all.size(); i += 2) {
        const auto start = integerValue(all[i].bytes());
        const auto count = integerValue(all[i + 1].bytes());
        if (start && count && *count > 0)
            b.counts[scoreToUs(double(*start), double(unitUs))] += saneCount(*count); // HGETALL's fields were not all sampled
    }
    b.widthUs = unitUs;
    qint64 gap = 0;
    qint64 previous = std::numeric_limits<qint64>::min();
    for (const auto &[start, count] : b.counts) {
        if (previous != std::numeric_limits<qint64>::min() && (gap == 0 || start - previous < gap))
            gap = start - previous;
        previous = start;
    }
    if (gap > 0)
        b.widthUs = gap;
    return b;
}

// The weighted sum of the buckets inside (from, ...]: a bucket [t, t + w) counts for the part
// of it after `from`.
double estimateFrom(const Buckets &b, double from)
{
    double sum = 0;
    for (const auto &[t, c] : b.counts) {
        const double end = double(t + b.widthUs);
        if (end <= from)
            continue;
        sum += double(c) * std::min(1.0, (end - from) / double(b.widthUs));
    }
    return sum;
}

class BucketedCounter final : public FormatReader {
public:
    QString name() const override { return QStringLiteral("bucketed-counter"); }
    QString label() const override { return QStringLiteral("bucketed counter"); }
    QString library() const override { return QStringLiteral("services that count in time-bucket hash fields"); }
    QString keyShape() const override { return QStringLiteral("<key> {<bucket start, Unix s or ms>: count, ...}"); }
    const char *type() const override { return "hash"; }
    std::optional<Algorithm> family() const override { return Algorithm::SlidingCounter; }

    bool match(const QByteArray &key, const Reply &sample, qint64 nowUs, bool, KeyKind &kind) const override
    {
        QList<QByteArray> names;
        for (const Reply &f : sample.elements())
            names << f.bytes();
        if (names.isEmpty())
            return false;
        kind.unit = unitOfNames(names, nowUs);
        if (kind.unit == ScoreUnit::Auto)
            return false;
        kind.base = key;
        return true;
    }

    std::vector<Command> read(const KeyKind &kind, const LimitSpec *, qint64) const override
    {
        return {{"HGETALL", kind.base}, {"PTTL", kind.base}};
    }

    Usage usage(const KeyKind &kind, const std::vector<Reply> &r, const LimitSpec &spec, qint64 nowUs) const override
    {
        const Buckets b = bucketsOf(r[0], kind.unit);
        const double from = double(nowUs - spec.windowUs);
        const double estimate = estimateFrom(b, from);
        const qint64 used = qint64(std::floor(estimate + 1e-9));
        Decision d;
        d.limit = spec.limit;
        d.allowed = used + spec.cost <= spec.limit;
        d.used = used + (d.allowed ? spec.cost : 0);
        d.remaining = std::max<qint64>(0, spec.limit - d.used);
        if (!d.allowed)
            d.retryAfterUs = std::max<qint64>(1, untilBelow(b, from, double(spec.limit - spec.cost + 1)));
        // Empty once the newest bucket with a count has left the window (this request's own
        // count, when it passes, goes into the bucket of now).
        qint64 last = b.counts.empty() ? std::numeric_limits<qint64>::min() : b.counts.rbegin()->first + b.widthUs;
        if (d.allowed)
            last = std::max(last, nowUs - nowUs % b.widthUs + b.widthUs);
        d.resetAfterUs = d.used > 0 ? std::max<qint64>(0, last + spec.windowUs - nowUs) : 0;
        return {used, d};
    }

    QJsonObject state(const KeyKind &kind, const std::vector<Reply> &r, qint64 nowUs) const override
    {
        const Buckets b = bucketsOf(r[0], kind.unit);
        qint64 total = 0;
        for (const auto &[t, c] : b.counts)
            total += c;
        QJsonObject s{{QStringLiteral("buckets"), qint64(b.counts.size())},
                      {QStringLiteral("bucket_width_us"), b.widthUs},
                      {QStringLiteral("unit"), scoreUnitName(kind.unit)},
                      {QStringLiteral("total"), total}};
        insertBytes(s, QStringLiteral("key"), kind.base);
        if (r[1].isInteger())
            s.insert(QStringLiteral("ttl_ms"), r[1].integer());
        if (!b.counts.empty()) {
            // For the sliding counter's picture: the bucket of now and the rest.
            const qint64 current = nowUs - nowUs % b.widthUs;
            const auto it = b.counts.find(current);
            s.insert(QStringLiteral("current"), it == b.counts.end() ? 0 : it->second);
            s.insert(QStringLiteral("previous"), total - (it == b.counts.end() ? 0 : it->second));
            s.insert(QStringLiteral("elapsed_us"), nowUs - current);
        }
        return s;
    }

private:
    // How long until the estimate falls below `target` (> 0): the window's start slides
    // forward; between the breakpoints (each bucket's start and end) the estimate falls
    // linearly, so it is solved per segment.
    static qint64 untilBelow(const Buckets &b, double from, double target)
    {
        std::vector<double> points;
        for (const auto &[t, c] : b.counts) {
            points.push_back(double(t));
            points.push_back(double(t + b.widthUs));
        }
        std::sort(points.begin(), points.end());
        double s = from;
        for (double p : points) {
            if (p <= s)
                continue;
            const double atS = estimateFrom(b, s), atP = estimateFrom(b, p);
            if (atP < target - 1e-9) {
                // linear between s and p: atS + (atP - atS) * (x - s) / (p - s) < target
                const double x = atS <= atP ? p : s + (atS - target) * (p - s) / (atS - atP);
                // the first whole µs past x, checked one either side against rounding
                qint64 d = qint64(std::floor(x - from)) + 1;
                if (d > 1 && estimateFrom(b, from + double(d - 1)) < target - 1e-9)
                    --d;
                else if (estimateFrom(b, from + double(d)) >= target - 1e-9)
                    ++d;
                return std::max<qint64>(1, d);
            }
            s = p;
        }
        return qint64(std::ceil(s - from)) + 1;
    }
};

} // namespace

const FormatReader &bucketedCounterFormat()
{
    static const BucketedCounter f;
    return f;
}

} // namespace ratescope::formats
