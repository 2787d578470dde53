#include "keys/keydetails.h"

#include "redis/connection.h"
#include "base/errors.h"
#include "keys/keyscanner.h"
#include "admin/limitsinforce.h"
#include "limiters/limiterscript.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QScopeGuard>

namespace ratescope {

namespace {
constexpr size_t kSampleAheadKeys = 500;
} // namespace

std::vector<KeyDetails> readKeyDetails(Connection &connection, const std::vector<QByteArray> &keys, const std::vector<Policy> &policies,
                                       const MetadataNamespace &ns)
{
    std::vector<KeyDetails> details(keys.size());
    if (keys.empty())
        return details;

    // Overrides are read with the rest, pipelined, in the store's own key layout: a key's
    // own with TYPE and PTTL, a counter window's base's with the samples.
    OverrideStore overrideStore(connection, ns);
    LimitResolver resolver(policies, ns);
    KeyRound round;
    round.memory = true;
    round.policies = &policies;
    // The overrides deciding a key's limits (its own; a shard's group's) go with TYPE and PTTL,
    // a counter window's base's with the samples.
    round.alsoRead = [&overrideStore, &resolver](const QByteArray &key) {
        std::vector<Command> reads;
        for (const QByteArray &k : resolver.overrideSubjects(key))
            reads.push_back({"GET", overrideStore.storageKey(k)});
        return reads;
    };
    round.alsoSample = [&overrideStore, &resolver](const KeyRecord &r) {
        std::vector<Command> reads;
        const QByteArray subject = r.kind.subject(r.key);
        if (subject != r.key)
            for (const QByteArray &k : resolver.overrideSubjects(subject))
                reads.push_back({"GET", overrideStore.storageKey(k)});
        return reads;
    };
    // A few keys (the rows in view): each type's samples go ahead with the first round, so the
    // keys are classified without a round of their own (the replies of the types a key does
    // not have are small errors, taken back unused). Many keys: the samples of each key's
    // type only, in a round of their own.
    KeyRoundReader reader(keys, round);
    const std::vector<Command> first = reader.firstCommands();
    std::vector<Command> ahead;
    if (keys.size() <= kSampleAheadKeys) {
        ahead = first;
        for (const QByteArray &key : keys)
            for (const char *type : {"hash", "zset", "string", "list"})
                appendSampleCommands(ahead, key, type);
    }
    // Which script calls the usage round makes (functions or EVALSHA), asked along the first
    // time on a connection rather than in a round of its own.
    std::vector<Command> along;
    if (!connection.isCluster() && !connection.scriptCalls())
        along.push_back(LoadedLibrary::query());
    connection.readAlong(along);
    connection.prefetch(ahead);
    const auto forget = qScopeGuard([&] {
        connection.forget(ahead);
        connection.forget(along);
    });
    std::vector<Reply> meta = connection.pipeline(first);
    reader.takeFirst(meta.data());
    std::vector<Reply> samples = connection.pipeline(reader.sampleCommands());
    const KeyRoundResult read = reader.takeSamples(samples.data());
    const qint64 nowUs = read.nowUs;
    for (size_t i = 0; i < keys.size(); ++i) {
        const std::vector<QByteArray> own = resolver.overrideSubjects(keys[i]);
        for (size_t k = 0; k < own.size() && k < read.alsoRead[i].size(); ++k)
            resolver.takeOverride(own[k], read.alsoRead[i][k]);
        const QByteArray subject = read.records[i].kind.subject(keys[i]);
        if (subject != keys[i]) {
            const std::vector<QByteArray> its = resolver.overrideSubjects(subject);
            for (size_t k = 0; k < its.size() && k < read.alsoSampled[i].size(); ++k)
                resolver.takeOverride(its[k], read.alsoSampled[i][k]);
        }
    }
    std::vector<UsageTarget> targets;
    std::vector<size_t> targetKey;
    for (size_t i = 0; i < keys.size(); ++i) {
        KeyDetails &d = details[i];
        const KeyRecord &r = read.records[i];
        d.type = r.type;
        d.pttlMs = r.pttlMs;
        d.memory = r.memory;
        d.kind = r.kind;
        d.problem = r.problem;
        if (ns.holds(keys[i])) {
            const QByteArray rest = keys[i].mid(ns.bytes().size());
            const qsizetype colon = rest.indexOf(':');
            d.metadata = colon < 0 ? rest : rest.left(colon);
        }
        // A counter window belongs to its base: "api:acme:28475638" is a window of "api:acme".
        // Another library's limiter kept in several keys belongs to its first key alike.
        const QByteArray subject = d.kind.subject(keys[i]);
        const LimitsInForce limits = resolver.resolve(subject, d.kind);
        if (limits.policy) {
            d.policy = limits.policy->name;
            d.policyMatch = limits.policy->match;
        }
        d.spec = limits.spec;
        d.overridden = limits.overridden();
        d.source = limits.source;
        if (!d.kind.isLimiter() || !d.kind.readable() || !d.spec)
            continue;
        try {
            d.spec->validate();
        } catch (const UsageError &e) {
            d.problem = e.message();
            continue;
        }
        targets.push_back({subject, d.kind, *d.spec});
        targetKey.push_back(i);
    }

    // Round 3: how full each limiter is, without writing.
    if (!targets.empty()) {
        const auto usage = readUsage(connection, targets, nowUs);
        for (size_t t = 0; t < usage.size(); ++t) {
            KeyDetails &d = details[targetKey[t]];
            d.usage = usage[t];
            if (!d.usage && d.problem.isEmpty())
                d.problem = QStringLiteral("its state could not be read as %1").arg(d.kind.label());
        }
    }
    return details;
}

} // namespace ratescope
