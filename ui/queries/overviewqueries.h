// The Overview tab's reads (the server as a limiter store, the policies, the scripts) and the
// functions library's deploy.
#pragma once

#include "admin/metadatanamespace.h"
#include "admin/policy.h"
#include "limiters/scriptlibrary.h"
#include "redis/serverinfo.h"

#include <QJsonObject>

#include <optional>
#include <vector>

namespace ratescope {
class Connection;
}

namespace ratescope::ui {

struct Overview {
    ServerInfo info;       // in a cluster, summed over the masters
    bool haveInfo = false; // a read-only ACL user may not run INFO
    QString eviction;      // maxmemory-policy ("a/b" when masters differ); empty when CONFIG is not allowed
    std::vector<Policy> policies;
    QString policyProblem;
    std::optional<ScriptsStatus> scripts;
    QString scriptsProblem;
};

// What the Deploy button will load: the plan, or why it cannot (no functions, a master down).
struct DeployPreview {
    std::optional<DeployPlan> plan;
    QString problem;
};

Overview readOverview(Connection &c, const MetadataNamespace &ns);
// What deploying would do (replace: even over a library that is not ours or newer).
DeployPreview previewDeploy(Connection &c, bool replace);
// Deploys exactly the plan previewed (its JSON), audited as `op`; returns why nothing was
// deployed (the servers changed since the preview), empty when it was. The audit stream is
// checked writable before anything is loaded.
QString deployAsPreviewed(Connection &c, const MetadataNamespace &ns, const QJsonObject &previewed, bool replace, const QString &op);

} // namespace ratescope::ui
