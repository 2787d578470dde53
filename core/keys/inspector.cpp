#include "keys/inspector.h"

#include "limiters/limiterscript.h"
#include "limiters/slidingbuckets.h"

#include "redis/connection.h"
#include "base/errors.h"
#include "base/keytext.h"
#include "formats/formatreaders.h"
#include "formats/keyshapes.h"
#include "keys/keyscanner.h"
#include "keys/logwindow.h"
#include "formats/usage.h"

#include <QScopeGuard>
#include <cmath>
#include <QJsonArray>

namespace ratescope {

namespace {

// What inspectKey() says of any key: its type, encoding, time to live and memory.
std::vector<Command> keyFacts(const QByteArray &key)
{
    return {{"TYPE", key}, {"OBJECT", "ENCODING", key}, {"PTTL", key}, {"MEMORY", "USAGE", key, "SAMPLES", "0"}};
}

// Another library's limiter that `key` names although its own shape does not say so: the name
// of one whose keys carry their window (a window of it exists now), or the first key of one
// kept in several keys (its other key exists and says so).
std::optional<KeyKind> libraryByName(Connection &connection, const QByteArray &key, const QByteArray &type, qint64 nowUs,
                                      ScoreUnit declaredUnit, const std::optional<LimitSpec> &spec, const QString &declaredFormat)
{
    for (const FormatReader *f : formatReaders()) {
        const bool declared = declaredFormat == f->name();
        if (type == "none") {
            std::optional<KeyKind> kind = f->nameKind(key, spec ? &*spec : nullptr, declared);
            if (!kind)
                continue;
            kind->format = KeyFormat::Library;
            kind->reader = f;
            const QByteArrayList windows = f->keys(*kind, nowUs);
            std::vector<Command> exists;
            for (const QByteArray &w : windows)
                exists.push_back({"EXISTS", w});
            if (exists.empty())
                continue;
            for (const Reply &r : connection.pipeline(exists))
                if (r.isInteger() && r.integer() > 0)
                    return kind;
            continue;
        }
        for (const QByteArray &probe : f->probeKeys(key)) {
            const QByteArray probeType = connection.command({"TYPE", probe}).bytes();
            if (probeType != f->type())
                continue;
            const KeyKind k =
                classify(probe, probeType, connection.pipeline(sampleCommands(probe, probeType)), nowUs, declaredUnit, declaredFormat);
            if (k.format == KeyFormat::Library && k.reader == f && k.base == key)
                return k;
        }
    }
    return std::nullopt;
}

} // namespace

std::vector<Command> classifyReads(const QByteArray &key, bool forInspect)
{
    std::vector<Command> reads{{"TYPE", key}};
    for (const char *type : {"hash", "zset", "string", "list"})
        appendSampleCommands(reads, key, type);
    if (forInspect)
        for (Command c : keyFacts(key))
            reads.push_back(std::move(c));
    return reads;
}

namespace {

// KEYS: the key, the policies' hash, the key's overrides; ARGV: more windows (microseconds).
// Returns {window_us, window id, EXISTS <key>:<id> <key>:<id - 1>} per whole-second window.
const QByteArray kCounterWindows = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local windows, out = {}, {}
local function add(w)
  w = tonumber(w)
  if w and w >= 1000000 and w % 1000000 == 0 then windows[w] = true end
end
local function addJson(text)
  local ok, o = pcall(cjson.decode, text)
  if ok and type(o) == 'table' then add(o.window_us) end
end
for _, v in ipairs(redis.call('HVALS', KEYS[2])) do addJson(v) end
for i = 3, #KEYS do
  local v = redis.call('GET', KEYS[i])
  if v then addJson(v) end
end
for _, w in ipairs(ARGV) do add(w) end
for w in pairs(windows) do
  local id = math.floor(now / w)
  local n = redis.call('EXISTS', KEYS[1] .. ':' .. string.format('%d', id), KEYS[1] .. ':' .. string.format('%d', id - 1))
  out[#out + 1] = {string.format('%d', w), string.format('%d', id), n}
end
return out
)lua";

} // namespace

Command counterWindowsQuery(const QByteArray &key, const QByteArray &policiesHash, const std::vector<Command> &overrideReads,
                            const std::vector<qint64> &windowsUs)
{
    Command c{"EVAL_RO", kCounterWindows, QByteArray::number(qsizetype(2 + overrideReads.size())), key, policiesHash};
    for (const Command &get : overrideReads)
        c << get.value(1);
    for (qint64 w : windowsUs)
        c << QByteArray::number(w);
    return c;
}

std::vector<Command> takeCounterWindows(Connection &connection, const QByteArray &key, const Reply &reply)
{
    std::vector<Command> kept;
    if (!reply.isArray())
        return kept; // refused (no EVAL_RO, NOPERM): classifyKey asks itself
    for (const Reply &w : reply.elements()) {
        if (!w.isArray() || w.size() != 3 || !w[2].isInteger())
            continue;
        bool ok = false;
        const qint64 id = w[1].bytes().toLongLong(&ok);
        if (ok) {
            Command exists{"EXISTS", key + ":" + QByteArray::number(id), key + ":" + QByteArray::number(id - 1)};
            kept.push_back(exists);
            connection.keepPrefetched(std::move(exists), Reply::integer(w[2].integer()));
        }
    }
    return kept;
}

std::vector<Command> firstRoundReads(const MetadataNamespace &ns, const QByteArray &key, const FirstRound &round)
{
    const QByteArray policies = PolicyStore::hashKeyIn(ns);
    std::vector<Command> reads{{"HGETALL", policies}};
    const std::vector<Command> overrides = LimitResolver::overrideReads(ns, key);
    reads.insert(reads.end(), overrides.begin(), overrides.end());
    reads.push_back({"TIME"});
    for (Command &c : classifyReads(key, round.forInspect))
        reads.push_back(std::move(c));
    if (round.forWrite)
        reads.push_back({"EXISTS", key});
    if (round.oneServer) { // a cluster asks every master, in rounds of its own
        if (round.askScripts) {
            reads.push_back(LoadedLibrary::query());
            reads.push_back(LimiterScript::existsQuery());
        }
        std::vector<qint64> windowsUs = round.windowsUs;
        if (round.forWrite)
            for (qint64 seconds : usualCounterWindowSeconds())
                windowsUs.push_back(seconds * 1000000);
        reads.push_back(counterWindowsQuery(key, policies, overrides, windowsUs));
    }
    return reads;
}

std::vector<Command> prefetchFirstRound(Connection &connection, const MetadataNamespace &ns, const QByteArray &key, const FirstRound &round)
{
    std::vector<Command> reads = firstRoundReads(ns, key, round);
    connection.prefetch(reads);
    if (round.oneServer) // the counter windows' question is the last read
        if (const auto counters = connection.takePrefetched(reads.back()))
            for (Command &kept : takeCounterWindows(connection, key, *counters))
                reads.push_back(std::move(kept));
    return reads;
}

KeyKind classifyKey(Connection &connection, const QByteArray &key, qint64 nowUs, ScoreUnit declaredUnit,
                     const std::optional<LimitSpec> &spec, const QString &declaredFormat)
{
    const QByteArray type = connection.command({"TYPE", key}).bytes();
    if (type != "none") {
        const KeyKind k = classify(key, type, connection.pipeline(sampleCommands(key, type)), nowUs, declaredUnit, declaredFormat,
                                    spec ? spec->windowUs : 0);
        if (k.isLimiter())
            return k;
        return libraryByName(connection, key, type, nowUs, declaredUnit, spec, declaredFormat).value_or(k);
    }
    if (const auto named = libraryByName(connection, key, type, nowUs, declaredUnit, spec, declaredFormat))
        return *named;
    if (!spec)
        return {};
    const qint64 id = nowUs / spec->windowUs;
    const auto r = connection.pipeline({{"EXISTS", key + ":" + QByteArray::number(id), key + ":" + QByteArray::number(id - 1)}});
    KeyKind k;
    if (r[0].toInteger() > 0 && spec->windowUs % 1000000 == 0) {
        k.format = KeyFormat::CounterWindow;
        k.base = key;
        k.windowId = id;
        k.windowSeconds = spec->windowUs / 1000000;
    }
    return k;
}

QString declaredFormatMismatch(const QByteArray &key, const QByteArray &type, const KeyKind &kind, const Policy *policy)
{
    if (!policy || policy->format.isEmpty() || type == "none")
        return {};
    const FormatReader *declared = findFormatReader(policy->format);
    if (!declared || (kind.format == KeyFormat::Library && kind.reader == declared))
        return {};
    return QStringLiteral("'%1' is covered by policy '%2', which declares its keys %3 limiters, but it holds no %4 (a %5 that does "
                          "not read as one)")
        .arg(displayKey(key), escapeControls(policy->name), policy->format, declared->label(), QString::fromUtf8(type));
}

QString writeRefusal(Connection &connection, const MetadataNamespace &ns, const QByteArray &key, const Policy *policy,
                     const LimitSpec &spec, std::optional<qint64> atUs)
{
    const QString shown = displayKey(key);
    if (QString own = notOursToWrite(shown, key, ns, policy, KeyKind{}); !own.isEmpty())
        return own; // known without asking the server
    const ScoreUnit unit = policy ? policy->scoreUnit : ScoreUnit::Auto;
    const QString format = policy ? policy->format : QString();
    const qint64 serverNow = serverTimeUs(connection);
    std::vector<qint64> times{serverNow};
    if (atUs && *atUs != serverNow)
        times.push_back(*atUs);
    for (qint64 t : times)
        if (QString theirs = notOursToDecide(shown, classifyKey(connection, key, t, unit, spec, format)); !theirs.isEmpty())
            return theirs;
    // A new key beside another service's counter windows: their base, whatever window the
    // request names and whenever it is made at. classifyKey() asked for the windows of the
    // request's own length at each of these times already.
    std::vector<Command> probes{{"EXISTS", key}};
    std::vector<qint64> lengthsUs;
    for (qint64 t : times) {
        for (qint64 seconds : usualCounterWindowSeconds())
            if (seconds * 1000000 != spec.windowUs)
                lengthsUs.push_back(seconds * 1000000);
        for (std::size_t i = probes.size() - 1; i < lengthsUs.size(); ++i) {
            const auto [current, previous] = counterWindowKeys(key, lengthsUs[i], t);
            probes.push_back({"EXISTS", current, previous});
        }
    }
    const std::vector<Reply> found = connection.pipeline(probes);
    if (found[0].toInteger() > 0)
        return {};
    for (std::size_t i = 1; i < found.size(); ++i) {
        if (found[i].toInteger() > 0) {
            KeyKind k;
            k.format = KeyFormat::CounterWindow;
            k.base = key;
            k.windowSeconds = lengthsUs[i - 1] / 1000000;
            return notOursToDecide(shown, k);
        }
    }
    return {};
}

namespace {

QJsonObject specJson(const LimitSpec &s)
{
    return {{QStringLiteral("algorithm"), algorithmName(s.algorithm)},
            {QStringLiteral("limit"), s.limit},
            {QStringLiteral("window_us"), s.windowUs},
            {QStringLiteral("cost"), s.cost}};
}

QJsonObject decisionJson(const Usage &u)
{
    const Decision &d = u.decision;
    return {{QStringLiteral("used_now"), u.usedNow},
            {QStringLiteral("allowed"), d.allowed},
            {QStringLiteral("limit"), d.limit},
            {QStringLiteral("used"), d.used},
            {QStringLiteral("remaining"), d.remaining},
            {QStringLiteral("retry_after_us"), d.retryAfterUs},
            {QStringLiteral("reset_after_us"), d.resetAfterUs}};
}

qint64 field(const QHash<QByteArray, QByteArray> &h, const char *name)
{
    return h.value(QByteArray(name)).toLongLong();
}

QJsonObject logState(Connection &c, const QByteArray &key, const KeyKind &kind, const std::optional<LimitSpec> &spec,
                     const InspectOptions &o)
{
    const double unit = double(kind.unit == ScoreUnit::Auto ? 1 : scoreUnitUs(kind.unit));
    const QByteArray lower = spec ? "(" + QByteArray::number(double(o.nowUs - spec->windowUs) / unit, 'f', 6) : QByteArray("-inf");
    const auto r = c.pipeline({
        {"ZCARD", key},
        {"ZCOUNT", key, lower, "+inf"},
        {"ZRANGE", key, "0", "0", "WITHSCORES"},
        {"ZRANGE", key, "-1", "-1", "WITHSCORES"},
        {"ZRANGE", key, lower, "+inf", "BYSCORE", "LIMIT", QByteArray::number(o.entryOffset), QByteArray::number(o.entryCount),
         "WITHSCORES"},
        {"ZRANGE", key, lower, "+inf", "BYSCORE", "LIMIT", "0", "1", "WITHSCORES"},
    });
    auto entry = [&](const QByteArray &member, const QByteArray &score) {
        const qint64 us = scoreToUs(score.toDouble(), unit); // another service's double: clamped
        QJsonObject e{{QStringLiteral("time_us"), us}, {QStringLiteral("age_us"), o.nowUs - us}};
        insertBytes(e, QStringLiteral("member"), member);
        return e;
    };
    QJsonObject s{{QStringLiteral("entries_total"), r[0].toInteger()}, {QStringLiteral("score_unit"), scoreUnitName(kind.unit)}};
    if (spec)
        s.insert(QStringLiteral("entries_in_window"), r[1].toInteger());
    if (r[2].size() == 2)
        s.insert(QStringLiteral("oldest"), entry(r[2][0].bytes(), r[2][1].bytes()));
    if (r[3].size() == 2)
        s.insert(QStringLiteral("newest"), entry(r[3][0].bytes(), r[3][1].bytes()));
    QJsonArray page;
    for (size_t i = 0; i + 1 < r[4].size(); i += 2)
        page.append(entry(r[4][i].bytes(), r[4][i + 1].bytes()));
    s.insert(QStringLiteral("entries"), page);
    s.insert(QStringLiteral("entries_offset"), o.entryOffset);
    if (spec && r[5].size() == 2) // the next capacity comes back when the oldest entry in the window expires
        s.insert(QStringLiteral("next_expiry_us"), scoreToUs(r[5][1].bytes().toDouble(), unit) + spec->windowUs - o.nowUs);
    return s;
}

QJsonObject hashState(Connection &c, const QByteArray &key, const KeyKind &kind, const std::optional<LimitSpec> &spec, qint64 nowUs)
{
    // Read in bounded time whatever the hash holds: one page of fields (every field of any hash
    // a script writes), its length, and by name the fields the state below is made of.
    static const QByteArrayList kNamed = {"w", "n", "c", "p", "tk", "ts", "tat", "ws", "bn", "t", "l", "h"};
    Command named{QByteArrayLiteral("HMGET"), key};
    named.append(kNamed);
    const auto r = c.pipeline({bucketHashScan(key), {"HLEN", key}, named});
    const Reply &page = r[0].orThrow();
    const bool whole = isWholeHash(page);
    QHash<QByteArray, QByteArray> h;
    const Reply &all = scannedFields(page);
    for (size_t i = 0; i + 1 < all.size(); i += 2)
        h.insert(all[i].bytes(), all[i + 1].bytes());
    QJsonObject fields;
    for (auto it = h.cbegin(); it != h.cend(); ++it)
        fields.insert(displayKey(it.key()), isUtf8(it.value()) ? QString::fromUtf8(it.value()) : displayKey(it.value()));
    QJsonObject s{{QStringLiteral("fields"), fields}};
    if (!whole) { // a page of them; the state's own fields as they are
        s.insert(QStringLiteral("fields_total"), r[1].orThrow().toInteger());
        const Reply &values = r[2].orThrow();
        for (qsizetype i = 0; i < kNamed.size() && size_t(i) < values.size(); ++i)
            if (values[size_t(i)].isNil())
                h.remove(kNamed[i]);
            else
                h.insert(kNamed[i], values[size_t(i)].bytes());
    }
    const qint64 w = spec ? spec->windowUs : 0;
    switch (kind.format) {
    case KeyFormat::FixedWindow:
        s.insert(QStringLiteral("window_id"), field(h, "w"));
        s.insert(QStringLiteral("count"), field(h, "n"));
        if (w) {
            s.insert(QStringLiteral("current_window"), field(h, "w") == nowUs / w);
            s.insert(QStringLiteral("window_ends_in_us"), w - nowUs % w);
        }
        break;
    case KeyFormat::SlidingCounter: {
        s.insert(QStringLiteral("window_id"), field(h, "w"));
        s.insert(QStringLiteral("current_count"), field(h, "c"));
        s.insert(QStringLiteral("previous_count"), field(h, "p"));
        if (w) {
            const qint64 id = nowUs / w, stored = field(h, "w");
            const qint64 curr = stored == id ? field(h, "c") : 0;
            const qint64 prev = stored == id ? field(h, "p") : stored == id - 1 ? field(h, "c") : 0;
            const double weight = double(w - nowUs % w) / double(w);
            s.insert(QStringLiteral("now"), QJsonObject{{QStringLiteral("current"), curr},
                                                        {QStringLiteral("previous"), prev},
                                                        {QStringLiteral("previous_weight"), weight},
                                                        {QStringLiteral("estimate"), double(prev) * weight + double(curr)}});
        }
        break;
    }
    case KeyFormat::SlidingBuckets: {
        s.insert(QStringLiteral("kept_for_window_us"), field(h, "ws"));
        s.insert(QStringLiteral("sub_buckets"), field(h, "bn"));
        s.insert(QStringLiteral("newest_bucket"), field(h, "h"));
        s.insert(QStringLiteral("stored_total"), field(h, "t"));
        if (!spec)
            break;
        std::optional<BucketHash> state;
        try {
            state = bucketStateFrom(c, key, *spec, nowUs, page);
        } catch (const ReplyError &) {
            break; // not one the script wrote: its fields are shown as they are
        }
        if (!state || state->windowUs != spec->windowUs)
            break; // kept for other limits: the script reads it as empty
        // The buckets the window covers now, oldest (weighted) first, as the script reads them.
        const qint64 b = state->buckets;
        const BucketPosition at = readPosition(*state, nowUs, spec->windowUs, int(b));
        QJsonArray counts;
        for (qint64 j = at.id - b; j <= at.id; ++j)
            counts.append(j >= state->low && j <= state->high ? std::max<qint64>(0, state->count(j)) : 0);
        // Integers, as every time in the JSON: a bucket is window / B wide, which need not be
        // a whole number of µs (1m / 7): rounded down, as the elapsed part of it.
        s.insert(QStringLiteral("bucket_width_us"), spec->windowUs / b);
        s.insert(QStringLiteral("elapsed_us"), at.elapsed / b);
        s.insert(QStringLiteral("bucket_counts"), counts);
        break;
    }
    case KeyFormat::TokenBucket:
        s.insert(QStringLiteral("tokens_at_last_update"), field(h, "tk"));
        s.insert(QStringLiteral("last_update_us"), field(h, "ts"));
        if (spec)
            s.insert(QStringLiteral("refill_per_second"), double(spec->limit) * 1e6 / double(spec->windowUs));
        break;
    case KeyFormat::Gcra:
        s.insert(QStringLiteral("tat_us"), field(h, "tat"));
        s.insert(QStringLiteral("tat_ahead_us"), std::max<qint64>(0, field(h, "tat") - nowUs));
        if (spec)
            s.insert(QStringLiteral("emission_interval_us"), double(spec->windowUs) / double(spec->limit));
        break;
    default:
        break;
    }
    return s;
}

QJsonObject counterState(Connection &c, const KeyKind &kind, qint64 nowUs)
{
    const qint64 w = kind.windowSeconds * 1000000;
    const auto [cur, prev] = counterWindowKeys(kind.base, w, nowUs);
    const auto r = c.pipeline({{"GET", cur}, {"GET", prev}, {"PTTL", cur}});
    const qint64 curr = r[0].isNil() ? 0 : r[0].toInteger(), previous = r[1].isNil() ? 0 : r[1].toInteger();
    const double weight = double(w - nowUs % w) / double(w);
    QJsonObject current{{QStringLiteral("count"), curr}, {QStringLiteral("ttl_ms"), r[2].integer()}};
    insertBytes(current, QStringLiteral("key"), cur);
    QJsonObject before{{QStringLiteral("count"), previous}};
    insertBytes(before, QStringLiteral("key"), prev);
    QJsonObject s{{QStringLiteral("window_seconds"), kind.windowSeconds},
                  {QStringLiteral("current"), current},
                  {QStringLiteral("previous"), before},
                  {QStringLiteral("window_ends_in_us"), w - nowUs % w},
                  {QStringLiteral("sliding_estimate"), double(previous) * weight + double(curr)}};
    insertBytes(s, QStringLiteral("base"), kind.base);
    return s;
}

// What the decision peeks: the key (a counter window's base) as read (a missing key is a fresh
// limiter of the limits' algorithm), under the limits in force; nothing without limits, for a
// key that is no readable limiter, or for one that holds another format than its policy declares.
std::optional<UsageTarget> peekTarget(const QByteArray &key, const KeyKind &kind, const Reply &type, const std::optional<LimitSpec> &spec,
                                      const Policy *policy)
{
    if (!declaredFormatMismatch(key, type.bytes(), kind, policy).isEmpty())
        return std::nullopt;
    if (!spec || !((kind.isLimiter() && kind.readable()) || type.text() == QLatin1String("none")))
        return std::nullopt;
    KeyKind asRead = kind;
    if (!kind.isLimiter())
        asRead.format = ownFormat(spec->algorithm);
    return UsageTarget{kind.format == KeyFormat::CounterWindow ? kind.base : key, asRead, *spec};
}

} // namespace

QJsonObject inspectKey(Connection &connection, const QByteArray &key, LimitResolver &resolver, const InspectOptions &o, KeyKind *kindRead)
{
    resolver.readOverrides(connection, {key});
    const LimitsInForce asKey = resolver.resolve(key, KeyKind{}, o.spec);
    const ScoreUnit declared = o.scoreUnit != ScoreUnit::Auto ? o.scoreUnit : asKey.policy ? asKey.policy->scoreUnit : ScoreUnit::Auto;
    const KeyKind kind = classifyKey(connection, key, o.nowUs, declared, asKey.spec, asKey.policy ? asKey.policy->format : QString());
    if (kindRead)
        *kindRead = kind;
    // What is in force for the limiter the key belongs to (a counter window's base); another
    // library's key may state its own limits or window (Python limits, Kong's period).
    if (kind.subject(key) != key)
        resolver.readOverrides(connection, {kind.subject(key)});
    const LimitsInForce limits = resolver.resolve(kind.subject(key), kind, o.spec);
    const std::optional<Override> &override = limits.override;
    const std::optional<LimitSpec> spec = limits.spec;
    if (o.buckets > 0) { // refused before anything else is read
        if (!o.bucketSpanUs && !spec)
            throw UsageError(QStringLiteral("buckets need a span or known limits (a policy, or --limit and --window)"));
        if (kind.format != KeyFormat::SlidingLog && kind.format != KeyFormat::ForeignSlidingLog && kind.format != KeyFormat::Other)
            throw UsageError(QStringLiteral("buckets count the entries of a sliding log; '%1' is a %2").arg(displayKey(key), kind.label()));
    }

    const auto meta = connection.pipeline(keyFacts(key));
    // The decision's peek, asked below after the state: what it reads is known now, so it goes
    // with the state's first request (Connection::readAlong), not in a round of its own.
    const std::optional<UsageTarget> peek = peekTarget(key, kind, meta[0], spec, asKey.policy ? &*asKey.policy : nullptr);
    std::vector<Command> along;
    if (peek) {
        try {
            std::optional<ScriptCalls> calls = connection.scriptCalls();
            along = usageCommands(connection, *peek, o.nowUs, calls);
        } catch (const UsageError &) {
            // said by the peek itself
        }
    }
    connection.readAlong(along);
    auto forget = qScopeGuard([&] { connection.forget(along); }); // when the decision is not reached
    if (o.readAlong)
        connection.readAlong(o.readAlong(kind, spec)); // the caller's: taken, or forgotten, by it
    QJsonObject out{{QStringLiteral("now_us"), o.nowUs},
                    {QStringLiteral("type"), meta[0].text()},
                    {QStringLiteral("exists"), meta[0].text() != QLatin1String("none")},
                    {QStringLiteral("format"), kind.label()}};
    insertBytes(out, QStringLiteral("key"), key);
    if (!meta[1].isError() && !meta[1].isNil())
        out.insert(QStringLiteral("encoding"), meta[1].text());
    if (meta[2].isInteger())
        out.insert(QStringLiteral("ttl_ms"), meta[2].integer());
    if (meta[3].isInteger())
        out.insert(QStringLiteral("memory"), meta[3].integer());
    if (const auto a = kind.algorithm())
        out.insert(QStringLiteral("algorithm"), algorithmName(*a));
    if (kind.format == KeyFormat::Library) {
        QJsonObject library{{QStringLiteral("name"), kind.reader->name()}, {QStringLiteral("library"), kind.reader->library()}};
        insertBytes(library, QStringLiteral("limiter"), kind.subject(key));
        QJsonArray keys;
        for (const QByteArray &k : kind.reader->keys(kind, o.nowUs))
            keys.append(displayKey(k));
        library.insert(QStringLiteral("keys"), keys);
        out.insert(QStringLiteral("library_format"), library);
    }
    if (limits.policy)
        out.insert(QStringLiteral("policy"), limits.policy->name);
    if (override)
        out.insert(QStringLiteral("override"), override->toJson());
    if (spec) {
        out.insert(QStringLiteral("limits"), specJson(*spec));
        out.insert(QStringLiteral("limits_from"), limitSourceName(limits.source));
    }

    switch (kind.format) {
    case KeyFormat::SlidingLog:
    case KeyFormat::ForeignSlidingLog:
        out.insert(QStringLiteral("state"), logState(connection, key, kind, spec, o));
        break;
    case KeyFormat::CounterWindow:
        out.insert(QStringLiteral("state"), counterState(connection, kind, o.nowUs));
        break;
    case KeyFormat::Library:
        if (kind.reader->readable())
            out.insert(QStringLiteral("state"),
                       kind.reader->state(kind, connection.pipeline(kind.reader->read(kind, spec ? &*spec : nullptr, o.nowUs)), o.nowUs));
        else
            out.insert(QStringLiteral("state"), QJsonObject{{QStringLiteral("opaque"), true}});
        break;
    case KeyFormat::Other:
        break;
    default:
        out.insert(QStringLiteral("state"), hashState(connection, key, kind, spec, o.nowUs));
        break;
    }
    const bool zset = meta[0].text() == QLatin1String("zset") || meta[0].text() == QLatin1String("none");
    if (o.buckets > 0 && zset) {
        // (now - span, now]: the window's own rule (an entry counts while now - t < window), so
        // with the window as span the counts add up to the entries in the window.
        LogWindowQuery q;
        q.key = key;
        q.unit = kind.unit == ScoreUnit::Auto ? ScoreUnit::Microseconds : kind.unit;
        const qint64 span = o.bucketSpanUs ? o.bucketSpanUs : spec->windowUs;
        q.fromUs = o.nowUs - span + 1;
        q.toUs = o.nowUs + 1;
        q.buckets = o.buckets;
        q.entryCap = 0; // always counted on the server, never downloaded
        QJsonArray buckets;
        for (const LogBucket &b : readLogWindow(connection, q).buckets)
            buckets.append(
                QJsonObject{{QStringLiteral("from_us"), b.fromUs}, {QStringLiteral("to_us"), b.toUs}, {QStringLiteral("count"), b.count}});
        out.insert(QStringLiteral("buckets"), buckets);
        out.insert(QStringLiteral("bucket_span_us"), span);
    } else if (o.buckets > 0) {
        throw UsageError(QStringLiteral("buckets count the entries of a sliding log; '%1' is a %2").arg(displayKey(key), meta[0].text()));
    }
    if (const QString mismatch = declaredFormatMismatch(key, meta[0].bytes(), kind, asKey.policy ? &*asKey.policy : nullptr);
        !mismatch.isEmpty()) {
        out.insert(QStringLiteral("decision_error"), mismatch); // never read as one of Ratescope's own
    } else if (peek) {
        try {
            out.insert(QStringLiteral("decision"), decisionJson(peekAnyFormat(connection, peek->key, peek->kind, peek->spec, o.nowUs)));
        } catch (const UnexpectedReplyError &e) {
            out.insert(QStringLiteral("decision_error"), e.message());
        } catch (const ReplyError &e) {
            out.insert(QStringLiteral("decision_error"), e.message());
        }
    }
    // The decision took the peek read along. (Not forgotten: the caller's read-along may ask
    // the same command, sent once for each, and the other reply is its.)
    forget.dismiss();
    return out;
}

} // namespace ratescope
