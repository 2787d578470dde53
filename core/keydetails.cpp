#include "keydetails.h"

#include "connection.h"
#include "errors.h"

#include <QDateTime>
#include <QJsonDocument>

namespace ratescope::ui {

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

std::vector<KeyDetails> readKeyDetails(Connection &connection, const std::vector<QByteArray> &keys,
                                       const std::vector<Policy> &policies, const QByteArray &ns)
{
    std::vector<KeyDetails> details(keys.size());
    if (keys.empty())
        return details;

    // Overrides are read with the rest, pipelined, in the store's own key layout.
    OverrideStore overrideStore(connection, QString::fromUtf8(ns));

    // Round 1: what each key is, and the server's clock (read-only users may lack TIME).
    constexpr size_t kPerKey = 4;
    std::vector<Command> meta;
    meta.reserve(1 + keys.size() * kPerKey);
    meta.push_back({"TIME"});
    for (const QByteArray &key : keys) {
        meta.push_back({"TYPE", key});
        meta.push_back({"PTTL", key});
        meta.push_back({"MEMORY", "USAGE", key, "SAMPLES", "0"});
        meta.push_back({"GET", overrideStore.storageKey(key)});
    }
    const auto metaReplies = connection.pipeline(meta);
    const Reply &time = metaReplies[0];
    const qint64 nowUs = !time.isError() && time.size() == 2
                             ? time[0].toInteger() * 1000000 + time[1].toInteger()
                             : QDateTime::currentMSecsSinceEpoch() * 1000;
    std::vector<std::optional<Override>> overrides(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
        KeyDetails &d = details[i];
        const Reply *r = &metaReplies[1 + i * kPerKey];
        d.type = r[0].isError() ? QByteArray("?") : r[0].bytes();
        d.pttlMs = r[1].isInteger() ? r[1].integer() : -3;
        d.memory = r[2].isInteger() ? r[2].integer() : -1;
        overrides[i] = parseOverride(r[3]);
        if (r[0].isError())
            d.problem = r[0].text();
        if (!ns.isEmpty() && keys[i].startsWith(ns)) {
            const QByteArray rest = keys[i].mid(ns.size());
            const qsizetype colon = rest.indexOf(':');
            d.metadata = colon < 0 ? rest : rest.left(colon);
        }
    }

    // Round 2: a sample that tells the formats apart, and the override of a counter's base.
    std::vector<Command> samples;
    std::vector<std::pair<size_t, size_t>> ranges; // per key: first sample, count
    std::vector<qsizetype> baseOverride(keys.size(), -1);
    for (size_t i = 0; i < keys.size(); ++i) {
        const auto commands = sampleCommands(keys[i], details[i].type);
        ranges.emplace_back(samples.size(), commands.size());
        samples.insert(samples.end(), commands.begin(), commands.end());
        QByteArray base;
        qint64 id = 0;
        if (details[i].type == "string" && splitCounterWindowKey(keys[i], &base, &id)) {
            baseOverride[i] = qsizetype(samples.size());
            samples.push_back({"GET", overrideStore.storageKey(base)});
        }
    }
    const auto sampleReplies = connection.pipeline(samples);

    std::vector<UsageTarget> targets;
    std::vector<size_t> targetKey;
    for (size_t i = 0; i < keys.size(); ++i) {
        KeyDetails &d = details[i];
        const auto [first, n] = ranges[i];
        const std::vector<Reply> mine(sampleReplies.begin() + qsizetype(first),
                                      sampleReplies.begin() + qsizetype(first + n));
        if (n > 0 && mine[0].isError() && d.problem.isEmpty())
            d.problem = mine[0].text();
        const auto policy = matchPolicy(policies, keys[i]);
        d.kind =
            classify(keys[i], d.type, mine, nowUs, policy ? policy->scoreUnit : ScoreUnit::Auto);
        // A counter window belongs to its base: "api:acme:28475638" is a window of "api:acme".
        const QByteArray subject =
            d.kind.format == KeyFormat::CounterWindow ? d.kind.base : keys[i];
        std::optional<Override> override = overrides[i];
        if (d.kind.format == KeyFormat::CounterWindow && baseOverride[i] >= 0)
            override = parseOverride(sampleReplies[size_t(baseOverride[i])]);
        const EffectiveLimits limits = effectiveLimits(policies, override, subject);
        if (limits.policy) {
            d.policy = limits.policy->name;
            d.policyMatch = limits.policy->match;
        }
        d.spec = limits.spec;
        d.overridden = limits.override.has_value() && limits.spec.has_value();
        if (!d.kind.isLimiter() || !d.spec)
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

} // namespace ratescope::ui
