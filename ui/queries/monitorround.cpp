#include "monitorround.h"

#include "redis/connection.h"
#include "base/errors.h"
#include "limiters/limiter.h"
#include "formats/formatreaders.h"
#include "limiters/limiterscript.h"


namespace ratescope::ui {

namespace {

std::optional<qint64> parseTime(const Reply &r)
{
    if (r.isError() || r.size() != 2)
        return std::nullopt;
    try {
        return r[0].toInteger() * 1000000 + r[1].toInteger();
    } catch (const Error &) {
        return std::nullopt;
    }
}

} // namespace

KeyKind pinKind(const KeyDetails &d)
{
    if (d.exists() || !d.spec)
        return d.kind;
    KeyKind k;
    k.format = ownFormat(d.spec->algorithm);
    return k;
}

MonitorRound readMonitorRound(Connection &connection, const std::vector<UsageTarget> &targets, qint64 nowUs)
{
    MonitorRound round;
    round.nowUs = nowUs;
    round.usage.resize(targets.size());
    round.problems.resize(targets.size());

    // TIME in front of the limiters' reads (core's readUsage, in halves): one round in all.
    std::vector<Command> commands{{"TIME"}};
    std::vector<std::pair<size_t, size_t>> owned(targets.size(), {0, 0}); // first command, count
    std::optional<ScriptCalls> calls;
    for (size_t i = 0; i < targets.size(); ++i) {
        try {
            std::vector<Command> mine = usageCommands(connection, targets[i], nowUs, calls);
            owned[i] = {commands.size(), mine.size()};
            commands.insert(commands.end(), mine.begin(), mine.end());
        } catch (const UsageError &e) {
            round.problems[i] = e.message();
        }
    }
    const std::vector<Reply> replies = connection.pipeline(commands);
    round.roundTrips = 1;
    round.serverTimeUs = parseTime(replies[0]);

    for (size_t i = 0; i < targets.size(); ++i) {
        const UsageTarget &t = targets[i];
        if (!round.problems[i].isEmpty())
            continue;
        const auto [first, n] = owned[i];
        try {
            if (n > 0 && LimiterScript::notLoaded(replies[first]))
                ++round.roundTrips; // usageFromReplies loads it with a peek of its own
            round.usage[i] = usageFromReplies(connection, t, replies.data() + first, n, nowUs);
        } catch (const ConnectionError &) {
            throw; // the whole round is lost: the page shows the connection, not each key
        } catch (const Error &e) {
            round.problems[i] = e.message(); // WRONGTYPE and the like: this key changed
        }
    }
    return round;
}

PinClassification classifyPins(Connection &connection, const std::vector<QByteArray> &keys, const QByteArray &ns)
{
    PinClassification c;
    try {
        c.serverTimeUs = parseTime(connection.command({"TIME"}));
    } catch (const ReplyError &) {
        // TIME may be refused to a read-only ACL user: this machine's clock stands in.
    }
    const std::vector<Policy> policies = PolicyStore(connection, QString::fromUtf8(ns)).list();
    c.details = readKeyDetails(connection, keys, policies, ns);
    return c;
}

} // namespace ratescope::ui
