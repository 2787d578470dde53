#include "lookupqueries.h"

#include "admin/audit.h"
#include "limitqueries.h"
#include "redis/connection.h"

namespace ratescope::ui {

LookupPass runLookupPass(Connection &c, const MetadataNamespace &ns, const QByteArray &id)
{
    LookupPass pass;
    pass.requireReason = readNamespaceSettings(c, ns).requireReason;
    LookupOptions options;
    options.id = id;
    options.ns = ns;
    options.policies = readPolicies(c, ns);
    pass.result = lookupLimiters(c, options);
    return pass;
}

GrantOutcome grantLookupOverrides(Connection &c, const MetadataNamespace &ns, const QByteArrayList &keys,
                                  const std::vector<bool> &covered, qint64 limit, qint64 windowUs, qint64 forUs,
                                  const QString &actor, const QString &op, const QString &reason)
{
    AuditLog log(c, ns);
    log.setReason(reason);
    log.ensureWritable(); // no change without its record (and its reason, when one is required)
    GrantOutcome out;
    OverrideStore store(c, ns);
    for (qsizetype i = 0; i < keys.size(); ++i) {
        if (size_t(i) >= covered.size() || !covered[size_t(i)]) {
            out.skipped << keys[i];
            continue;
        }
        Override o;
        o.key = keys[i];
        o.limit = limit;
        o.windowUs = windowUs;
        const auto previous = store.set(o, forUs, actor);
        const auto stored = store.get(o.key);
        log.append(overrideSetAuditEntry(o.key, previous, stored), op);
        if (stored)
            out.granted.push_back(*stored);
    }
    return out;
}

} // namespace ratescope::ui
