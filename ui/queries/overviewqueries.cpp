#include "overviewqueries.h"

#include "admin/audit.h"
#include "base/errors.h"
#include "redis/connection.h"

#include <QScopeGuard>

namespace ratescope::ui {

Overview readOverview(Connection &c, const MetadataNamespace &ns)
{
    Overview o;
    // The eviction policy and the policies go with the server's facts, in their round (one
    // server: a cluster asks every master for its own).
    std::vector<Command> along;
    if (!c.isCluster())
        along = {{"CONFIG", "GET", "maxmemory-policy"}, {"HGETALL", PolicyStore::hashKeyIn(ns)}};
    c.readAlong(along);
    const auto forget = qScopeGuard([&] { c.forget(along); }); // the connection lives on: nothing read now answers later
    try {
        o.info = ServerInfo::fetch(c);
        o.haveInfo = true;
    } catch (const ReplyError &) {
        // a read-only ACL user may not run INFO
        o.info = ServerInfo::fetchWithoutInfo(c);
    }
    // Every master's (a cluster's may differ); nothing when CONFIG is not allowed.
    QStringList policies;
    for (const auto &replies : c.onEachMaster({{"CONFIG", "GET", "maxmemory-policy"}}))
        if (!replies.front().isError() && replies.front().size() == 2 && !policies.contains(replies.front()[1].text()))
            policies << replies.front()[1].text();
    o.eviction = policies.join(QLatin1Char('/'));
    try {
        QStringList skipped;
        o.policies = PolicyStore(c, ns).list(&skipped);
        o.policyProblem = skipped.join(QLatin1Char('\n'));
    } catch (const ReplyError &e) {
        o.policyProblem = e.message();
    } catch (const UnexpectedReplyError &e) {
        o.policyProblem = e.message();
    }
    try {
        o.scripts = readScriptsStatus(c);
    } catch (const ReplyError &e) {
        o.scriptsProblem = e.message();
    }
    return o;
}

DeployPreview previewDeploy(Connection &c, bool replace)
{
    DeployPreview p;
    try {
        p.plan = planDeploy(readScriptsStatus(c), replace);
    } catch (const ReplyError &e) {
        p.problem = e.message();
    }
    return p;
}

QString deployAsPreviewed(Connection &c, const MetadataNamespace &ns, const QJsonObject &previewed, bool replace, const QString &op)
{
    // Exactly what was previewed, or nothing: the servers may have changed meanwhile.
    DeployPlan now = planDeploy(readScriptsStatus(c), replace);
    if (now.toJson() != previewed)
        return QStringLiteral("Not deployed: the servers changed since the preview. Look again.");
    if (now.needsLoad())
        AuditLog(c, ns).ensureWritable(); // no deploy without its record
    const int loaded = deployLibrary(c, now);
    if (loaded > 0)
        AuditLog(c, ns).append(scriptsDeployAuditEntry(now, loaded), op);
    return {};
}

} // namespace ratescope::ui
