#include "limiters/decision.h"

#include "base/errors.h"
#include "redis/resp.h"

namespace ratescope {

Decision Decision::fromReply(const Reply &reply)
{
    reply.orThrow();
    if (!reply.isArray() || reply.size() != 6)
        throw UnexpectedReplyError(QStringLiteral("a limiter script returned %1, expected six integers").arg(reply.debugString()));
    qint64 v[6];
    for (size_t i = 0; i < 6; ++i) {
        if (!reply[i].isInteger())
            throw UnexpectedReplyError(QStringLiteral("a limiter script returned %1, expected six integers").arg(reply.debugString()));
        v[i] = reply[i].integer();
    }
    return {v[0] != 0, v[1], v[2], v[3], v[4], v[5]};
}

} // namespace ratescope
