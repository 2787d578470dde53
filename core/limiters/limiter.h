// Decisions: runs the limiter scripts for one key and reads their answer.
#pragma once

#include "limiters/algorithm.h"
#include "limiters/decision.h"
#include "redis/resp.h"

#include <optional>

namespace ratescope {

class Connection;

class Limiter {
public:
    explicit Limiter(Connection &connection)
        : m_connection(connection)
    {
    }

    // Decides and consumes. nowUs: explicit time (tests, replays); default: server clock.
    // Throws UsageError for invalid input before anything is sent.
    Decision check(const QByteArray &key, const LimitSpec &spec, std::optional<qint64> nowUs = {});
    // The same answer without consuming or writing anything (EVALSHA_RO): works for
    // read-only users and on replicas. A user who may read keys but not run scripts
    // (+@read without EVALSHA_RO: NOPERM) gets the same answer computed here from plain
    // reads (peekFromFields) when nowUs is given.
    Decision peek(const QByteArray &key, const LimitSpec &spec, std::optional<qint64> nowUs = {});

    // The scripts' peek computed from plain reads (HMGET, ZRANGE, ZCOUNT) with the scripts'
    // own rules and refusals (WRONGTYPE, "is not a ratescope ..."), for every algorithm.
    // nowUs is required (the scripts' TIME is not in @read). A sliding log is read in a few
    // round trips; when services write to it meanwhile it is read again (at most five times),
    // so the answer is that of one moment between their writes.
    std::optional<Decision> peekFromFields(const QByteArray &key, const LimitSpec &spec, qint64 nowUs);

    // The script arguments (ARGV) for a decision, after validation.
    static QList<QByteArray> arguments(const QByteArray &key, const LimitSpec &spec, std::optional<qint64> nowUs, bool peek);

private:
    Decision run(const QByteArray &key, const LimitSpec &spec, std::optional<qint64> nowUs, bool peek);

    Connection &m_connection;
};

} // namespace ratescope
