// A limiter's answer, as every script returns it (docs/scripts.md).
#pragma once

#include <QtGlobal>

namespace ratescope {

class Reply;

// A limiter's answer (docs/scripts.md). Times are microseconds.
struct Decision {
    bool allowed = false;
    qint64 limit = 0;
    qint64 used = 0;         // after the decision
    qint64 remaining = 0;    // limit - used
    qint64 retryAfterUs = 0; // 0 when allowed; else exactly when this request would pass
    qint64 resetAfterUs = 0; // until the limiter is back to full capacity

    // The scripts' reply: six integers. Throws UnexpectedReplyError for anything else, and
    // ReplyError for an error reply.
    static Decision fromReply(const Reply &reply);
    bool operator==(const Decision &) const = default;
};

} // namespace ratescope
