#include "servertext.h"

namespace ratescope::ui {

QString overMasters(const ServerInfo &info)
{
    const int masters = info.masterCount();
    return info.mastersMissing == 0 ? QStringLiteral("all masters")
                                    : QStringLiteral("the %1 of %2 masters that answered").arg(masters - info.mastersMissing).arg(masters);
}

QString nodesSummary(const ServerInfo &info, bool cluster)
{
    const int masters = info.masterCount(), replicas = info.replicaCount();
    auto count = [](int n, const char *one, const char *many) {
        return QStringLiteral("%1 %2").arg(n).arg(QLatin1String(n == 1 ? one : many));
    };
    QString text;
    if (cluster) {
        text = count(masters, "master", "masters");
        if (info.mastersMissing > 0)
            text += QStringLiteral(" (%1 not answering)").arg(info.mastersMissing);
    } else if (!info.nodes.empty()) {
        const auto &self = info.nodes.front();
        text = self.role == QLatin1String("replica") ? QStringLiteral("replica of %1").arg(self.master.toString())
                                                     : QStringLiteral("master %1").arg(self.address.toString());
    }
    if (replicas > 0 || cluster)
        text += QStringLiteral(" · %1").arg(count(replicas, "replica", "replicas"));
    return text;
}

} // namespace ratescope::ui
