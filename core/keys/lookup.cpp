#include "keys/lookup.h"

#include "base/duration.h"
#include "base/errors.h"
#include "base/glob.h"
#include "base/keytext.h"
#include "keys/keyscanner.h"
#include "keys/logwindow.h"
#include "keys/shards.h"
#include "redis/connection.h"

#include <QDateTime>

#include <algorithm>
#include <map>

namespace ratescope {

namespace {

// A log's entries read to find since when it denies: at most this many (a limit above it
// leaves the time unknown).
constexpr qint64 kDeniedSinceEntries = 10000;

bool isLog(KeyFormat f)
{
    return f == KeyFormat::SlidingLog || f == KeyFormat::ForeignSlidingLog;
}

// The oldest time since which a denying log has denied without a break: the entry at which
// the window's cost, counted from its oldest entry, reached what denies a request of the cost
// (every later moment up to now still has that entry and the ones before it in its window).
std::optional<qint64> deniedSince(Connection &connection, const LookupRow &row, qint64 nowUs)
{
    const LimitSpec &spec = *row.spec;
    const qint64 denyingAt = spec.limit - spec.cost + 1; // cost in the window that denies
    if (denyingAt < 1 || spec.limit > kDeniedSinceEntries)
        return std::nullopt;
    const ScoreUnit unit = row.kind.format == KeyFormat::SlidingLog ? ScoreUnit::Microseconds : row.kind.unit;
    const LogPage page = readLogPage(connection, row.key, unit, nowUs - spec.windowUs + 1, nowUs + 1, 0, int(denyingAt));
    qint64 cost = 0;
    for (const LogEntry &e : page.entries) {
        cost += e.cost;
        if (cost >= denyingAt)
            return e.timeUs;
    }
    return std::nullopt;
}

bool denyingFirst(const LookupRow &a, const LookupRow &b)
{
    if (a.denying() != b.denying())
        return a.denying();
    if (a.denying()) {
        const qint64 wa = a.usage->decision.retryAfterUs, wb = b.usage->decision.retryAfterUs;
        if (wa != wb)
            return wa > wb;
    }
    const double fa = a.fill().value_or(-1), fb = b.fill().value_or(-1);
    if (fa != fb)
        return fa > fb;
    return a.key < b.key;
}

QString clockText(qint64 us)
{
    return QDateTime::fromMSecsSinceEpoch(us / 1000).toString(QStringLiteral("HH:mm:ss"));
}

// "60 of 60 used in the last 10s", in the words of how the algorithm counts.
QString usedText(const LookupRow &row)
{
    const LimitSpec &spec = *row.spec;
    const qint64 used = row.usage->usedNow, limit = row.usage->decision.limit;
    const QString window = formatDurationUs(spec.windowUs);
    switch (spec.algorithm) {
    case Algorithm::FixedWindow:
        return QStringLiteral("%1 of %2 used in this %3 window").arg(used).arg(limit).arg(window);
    case Algorithm::TokenBucket:
        return QStringLiteral("%1 of %2 tokens taken (refilled at %2 per %3)").arg(used).arg(limit).arg(window);
    case Algorithm::Gcra:
        return QStringLiteral("%1 of a burst of %2 used (%2 per %3)").arg(used).arg(limit).arg(window);
    default:
        return QStringLiteral("%1 of %2 used in the last %3").arg(used).arg(limit).arg(window);
    }
}

} // namespace

std::optional<double> LookupRow::fill() const
{
    if (!usage || usage->decision.limit <= 0)
        return std::nullopt;
    return double(usage->usedNow) / double(usage->decision.limit);
}

QString LookupRow::algorithmText() const
{
    if (spec)
        return algorithmName(spec->algorithm);
    if (const auto a = kind.algorithm())
        return algorithmName(*a);
    return kind.label();
}

QByteArray lookupScanPattern(const QByteArray &id)
{
    return "*" + escapeGlob(id) + "*";
}

LookupResult lookupLimiters(Connection &connection, const LookupOptions &options, const std::function<bool(qint64)> &progress)
{
    if (options.id.isEmpty())
        throw UsageError(QStringLiteral("the identifier to look up is empty"));
    if (!options.match.isEmpty())
        requireWellFormedGlob(options.match, QStringLiteral("--match"));

    KeyScanner::Options scan;
    scan.match = lookupScanPattern(options.id);
    scan.count = options.scanCount;
    scan.nowUs = options.nowUs;
    scan.policies = options.policies;
    KeyScanner scanner(connection, scan);
    LookupResult result;

    // The keys found, made limiters: counter windows and other libraries' keys by their base,
    // <base>:<n> keys kept apart until every key is known (they may make a shard group).
    std::vector<LookupRow> rows;
    std::map<QByteArray, size_t> byBase; // a counter's or library's base -> its row
    std::vector<std::pair<QByteArray, KeyKind>> shardCandidates;
    std::map<QByteArray, LookupRow> candidateRows;
    const QByteArray ns = options.ns.bytes();
    while (!scanner.atEnd()) {
        for (const KeyRecord &rec : scanner.nextPage()) {
            if (!rec.kind.isLimiter() || (!ns.isEmpty() && rec.key.startsWith(ns)))
                continue; // no limiter; Ratescope's own records
            if (!options.match.isEmpty() && !globMatch(options.match, rec.key))
                continue;
            const QByteArray subject = rec.kind.subject(rec.key);
            QByteArray shardBase;
            int shardNumber = 0;
            const bool grouped = rec.kind.format == KeyFormat::CounterWindow || rec.kind.format == KeyFormat::Library;
            const bool maybeShard = !grouped && splitShardKey(rec.key, &shardBase, &shardNumber);
            // The identifier must name the limiter, not only one of its keys: "3" is no
            // customer of rl:{acme}:3, nor a window id of api:acme:28475638.
            if (!keyHoldsSegment(subject, options.id) && !(maybeShard && keyHoldsSegment(shardBase, options.id)))
                continue;
            LookupRow row;
            row.key = subject;
            row.kind = rec.kind;
            if (grouped) {
                const auto [at, fresh] = byBase.emplace(subject, rows.size());
                if (fresh) {
                    row.keys << subject;
                    rows.push_back(std::move(row));
                }
                continue;
            }
            row.keys << rec.key;
            if (maybeShard) {
                shardCandidates.emplace_back(rec.key, rec.kind);
                candidateRows.emplace(rec.key, std::move(row));
                continue;
            }
            rows.push_back(std::move(row));
        }
        result.scanned = scanner.scanned();
        if (progress && !scanner.atEnd() && !progress(result.scanned)) {
            result.complete = false;
            break;
        }
    }
    result.nowUs = scanner.nowUs();
    const qint64 nowUs = result.nowUs;

    // Shard groups: one row each, read whole under the group's limits.
    for (ShardGroup &g : findShardGroups(shardCandidates, options.policies)) {
        if (!keyHoldsSegment(g.base, options.id)) {
            for (const QByteArray &k : g.keys)
                candidateRows.erase(k); // a group of another name: "acme:3" of "acme" is not acme's
            continue;
        }
        LookupRow row;
        row.key = g.base;
        row.kind = candidateRows.at(g.keys.front()).kind;
        row.shards = g.count;
        for (const QByteArray &k : g.keys) {
            row.keys << k;
            candidateRows.erase(k);
        }
        if (g.policy) {
            OverrideStore overrides(connection, options.ns);
            readGroupOverrides(overrides, g); // the whole group's limit, and shards' own
            row.policy = g.policy->name;
            row.spec = g.policy->spec;
            row.spec->limit = groupLimit(g);
            if (g.override && g.override->windowUs)
                row.spec->windowUs = g.override->windowUs;
            row.override = g.override;
            row.source = g.override ? LimitSource::GroupOverride : LimitSource::Policy;
            try {
                row.usage = groupUsage(sumShards(readUsage(connection, shardTargets(g), nowUs)), row.spec->limit);
            } catch (const ReplyError &) {
                // a shard of another type meanwhile: the group without figures
            }
        }
        rows.push_back(std::move(row));
    }
    for (auto &[key, row] : candidateRows) // <base>:<n> keys that make no group: limiters of their own
        if (keyHoldsSegment(key, options.id))
            rows.push_back(std::move(row));

    // The limits in force (overrides in one round), then every usage in one round.
    LimitResolver resolver(options.policies, options.ns);
    std::vector<QByteArray> subjects;
    for (const LookupRow &row : rows)
        if (!row.shards)
            subjects.push_back(row.key);
    resolver.readOverrides(connection, subjects);
    std::vector<UsageTarget> targets;
    std::vector<size_t> targetRow;
    for (size_t i = 0; i < rows.size(); ++i) {
        LookupRow &row = rows[i];
        if (row.shards)
            continue;
        const LimitsInForce limits = resolver.resolve(row.key, row.kind);
        row.policy = limits.policyName();
        row.override = limits.override;
        row.spec = limits.spec;
        row.source = limits.source;
        if (!row.spec || !row.kind.readable())
            continue;
        UsageTarget t{row.key, row.kind, *row.spec};
        if (row.kind.format == KeyFormat::CounterWindow) {
            t.kind.base = row.key;
            t.kind.windowSeconds = row.spec->windowUs / 1000000;
        }
        targets.push_back(std::move(t));
        targetRow.push_back(i);
    }
    const auto usage = readUsage(connection, targets, nowUs);
    for (size_t i = 0; i < usage.size(); ++i)
        rows[targetRow[i]].usage = usage[i];
    for (LookupRow &row : rows)
        if (row.denying() && !row.shards && isLog(row.kind.format))
            row.deniedSinceUs = deniedSince(connection, row, nowUs);

    std::sort(rows.begin(), rows.end(), denyingFirst);
    result.rows = std::move(rows);
    return result;
}

// A wait as a person reads it: to a tenth of a second, whole seconds from ten on; rounded
// up, so that it never promises the next request early.
static QString spokenWait(qint64 us)
{
    constexpr qint64 kS = 1000000;
    const qint64 step = us >= 10 * kS ? kS : us >= kS ? kS / 10 : 1;
    return formatWaitUs(unitsRoundedUp(us, step) * step);
}

QString lookupVerdict(const LookupRow &row, qint64 nowUs)
{
    if (!row.spec) {
        if (!row.policy.isEmpty())
            return QStringLiteral("no limits: policy %1 gives none for this key").arg(row.policy);
        return QStringLiteral("no limits: no policy matches it (give limits on the command line to read it)");
    }
    if (!row.usage)
        return row.kind.readable() ? QStringLiteral("its state could not be read") : QStringLiteral("its state is not readable (%1)").arg(row.kind.label());
    const Decision &d = row.usage->decision;
    if (d.allowed)
        return QStringLiteral("admits: %1, %2 remaining").arg(usedText(row)).arg(std::max<qint64>(0, d.limit - row.usage->usedNow));
    QString text = row.deniedSinceUs ? QStringLiteral("denied since %1: ").arg(clockText(*row.deniedSinceUs)) : QStringLiteral("denied: ");
    text += usedText(row);
    if (d.retryAfterUs > 0)
        text += QStringLiteral("; the next request passes in %1 (at %2)").arg(spokenWait(d.retryAfterUs), clockText(nowUs + d.retryAfterUs));
    return text;
}

} // namespace ratescope
