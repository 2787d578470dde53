#include "formats/recognition.h"

#include "formats/formatreaders.h"

#include <algorithm>
#include <cmath>

namespace ratescope {

size_t appendSampleCommands(std::vector<Command> &out, const QByteArray &key, const QByteArray &type)
{
    // Literals: no allocation per key for the constant words (a scan sends one per key).
    if (type == "zset") {
        // The newest entry and the oldest: a log spans at most about its window.
        out.push_back(
            {QByteArrayLiteral("ZRANGE"), key, QByteArrayLiteral("-1"), QByteArrayLiteral("-1"), QByteArrayLiteral("WITHSCORES")});
        out.push_back({QByteArrayLiteral("ZRANGE"), key, QByteArrayLiteral("0"), QByteArrayLiteral("0"), QByteArrayLiteral("WITHSCORES")});
        return 2;
    }
    else if (type == "string")
        out.push_back({QByteArrayLiteral("GETRANGE"), key, QByteArrayLiteral("0"), QByteArrayLiteral("40")});
    else if (type == "hash")
        out.push_back({QByteArrayLiteral("HRANDFIELD"), key, QByteArrayLiteral("12")});
    else if (type == "list")
        out.push_back({QByteArrayLiteral("LINDEX"), key, QByteArrayLiteral("0")});
    else
        return 0;
    return 1;
}

std::vector<Command> sampleCommands(const QByteArray &key, const QByteArray &type)
{
    std::vector<Command> out;
    appendSampleCommands(out, key, type);
    return out;
}

namespace {

bool isInteger(const QByteArray &s)
{
    bool ok = false;
    s.toLongLong(&ok);
    return ok && !s.isEmpty();
}

// The format of a hash, from its field names (a sample's elements: HRANDFIELD's replies).
KeyFormat hashFormat(const std::vector<Reply> &sample)
{
    auto name = [](const Reply &f) -> const QByteArray & { return f.bytes(); };
    auto has = [&](const char *f) { return std::any_of(sample.begin(), sample.end(), [&](const Reply &x) { return name(x) == f; }); };
    const size_t n = sample.size();
    if (n == 2 && has("w") && has("n"))
        return KeyFormat::FixedWindow;
    if (n == 3 && has("w") && has("c") && has("p"))
        return KeyFormat::SlidingCounter;
    if (n == 3 && has("tk") && has("fr") && has("ts"))
        return KeyFormat::TokenBucket;
    if (n == 2 && has("tat") && has("f"))
        return KeyFormat::Gcra;
    // sliding-buckets: ws, bn, t, l, h and b<bucket id> fields, sampled (HRANDFIELD 12), so any
    // mix of the two kinds; b<digits> is no other format's field name. A whole hash (at most 12
    // fields) has ws; a sample of a bigger one has 7 buckets or more.
    auto isBucket = [&](const Reply &r) {
        const QByteArray &f = name(r);
        return f.size() >= 2 && f.size() <= 17 && f[0] == 'b' &&
               std::all_of(f.begin() + 1, f.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    const bool bucketFields = n > 0 && std::all_of(sample.begin(), sample.end(), [&](const Reply &r) {
                                  const QByteArray &f = name(r);
                                  return f == "ws" || f == "bn" || f == "t" || f == "l" || f == "h" || isBucket(r);
                              });
    if (bucketFields && (has("ws") || std::any_of(sample.begin(), sample.end(), isBucket)))
        return KeyFormat::SlidingBuckets;
    const bool tokens = has("tokens") || has("token") || has("bucket") || has("remaining");
    const bool time =
        has("ts") || has("timestamp") || has("last") || has("last_refill") || has("refilled_at") || has("updated_at") || has("time");
    return tokens && time ? KeyFormat::ForeignTokenBucket : KeyFormat::Other;
}

} // namespace

namespace {

// Another library's format: the one a policy declares, when the key fits it; else the first
// whose unambiguous shape it has.
bool classifyLibrary(const QByteArray &key, const QByteArray &type, const Reply &sample, qint64 nowUs, const QString &declaredFormat,
                     KeyKind &k)
{
    if (!declaredFormat.isEmpty()) {
        const FormatReader *f = findFormatReader(declaredFormat);
        KeyKind candidate;
        if (f && f->type() == type && f->match(key, sample, nowUs, true, candidate)) {
            k = candidate;
            k.format = KeyFormat::Library;
            k.reader = f;
            return true;
        }
    }
    for (const FormatReader *f : formatReadersOfType(type)) {
        KeyKind candidate;
        if (f->match(key, sample, nowUs, false, candidate)) {
            k = candidate;
            k.format = KeyFormat::Library;
            k.reader = f;
            return true;
        }
    }
    return false;
}

} // namespace

KeyKind classify(const QByteArray &key, const QByteArray &type, const std::vector<Reply> &samples, qint64 nowUs, ScoreUnit declaredUnit,
                  const QString &declaredFormat, qint64 declaredWindowUs)
{
    KeyKind k;
    if (samples.empty() || samples[0].isError())
        return k;
    const Reply &s = samples[0];
    if (type == "list") {
        classifyLibrary(key, type, s, nowUs, declaredFormat, k);
        return k;
    }
    if (type == "zset") {
        if (s.size() != 2)
            return k;
        bool ok = false;
        const double score = s[1].bytes().toDouble(&ok);
        if (!ok)
            return k;
        const ScoreUnit detected = detectScoreUnit(score);
        if (detected == ScoreUnit::Microseconds && isTicketMember(s[0].bytes()) && declaredUnit != ScoreUnit::Seconds &&
            declaredUnit != ScoreUnit::Milliseconds) {
            k.format = KeyFormat::SlidingLog;
            k.unit = ScoreUnit::Microseconds;
            return k;
        }
        if (declaredUnit == ScoreUnit::Auto && classifyLibrary(key, type, s, nowUs, declaredFormat, k))
            return k;
        // A log's newest entry is no later than now (a day of clock skew aside): a sorted set
        // whose highest score is a time further ahead holds no times at all (a geo set's 52-bit
        // cells east of Greenwich read as µs in 2041 .. 2112; a leaderboard). A policy's unit
        // says it is a log whatever the scores.
        constexpr qint64 kSkewUs = 86400LL * 1000000;
        if (declaredUnit == ScoreUnit::Auto && detected != ScoreUnit::Auto && nowUs > 0 &&
            score * double(scoreUnitUs(detected)) > double(nowUs + kSkewUs))
            return k;
        // Nor is one whose oldest entry lies more than two days before its newest: a log is
        // trimmed to its window on every request, and a log with a longer window is declared
        // by a policy. Geo sets west of Greenwich hold 52-bit cells that read as µs around
        // today (New York's as October 2026), but places 200 km apart read weeks apart.
        constexpr double kLongestSpanUs = 2.0 * 86400 * 1000000;
        if (declaredUnit == ScoreUnit::Auto && detected != ScoreUnit::Auto && samples.size() > 1 && samples[1].size() == 2) {
            const double oldest = samples[1][1].bytes().toDouble(&ok);
            if (ok && (score - oldest) * double(scoreUnitUs(detected)) > kLongestSpanUs)
                return k;
        }
        k.unit = declaredUnit != ScoreUnit::Auto ? declaredUnit : detected;
        if (k.unit != ScoreUnit::Auto)
            k.format = KeyFormat::ForeignSlidingLog;
        return k;
    }
    if (type == "string") {
        if (classifyLibrary(key, type, s, nowUs, declaredFormat, k))
            return k;
        QByteArray base;
        qint64 id = 0;
        if (isInteger(s.bytes()) && splitCounterWindowKey(key, &base, &id)) {
            k.windowSeconds = inferWindowSeconds(id, nowUs / 1000000);
            if (!k.windowSeconds && declaredWindowUs >= 1000000 && declaredWindowUs % 1000000 == 0) {
                // a policy's window, longer than the usual ones inferred by themselves
                const qint64 w = declaredWindowUs / 1000000, current = nowUs / 1000000 / w;
                if (id == current || id == current - 1)
                    k.windowSeconds = w;
            }
            if (k.windowSeconds) {
                k.format = KeyFormat::CounterWindow;
                k.base = base;
                k.windowId = id;
            }
        }
        return k;
    }
    if (type == "hash") {
        k.format = hashFormat(s.elements());
        if (k.format == KeyFormat::Other || k.format == KeyFormat::ForeignTokenBucket)
            classifyLibrary(key, type, s, nowUs, declaredFormat, k);
    }
    return k;
}

} // namespace ratescope
