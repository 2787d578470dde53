// One SCAN step, the same for every walk of the keyspace (the key scanner, the Hot pass, the
// keys panel, shard groups, overrides, reset plans, the policy preview): the command, and its
// reply checked. On a cluster, Connection walks every master behind one cursor.
#pragma once

#include "redis/resp.h"

#include <QByteArray>

#include <vector>

namespace ratescope {

class Connection;

// SCAN cursor MATCH match COUNT count [TYPE type].
Command scanCommand(const QByteArray &cursor, const QByteArray &match, qint64 count, const QByteArray &type = {});

// The reply of scanCommand: sets *cursor to the next one ("0": the walk is over) and returns
// the names, as the reply holds them. A refusal (NOPERM) is thrown as the server's error, a
// reply of another shape as UnexpectedReplyError.
const std::vector<Reply> &scanReplyNames(const Reply &reply, QByteArray *cursor);

// One step: the command sent, its reply read as above.
struct ScanStep {
    QByteArray cursor;
    std::vector<QByteArray> names;
};
ScanStep scanStep(Connection &connection, const QByteArray &cursor, const QByteArray &match, qint64 count,
                  const QByteArray &type = {});

} // namespace ratescope
