#include "scan.h"

#include "base/errors.h"
#include "redis/connection.h"

namespace ratescope {

Command scanCommand(const QByteArray &cursor, const QByteArray &match, qint64 count, const QByteArray &type)
{
    Command c{"SCAN", cursor, "MATCH", match, "COUNT", QByteArray::number(count)};
    if (!type.isEmpty())
        c << "TYPE" << type;
    return c;
}

const std::vector<Reply> &scanReplyNames(const Reply &reply, QByteArray *cursor)
{
    reply.orThrow();
    if (reply.size() != 2 || !reply[1].isArray())
        throw UnexpectedReplyError(QStringLiteral("unexpected SCAN reply %1").arg(reply.debugString()));
    *cursor = reply[0].bytes();
    return reply[1].elements();
}

ScanStep scanStep(Connection &connection, const QByteArray &cursor, const QByteArray &match, qint64 count, const QByteArray &type)
{
    const Reply reply = connection.command(scanCommand(cursor, match, count, type));
    ScanStep step;
    const std::vector<Reply> &names = scanReplyNames(reply, &step.cursor);
    step.names.reserve(names.size());
    for (const Reply &name : names)
        step.names.push_back(name.bytes());
    return step;
}

} // namespace ratescope
