#include "redis/servernode.h"

namespace ratescope {

QString ServerNode::describe() const
{
    QString what = role;
    if (!slotRanges.isEmpty())
        what += QStringLiteral(", slots %1").arg(slotRanges);
    if (!master.host.isEmpty())
        what += QStringLiteral(" of %1").arg(master.toString());
    if (!link.isEmpty())
        what += QStringLiteral(" (link %1)").arg(link);
    if (!problem.isEmpty())
        what += QStringLiteral(", not answering: %1").arg(problem);
    return what;
}

} // namespace ratescope
