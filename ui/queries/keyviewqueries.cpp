#include "keyviewqueries.h"

#include "admin/limitsinforce.h"
#include "base/errors.h"
#include "keys/inspector.h"
#include "keys/keyscanner.h"
#include "redis/connection.h"

namespace ratescope::ui {

KeyRead readKey(Connection &c, const QByteArray &key, const QByteArray &ns, std::optional<qint64> frozenNow)
{
    KeyRead r;
    r.serverNowUs = serverTimeUs(c);
    r.nowUs = frozenNow ? *frozenNow : r.serverNowUs;
    const QString nsText = QString::fromUtf8(ns);
    const std::vector<Policy> policies = PolicyStore(c, nsText).list();
    LimitResolver resolver(policies, nsText);
    resolver.readOverrides(c, {key});
    const LimitsInForce asKey = resolver.resolve(key, KeyKind{});
    const ScoreUnit declared = asKey.policy ? asKey.policy->scoreUnit : ScoreUnit::Auto;
    r.kind = classifyKey(c, key, r.nowUs, declared, asKey.spec, asKey.policy ? asKey.policy->format : QString());
    // A counter window belongs to its base, another library's second key to its first: the
    // limits in force are its (no round trip when it is the key itself).
    const QByteArray subject = r.kind.subject(key);
    if (subject != key)
        resolver.readOverrides(c, {subject});
    const EffectiveLimits limits = effectiveOf(resolver.resolve(subject, r.kind));
    r.policy = limits.policy;
    r.override = limits.override;
    r.spec = limits.spec;

    InspectOptions o;
    o.nowUs = r.nowUs;
    o.spec = r.spec;
    o.scoreUnit = declared;
    o.entryCount = 1; // the log view pages through entries itself
    // The core has no peek for other services' token buckets: read their fields only.
    InspectOptions bare; // no limits: the state without a decision
    bare.nowUs = r.nowUs;
    bare.entryCount = 1;
    const bool peekable = r.kind.format != KeyFormat::ForeignTokenBucket;
    LimitResolver unresolved; // no policies: the key as it is stored
    try {
        r.inspected = peekable ? inspectKey(c, key, resolver, o) : inspectKey(c, key, unresolved, bare);
    } catch (const UsageError &e) { // limits the scripts refuse: show the key without a decision
        r.inspected = inspectKey(c, key, unresolved, bare);
        r.inspected.insert(QStringLiteral("decision_error"), e.message());
    }
    if (!r.inspected.value(QStringLiteral("exists")).toBool() && !r.kind.isLimiter()) {
        OverrideStore overrides(c, nsText);
        r.shards = readShardGroup(c, key, policies, r.nowUs, &overrides);
    } // the base of a sharded limiter?
    if (const auto placed = c.placementOf(key))
        r.placement = QStringLiteral("slot %1 on %2")
                          .arg(placed->slot)
                          .arg(placed->master.host.isEmpty() ? QStringLiteral("no master") : placed->master.toString());
    return r;
}

} // namespace ratescope::ui
