#include "keyformat.h"

#include "limiterformat.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace ratescope {

std::optional<Algorithm> KeyClass::algorithm() const
{
    switch (format) {
    case KeyFormat::SlidingLog:
    case KeyFormat::ForeignSlidingLog:
        return Algorithm::SlidingLog;
    case KeyFormat::SlidingCounter:
        return Algorithm::SlidingCounter;
    case KeyFormat::FixedWindow:
        return Algorithm::FixedWindow;
    case KeyFormat::TokenBucket:
    case KeyFormat::ForeignTokenBucket:
        return Algorithm::TokenBucket;
    case KeyFormat::Gcra:
        return Algorithm::Gcra;
    case KeyFormat::SlidingBuckets:
        return Algorithm::SlidingBuckets;
    case KeyFormat::Library:
        return reader->family();
    case KeyFormat::CounterWindow:
    case KeyFormat::Other:
        break;
    }
    return std::nullopt;
}

bool KeyClass::readable() const
{
    switch (format) {
    case KeyFormat::Other:
    case KeyFormat::ForeignTokenBucket:
        return false;
    case KeyFormat::Library:
        return reader->readable();
    default:
        return true;
    }
}

KeyFormat ownFormat(Algorithm a)
{
    switch (a) {
    case Algorithm::SlidingLog:
        return KeyFormat::SlidingLog;
    case Algorithm::SlidingCounter:
        return KeyFormat::SlidingCounter;
    case Algorithm::FixedWindow:
        return KeyFormat::FixedWindow;
    case Algorithm::TokenBucket:
        return KeyFormat::TokenBucket;
    case Algorithm::SlidingBuckets:
        return KeyFormat::SlidingBuckets;
    case Algorithm::Gcra:
        break;
    }
    return KeyFormat::Gcra;
}

QString KeyClass::label() const
{
    switch (format) {
    case KeyFormat::ForeignSlidingLog:
        return QStringLiteral("sliding-log (%1 scores)").arg(scoreUnitName(unit));
    case KeyFormat::CounterWindow:
        return windowSeconds ? QStringLiteral("counter window (%1s)").arg(windowSeconds) : QStringLiteral("counter window");
    case KeyFormat::ForeignTokenBucket:
        return QStringLiteral("token-bucket (foreign)");
    case KeyFormat::Library:
        return reader->label();
    case KeyFormat::Other:
        return QStringLiteral("other");
    default:
        return algorithmName(*algorithm());
    }
}

ScoreUnit detectScoreUnit(double score)
{
    // 1e9 s is 2001-09; 1e10 s is 2286. The same span in ms and us.
    if (score >= 1e9 && score < 1e10)
        return ScoreUnit::Seconds;
    if (score >= 1e12 && score < 1e13)
        return ScoreUnit::Milliseconds;
    if (score >= 1e15 && score < 1e16)
        return ScoreUnit::Microseconds;
    return ScoreUnit::Auto;
}

qint64 windowOfIndex(qint64 index, qint64 now, std::initializer_list<qint64> lengths)
{
    if (index <= 0)
        return 0;
    for (qint64 w : lengths) {
        const qint64 current = now / w;
        if (index == current || index == current - 1)
            return w;
    }
    return 0;
}

qint64 inferWindowSeconds(qint64 id, qint64 nowSeconds)
{
    // Window lengths people choose; anything else would make every integer look like one. Up
    // to 3 hours: the ids of longer windows are numbers of five digits or fewer (a day's is
    // about 20,000 now), which application keys end in all the time ("user:20781"); a
    // counter of a longer window is recognised when limits name it (a policy, or flags).
    return windowOfIndex(id, nowSeconds, {1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800});
}

QByteArray counterWindowKey(const QByteArray &base, qint64 id)
{
    // Made in place, one allocation: a sweep of `top` makes one or two per counter window.
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, id).ptr;
    QByteArray key;
    key.reserve(base.size() + 1 + (end - digits));
    key.append(base).append(':').append(digits, end - digits);
    return key;
}

std::pair<QByteArray, QByteArray> counterWindowKeys(const QByteArray &base, qint64 windowUs, qint64 nowUs)
{
    const qint64 id = nowUs / windowUs;
    return {counterWindowKey(base, id), counterWindowKey(base, id - 1)};
}

bool splitCounterWindowKey(const QByteArray &key, QByteArray *base, qint64 *id)
{
    const qsizetype colon = key.lastIndexOf(':');
    if (colon <= 0 || colon == key.size() - 1 || key.size() - colon > 19)
        return false;
    for (qsizetype i = colon + 1; i < key.size(); ++i)
        if (key[i] < '0' || key[i] > '9')
            return false;
    *base = key.left(colon);
    *id = key.mid(colon + 1).toLongLong();
    return true;
}

QString notOursToDecide(const QString &shownKey, const KeyClass &kind)
{
    switch (kind.format) {
    case KeyFormat::Library:
    case KeyFormat::ForeignSlidingLog:
    case KeyFormat::CounterWindow:
    case KeyFormat::ForeignTokenBucket:
        return QStringLiteral("'%1' is a %2 limiter that another service keeps: its library decides on it, and Ratescope's scripts "
                              "never write to it (peek and inspect read it)")
            .arg(shownKey, kind.label());
    default:
        return {};
    }
}

bool isTicketMember(const QByteArray &member)
{
    // <length code><ticket>[:<cost>], the code being k nines and a digit c, for 9k+c digits.
    const qsizetype colon = member.indexOf(':');
    const QByteArray ticket = colon < 0 ? member : member.left(colon);
    if (colon >= 0) {
        const QByteArray cost = member.mid(colon + 1);
        if (cost.isEmpty() || cost.size() > 13 || !std::all_of(cost.begin(), cost.end(), [](char c) { return c >= '0' && c <= '9'; }))
            return false;
    }
    qsizetype nines = 0;
    while (nines < ticket.size() && ticket[nines] == '9')
        ++nines;
    if (nines >= ticket.size())
        return false;
    const char c = ticket[nines];
    if (c < '0' || c > '8' || (nines == 0 && c == '0'))
        return false;
    const qsizetype digits = 9 * nines + (c - '0');
    const QByteArray rest = ticket.mid(nines + 1);
    return rest.size() == digits && std::all_of(rest.begin(), rest.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

size_t appendSampleCommands(std::vector<Command> &out, const QByteArray &key, const QByteArray &type)
{
    // Literals: no allocation per key for the constant words (a scan sends one per key).
    if (type == "zset")
        out.push_back(
            {QByteArrayLiteral("ZRANGE"), key, QByteArrayLiteral("-1"), QByteArrayLiteral("-1"), QByteArrayLiteral("WITHSCORES")});
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
                     KeyClass &k)
{
    if (!declaredFormat.isEmpty()) {
        const LimiterFormat *f = findLimiterFormat(declaredFormat);
        KeyClass candidate;
        if (f && f->type() == type && f->match(key, sample, nowUs, true, candidate)) {
            k = candidate;
            k.format = KeyFormat::Library;
            k.reader = f;
            return true;
        }
    }
    for (const LimiterFormat *f : limiterFormatsOfType(type)) {
        KeyClass candidate;
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

KeyClass classify(const QByteArray &key, const QByteArray &type, const std::vector<Reply> &samples, qint64 nowUs, ScoreUnit declaredUnit,
                  const QString &declaredFormat, qint64 declaredWindowUs)
{
    KeyClass k;
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
