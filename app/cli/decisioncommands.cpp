// `ratescope-cli check` and `peek`: one limiter decision, consuming or not.
#include "cli.h"
#include "limitoptions.h"

#include "load/burst.h"
#include "base/duration.h"
#include "base/errors.h"
#include "limiters/httpheaders.h"
#include "keys/inspector.h"
#include "keys/keyscanner.h"
#include "base/keytext.h"
#include "limiters/limiter.h"
#include "admin/limitsinforce.h"
#include "admin/policy.h"
#include "formats/usage.h"

#include <QRandomGenerator>

namespace ratescope::cli {

namespace {

const QCommandLineOption kAlgo = algoOption();
const QCommandLineOption kLimit = limitOption();
const QCommandLineOption kWindow = windowOption();
const QCommandLineOption kCost(QStringLiteral("cost"), QStringLiteral("Cost of this request (default 1, at most the limit)."),
                               QStringLiteral("C"));
const QCommandLineOption kScoreUnit(QStringLiteral("score-unit"),
                                    QStringLiteral("Time unit of a foreign sliding log's scores: auto, s, ms or us."), QStringLiteral("U"));
const QCommandLineOption kNow(QStringLiteral("now-us"),
                              QStringLiteral("Decide at this time (microseconds since the epoch) instead of the server clock."),
                              QStringLiteral("T"));

const QCommandLineOption
    kForce(QStringLiteral("force"),
           QStringLiteral("With --now-us: decide even more than a minute ahead of the server's clock on an existing key."));
const QCommandLineOption kRequestId(QStringLiteral("request-id"),
                                    QStringLiteral("With --shards: the request's id, hashed to pick its shard (default: a random one)."),
                                    QStringLiteral("ID"));
// How far ahead of the server's clock check --now-us may be on an existing key.
constexpr qint64 kMaxNowAheadUs = 60LL * 1000000;

bool flagsComplete(const Cli &cli)
{
    return cli.args().isSet(QStringLiteral("algo")) && cli.args().isSet(QStringLiteral("limit")) &&
           cli.args().isSet(QStringLiteral("window"));
}

// Flags win; what they leave out comes from the key's policy, and an override's limit.
LimitSpec specFor(Cli &cli, const QByteArray &key, const EffectiveLimits &limits)
{
    // The flags are checked first: a typo in one says so rather than "no policy".
    const bool hasAlgo = cli.args().isSet(QStringLiteral("algo"));
    const bool hasLimit = cli.args().isSet(QStringLiteral("limit"));
    const bool hasWindow = cli.args().isSet(QStringLiteral("window"));
    LimitSpec flags;
    if (hasAlgo)
        flags.algorithm = parseAlgorithm(cli.args().value(QStringLiteral("algo")));
    if (hasLimit)
        flags.limit = cli.integerOption(QStringLiteral("limit"), 1, kMaxLimit);
    if (hasWindow)
        flags.windowUs = cli.durationOptionUs(QStringLiteral("window"));
    const std::optional<LimitSpec> base = limits.spec;
    if (!base && !(hasAlgo && hasLimit && hasWindow)) {
        QStringList missing;
        for (const auto &[given, flag] : {std::pair{hasAlgo, "--algo"}, std::pair{hasLimit, "--limit"}, std::pair{hasWindow, "--window"}})
            if (!given)
                missing << QLatin1String(flag);
        const QString list = missing.size() == 1
                                 ? missing.first()
                                 : missing.mid(0, missing.size() - 1).join(QStringLiteral(", ")) + QStringLiteral(" and ") + missing.last();
        throw UsageError(QStringLiteral("no policy matches '%1': %2give %3")
                             .arg(displayKey(key), missing.size() < 3 ? QStringLiteral("also ") : QString(), list));
    }
    LimitSpec spec = base.value_or(LimitSpec{});
    if (hasAlgo)
        spec.algorithm = flags.algorithm;
    if (hasLimit)
        spec.limit = flags.limit;
    if (hasWindow)
        spec.windowUs = flags.windowUs;
    spec.buckets = subBucketsFrom(cli, spec.algorithm, base ? base->buckets : kDefaultBuckets);
    spec.cost = cli.integerOption(QStringLiteral("cost"), 1, kMaxLimit, base ? base->cost : 1);
    spec.validate();
    return spec;
}

EffectiveLimits limitsFor(Cli &cli, const QByteArray &key)
{
    if (flagsComplete(cli))
        return {};
    return readLimitsInForce(cli.connection(), cli.ns(), cli.policiesOnce(), key);
}

// Check's first round (with the handshake): everything about the key, and with --now-us
// whether it exists (the guard against writing its state in the future).
void checkReads(Cli &cli, const QByteArray &key)
{
    std::vector<Command> more;
    if (cli.args().isSet(QStringLiteral("now-us"))) // the check of a time far ahead asks these too
        more = {{"EXISTS", key}, {"TIME"}};
    cli.connectionFor(key, Cli::KeyUse::Write, more);
}

QByteArray keyArgument(const Cli &cli)
{
    const QStringList p = cli.positional();
    if (p.size() != 1)
        throw UsageError(QStringLiteral("expected exactly one KEY, got %1").arg(p.size()));
    return cli.keyBytes(p[0]); // the Redis key as given: no implicit prefix
}

// With --headers, also the HTTP response fields a service would send for this decision.
// A check on one shard of a sharded limiter: which one, and why.
struct ShardPick {
    QByteArray key;
    int index = 0;
    int shards = 0;
    QByteArray requestId;
};

// usedNow: for a peek, how much is used before the request asked about (what `keys`, `top`
// and the console show as used).
void printDecision(Cli &cli, const Decision &d, const LimitSpec &spec, const EffectiveLimits &limits,
                   const std::optional<ShardPick> &shard = std::nullopt, std::optional<qint64> usedNow = std::nullopt)
{
    const bool withHeaders = cli.args().isSet(QStringLiteral("headers"));
    const auto headers =
        withHeaders ? rateLimitHeaders(d, spec, limits.policy ? limits.policy->name : QString()) : QList<QPair<QString, QString>>();
    if (cli.json()) {
        QJsonObject o{
            {QStringLiteral("allowed"), d.allowed},
            {QStringLiteral("limit"), d.limit},
            {QStringLiteral("used"), d.used},
            {QStringLiteral("remaining"), d.remaining},
            {QStringLiteral("retry_after_ms"), unitsRoundedUp(d.retryAfterUs, 1000)},
            {QStringLiteral("reset_after_ms"), unitsRoundedUp(d.resetAfterUs, 1000)},
            {QStringLiteral("limits_from"), limitSourceName(flagsComplete(cli) ? LimitSource::Arguments : limits.source)},
        };
        if (usedNow)
            o.insert(QStringLiteral("used_now"), *usedNow);
        if (withHeaders) {
            QJsonObject h;
            for (const auto &[name, value] : headers)
                h.insert(name, value);
            o.insert(QStringLiteral("headers"), h);
        }
        if (shard) {
            QJsonObject j{{QStringLiteral("index"), shard->index}, {QStringLiteral("shards"), shard->shards}};
            insertBytes(j, QStringLiteral("key"), shard->key);
            insertBytes(j, QStringLiteral("request_id"), shard->requestId);
            o.insert(QStringLiteral("shard"), j);
        }
        cli.printJson(o);
        return;
    }
    QList<QPair<QString, QString>> fields{
        {QStringLiteral("allowed"), d.allowed ? QStringLiteral("yes") : QStringLiteral("no")},
        {QStringLiteral("used"), QStringLiteral("%1 of %2").arg(d.used).arg(d.limit)},
        {QStringLiteral("remaining"), QString::number(d.remaining)},
        {QStringLiteral("retry_after"), formatWaitUs(d.retryAfterUs)},
        {QStringLiteral("reset_after"), formatWaitUs(d.resetAfterUs)},
    };
    if (usedNow)
        fields.insert(2, {QStringLiteral("used_now"), QStringLiteral("%1 of %2 (before this request)").arg(*usedNow).arg(d.limit)});
    if (shard)
        fields.append({QStringLiteral("shard"), QStringLiteral("%1 (%2 of %3, request id %4)")
                                                    .arg(displayKey(shard->key))
                                                    .arg(shard->index + 1)
                                                    .arg(shard->shards)
                                                    .arg(displayKey(shard->requestId))});
    cli.printFields(fields);
    if (withHeaders) {
        cli.out() << '\n';
        for (const auto &[name, value] : headers)
            cli.out() << name << ": " << escapeControls(value) << '\n';
        cli.out().flush();
    }
}

int runCheck(Cli &cli)
{
    QByteArray key = keyArgument(cli);
    if (!flagsComplete(cli))
        checkReads(cli, key); // the policy lookup needs the server; flags alone are validated first
    const EffectiveLimits limits = limitsFor(cli, key);
    LimitSpec spec = specFor(cli, key, limits);
    // A sharded limiter: the request goes to the shard its id hashes to, limited to that
    // shard's share (as a service does; the same rule as a sharded burst).
    std::optional<ShardPick> shard;
    if (cli.args().isSet(QStringLiteral("shards"))) {
        BurstConfig sharding;
        sharding.key = key;
        sharding.spec = spec;
        sharding.shards = int(cli.integerOption(QStringLiteral("shards"), 2, BurstConfig::kMaxShards));
        sharding.shardFrom = int(cli.integerOption(QStringLiteral("shard-from"), 0, 1, 0));
        if (spec.limit / sharding.shards < spec.cost)
            throw UsageError(QStringLiteral("a limit of %1 over %2 shards gives each %3, less than the cost %4")
                                 .arg(spec.limit)
                                 .arg(sharding.shards)
                                 .arg(spec.limit / sharding.shards)
                                 .arg(spec.cost));
        ShardPick pick;
        pick.requestId = cli.args().isSet(QStringLiteral("request-id"))
                             ? cli.bytes(cli.args().value(QStringLiteral("request-id")))
                             : QByteArray::number(QRandomGenerator::global()->generate64()); // as a service's random id
        if (pick.requestId.isEmpty())
            throw UsageError(QStringLiteral("--request-id must not be empty"));
        pick.shards = sharding.shards;
        pick.index = shardForId(pick.requestId, sharding.shards);
        pick.key = sharding.shardKey(pick.index);
        spec.limit = sharding.shardLimit(pick.index);
        key = pick.key;
        shard = pick;
    } else if (cli.args().isSet(QStringLiteral("request-id")) || cli.args().isSet(QStringLiteral("shard-from"))) {
        throw UsageError(QStringLiteral("--request-id and --shard-from go with --shards N"));
    }
    if (flagsComplete(cli))
        checkReads(cli, key); // the flags are valid: now the server
    std::optional<qint64> now;
    if (cli.args().isSet(QStringLiteral("now-us")))
        now = cli.integerOption(QStringLiteral("now-us"), 0, kMaxNowUs);
    if (now && !cli.args().isSet(QStringLiteral("force"))) {
        // A time far ahead of the server's clock would write future state into a live key
        // (a GCRA then says "retry in 85 years" to everyone): only for a new key, or forced.
        Connection &c = cli.connection();
        const auto replies = c.pipeline({{"EXISTS", key}, {"TIME"}});
        const qint64 serverNow = replies[1][0].toInteger() * 1000000 + replies[1][1].toInteger();
        if (replies[0].toInteger() > 0 && *now > serverNow + kMaxNowAheadUs)
            throw UsageError(QStringLiteral("--now-us is %1 ahead of the server's clock and '%2' exists: its state would be set in the "
                                            "future (at most %3 ahead; add --force to do it anyway)")
                                 .arg(formatDurationUs(*now - serverNow), displayKey(key), formatDurationUs(kMaxNowAheadUs)));
    }
    {
        // Ratescope's records and another service's limiter are not ours to write: refused
        // before anything is written.
        // The policy is asked even when the command line gives every limit: it may declare the
        // key another library's. Records that could not be read were named if the limits came
        // from the policies; otherwise this command uses none of them, and says nothing.
        const auto policy = limits.policy ? limits.policy : matchPolicy(cli.policiesOnce(false), key);
        const QString refusal = writeRefusal(cli.connection(), cli.ns(), key, policy ? &*policy : nullptr, spec, now);
        if (!refusal.isEmpty())
            throw UsageError(refusal);
    }
    printDecision(cli, Limiter(cli.connection()).check(key, spec, now), spec, limits, shard);
    return ExitOk;
}

// Peek reads any format: Ratescope's keys through the script (EVALSHA_RO), foreign logs
// and counter windows from their raw data. It never writes.
int runPeek(Cli &cli)
{
    const QByteArray key = keyArgument(cli);
    cli.connectionFor(key); // everything about the key in one round, with the handshake
    const EffectiveLimits limits = limitsFor(cli, key);
    const ScoreUnit unit = cli.args().isSet(QStringLiteral("score-unit")) ? parseScoreUnit(cli.args().value(QStringLiteral("score-unit")))
                           : limits.policy                                ? limits.policy->scoreUnit
                                                                          : ScoreUnit::Auto;
    Connection &c = cli.connection();
    const std::optional<qint64> explicitNow = cli.args().isSet(QStringLiteral("now-us"))
                                                  ? std::optional<qint64>(cli.integerOption(QStringLiteral("now-us"), 0, kMaxNowUs))
                                                  : std::nullopt;
    const qint64 now = explicitNow ? *explicitNow : serverTimeUs(c);
    // The limits from the flags and the policy, checked before anything is read; a key that
    // states its own limits (Python limits) needs neither.
    const bool given = limits.spec || flagsComplete(cli);
    std::optional<LimitSpec> stated = given ? std::optional<LimitSpec>(specFor(cli, key, limits)) : std::nullopt;
    const KeyKind kind = classifyKey(c, key, now, unit, stated, limits.policy ? limits.policy->format : QString());
    if (limits.policy && !limits.policy->format.isEmpty() && !kind.isLimiter())
        if (const QString mismatch = declaredFormatMismatch(key, c.command({"TYPE", key}).bytes(), kind, &*limits.policy);
            !mismatch.isEmpty())
            throw UsageError(mismatch);
    // A counter window or another library's second key: the limits in force are its limiter's.
    EffectiveLimits inForce = limits;
    if (kind.subject(key) != key && !flagsComplete(cli)) {
        inForce = readLimitsInForce(c, cli.ns(), cli.policiesOnce(), kind.subject(key), kind);
        if (inForce.spec)
            stated = specFor(cli, kind.subject(key), inForce);
    }
    LimitSpec spec;
    if (stated) {
        spec = *stated;
    } else if (kind.format == KeyFormat::Library && kind.keyLimits) {
        spec = ratescope::limitsAsRead(kind, *kind.keyLimits);
        spec.cost = cli.integerOption(QStringLiteral("cost"), 1, kMaxLimit, 1);
        spec.validate();
    } else {
        spec = specFor(cli, key, inForce); // says which limits are missing
    }
    const bool foreign =
        kind.format == KeyFormat::ForeignSlidingLog || kind.format == KeyFormat::CounterWindow || kind.format == KeyFormat::Library;
    if (foreign && cli.args().isSet(QStringLiteral("algo")) && kind.algorithm() && *kind.algorithm() != spec.algorithm)
        throw UsageError(
            QStringLiteral("'%1' is a %2; --algo %3 does not fit it").arg(displayKey(key), kind.label(), algorithmName(spec.algorithm)));
    if (kind.format == KeyFormat::Library && !kind.readable())
        throw UsageError(QStringLiteral("'%1' is a %2: its state is recognised, never decoded").arg(displayKey(key), kind.label()));
    if (foreign)
        spec = ratescope::limitsFor(kind, spec).value_or(spec);
    const Decision d = foreign ? peekAnyFormat(c, kind.subject(key), kind, spec, now).decision
                               : Limiter(c).peek(key, spec, explicitNow ? explicitNow : std::optional<qint64>(now));
    printDecision(cli, d, spec, inForce, std::nullopt, d.used - (d.allowed ? spec.cost : 0));
    return ExitOk;
}

} // namespace

void registerDecisions(QList<Subcommand> &commands)
{
    const QCommandLineOption kHeaders(
        QStringLiteral("headers"),
        QStringLiteral("Also the HTTP response fields a service would send: Retry-After, RateLimit-Policy, RateLimit."));
    commands.append(
        {QStringLiteral("check"),
         QStringLiteral("check KEY [--algo A --limit N --window D] [--cost C] [--now-us T [--force]] [--headers] "
                        "[--shards N [--request-id ID] [--shard-from 0|1]]"),
         QStringLiteral("Decide one request against the limiter at KEY, consuming quota when allowed.\n"
                        "Limits not given as flags come from the policy matching KEY (and its override)."),
         {kAlgo, kLimit, kWindow, subBucketsOption(), kCost, kNow, kForce, kHeaders, shardsOption(), kRequestId, shardFromOption()},
         true,
         runCheck});
    commands.append(
        {QStringLiteral("peek"),
         QStringLiteral("peek KEY [--algo A --limit N --window D] [--cost C] [--now-us T] [--score-unit auto|s|ms|us] [--headers]"),
         QStringLiteral("What check would answer, without consuming or writing anything. Reads Ratescope's keys,\n"
                        "foreign sliding logs (scores in s, ms or us) and <base>:<window id> counters."),
         {kAlgo, kLimit, kWindow, subBucketsOption(), kCost, kNow, kScoreUnit, kHeaders},
         false,
         runPeek});
}

} // namespace ratescope::cli
