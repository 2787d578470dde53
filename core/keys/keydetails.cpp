#include "keys/keydetails.h"

#include "redis/connection.h"
#include "base/errors.h"
#include "keys/keyscanner.h"

#include <QDateTime>
#include <QJsonDocument>

namespace ratescope {

namespace {

std::optional<Override> parseOverride(const Reply &r)
{
    if (r.isNil() || r.isError() || r.type() != Reply::Type::String)
        return std::nullopt;
    const QJsonDocument doc = QJsonDocument::fromJson(r.bytes());
    if (!doc.isObject())
        return std::nullopt;
    return Override::fromJson(doc.object());
}

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
    KeyRound round;
    round.memory = true;
    round.policies = &policies;
    // A shard of a sharded policy also reads its group's override (the base's), for when it
    // has none of its own.
    round.alsoRead = [&overrideStore, &policies](const QByteArray &key) {
        std::vector<Command> reads{{"GET", overrideStore.storageKey(key)}};
        if (const QByteArray group = groupOf(policies, key); !group.isEmpty())
            reads.push_back({"GET", overrideStore.storageKey(group)});
        return reads;
    };
    round.alsoSample = [&overrideStore](const KeyRecord &r) {
        QByteArray base;
        qint64 id = 0;
        if (r.type == "string" && splitCounterWindowKey(r.key, &base, &id))
            return std::vector<Command>{{"GET", overrideStore.storageKey(base)}};
        return std::vector<Command>{};
    };
    const KeyRoundResult read = readKeyRecords(connection, keys, round);
    const qint64 nowUs = read.nowUs;
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
        std::optional<Override> override = parseOverride(read.alsoRead[i].front());
        if (!override && read.alsoRead[i].size() > 1)
            override = parseOverride(read.alsoRead[i][1]);
        if (d.kind.format == KeyFormat::CounterWindow && !read.alsoSampled[i].empty())
            override = parseOverride(read.alsoSampled[i].front());
        const EffectiveLimits limits = effectiveLimits(policies, override, subject);
        if (limits.policy) {
            d.policy = limits.policy->name;
            d.policyMatch = limits.policy->match;
        }
        d.spec = limitsFor(d.kind, limits.spec); // another library's key may state its own limits
        d.overridden = limits.override.has_value() && limits.spec.has_value();
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
