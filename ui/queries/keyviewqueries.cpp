#include "keyviewqueries.h"

#include "admin/limitsinforce.h"
#include "base/errors.h"
#include "keys/inspector.h"
#include "keys/keyscanner.h"
#include "redis/connection.h"

#include <QScopeGuard>

namespace ratescope::ui {

bool drawnAsLog(const KeyKind &kind, const QString &type)
{
    return kind.format == KeyFormat::SlidingLog || kind.format == KeyFormat::ForeignSlidingLog ||
           (kind.format == KeyFormat::Library && kind.algorithm() == Algorithm::SlidingLog && type == QLatin1String("zset"));
}

namespace {

// The log view's read of the key as the key view read it.
LogReadRequest logRequest(const LogReadRequest &settings, const QByteArray &key, const KeyKind &kind, const std::optional<LimitSpec> &spec,
                          qint64 nowUs)
{
    LogReadRequest r = settings;
    r.key = key;
    r.spec = spec;
    r.unit = kind.unit;
    r.nowUs = nowUs;
    r.expected = kind;
    return r;
}

} // namespace

KeyRead readKey(Connection &c, const QByteArray &key, const QByteArray &ns, std::optional<qint64> frozenNow,
                const std::optional<LogReadRequest> &log)
{
    KeyRead r;
    const QString nsText = QString::fromUtf8(ns);
    const MetadataNamespace nsName(nsText);
    // The clock, the policies, the overrides, the key's type, samples and own facts, in one
    // round (the scripts' presence too, while this connection does not know it).
    FirstRound first;
    first.forInspect = true;
    first.oneServer = !c.isCluster();
    first.askScripts = !c.scriptCalls();
    const std::vector<Command> ahead = prefetchFirstRound(c, nsName, key, first);
    const auto forget = qScopeGuard([&] { c.forget(ahead); }); // the connection lives on: nothing read now answers later
    r.serverNowUs = serverTimeUs(c);
    r.nowUs = frozenNow ? *frozenNow : r.serverNowUs;
    const std::vector<Policy> policies = PolicyStore(c, nsText).list();
    LimitResolver resolver(policies, nsText);

    InspectOptions o;
    o.nowUs = r.nowUs;
    o.entryCount = 1; // the log view pages through entries itself
    std::vector<Command> logAlong; // the log view's reads, sent with the key's state
    const auto forgetLog = qScopeGuard([&] { c.forget(logAlong); });
    if (log)
        o.readAlong = [&](const KeyKind &kind, const std::optional<LimitSpec> &spec) {
            const bool asLog = kind.format == KeyFormat::SlidingLog || kind.format == KeyFormat::ForeignSlidingLog ||
                               (kind.format == KeyFormat::Library && kind.algorithm() == Algorithm::SlidingLog);
            if (!asLog)
                return std::vector<Command>{};
            try {
                logAlong = logReadsAhead(c, logRequest(*log, key, kind, spec, r.nowUs));
            } catch (const UsageError &) {
                logAlong.clear(); // said by the log view's own read
            }
            return logAlong;
        };
    // The core has no peek for other services' token buckets: read their fields only.
    InspectOptions bare; // no limits: the state without a decision
    bare.nowUs = r.nowUs;
    bare.entryCount = 1;
    LimitResolver unresolved; // no policies: the key as it is stored
    try {
        r.inspected = inspectKey(c, key, resolver, o, &r.kind);
        if (r.kind.format == KeyFormat::ForeignTokenBucket)
            r.inspected = inspectKey(c, key, unresolved, bare);
    } catch (const UsageError &e) { // limits the scripts refuse: show the key without a decision
        r.inspected = inspectKey(c, key, unresolved, bare); // r.kind: as classified under the limits
        r.inspected.insert(QStringLiteral("decision_error"), e.message());
    }
    // A counter window belongs to its base, another library's second key to its first: the
    // limits in force are its (read into the resolver by the inspection).
    const QByteArray subject = r.kind.subject(key);
    const EffectiveLimits limits = effectiveOf(resolver.resolve(subject, r.kind));
    r.policy = limits.policy;
    r.override = limits.override;
    r.spec = limits.spec;
    if (log && drawnAsLog(r.kind, r.inspected.value(QStringLiteral("type")).toString())) {
        try {
            r.log = readLog(c, logRequest(*log, key, r.kind, r.spec, r.nowUs));
        } catch (const UsageError &) {
            // the log view reads it itself and says why
        } catch (const ReplyError &) {
            // likewise (the key changed type under the read)
        }
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
