#include "monitorround.h"

#include "redis/connection.h"
#include "base/errors.h"
#include "limiters/limiter.h"
#include "formats/formatreaders.h"
#include "limiters/limiterscript.h"

#include <cmath>

namespace ratescope::ui {

namespace {

bool isScriptFormat(KeyFormat f)
{
    return f == KeyFormat::SlidingLog || f == KeyFormat::SlidingCounter || f == KeyFormat::FixedWindow || f == KeyFormat::TokenBucket ||
           f == KeyFormat::Gcra || f == KeyFormat::SlidingBuckets;
}

QByteArray scoreText(double v)
{
    return QByteArray::number(v, 'f', 6);
}

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

// A foreign log as core's peekAnyFormat reads it, in one round: the entries in the window,
// the newest entry (when everything frees up) and the (limit - cost + 1)-th newest, which is
// the entry whose expiry lets a request of `cost` pass when the log is over its limit.
std::vector<Command> foreignLogCommands(const UsageTarget &t, qint64 nowUs)
{
    const double unit = double(scoreUnitUs(t.kind.unit));
    const QByteArray lo = "(" + scoreText(double(nowUs - t.spec.windowUs) / unit);
    const QByteArray offset = QByteArray::number(std::max<qint64>(0, t.spec.limit - t.spec.cost));
    return {{"ZCOUNT", t.key, lo, "+inf"},
            {"ZRANGE", t.key, "-1", "-1", "WITHSCORES"},
            {"ZRANGE", t.key, "+inf", lo, "BYSCORE", "REV", "LIMIT", offset, "1", "WITHSCORES"}};
}

Usage foreignLogUsage(const UsageTarget &t, qint64 nowUs, const Reply &count, const Reply &newest, const Reply &freeing)
{
    const LimitSpec &spec = t.spec;
    const double unit = double(scoreUnitUs(t.kind.unit));
    const qint64 used = count.orThrow().toInteger();
    newest.orThrow();
    freeing.orThrow();
    auto expiresIn = [&](double score) { return std::max<qint64>(0, qint64(std::ceil(score * unit)) + spec.windowUs - nowUs); };
    Decision d;
    d.limit = spec.limit;
    d.allowed = used + spec.cost <= spec.limit;
    // A log that keeps denied attempts holds more than the limit: shown as it is, remaining 0.
    d.used = used + (d.allowed ? spec.cost : 0);
    d.remaining = std::max<qint64>(0, spec.limit - d.used);
    if (d.allowed)
        d.resetAfterUs = spec.windowUs;
    else if (newest.size() == 2)
        d.resetAfterUs = expiresIn(newest[1].bytes().toDouble());
    if (!d.allowed)
        d.retryAfterUs = freeing.size() == 2 ? std::max<qint64>(1, expiresIn(freeing[1].bytes().toDouble())) : 0;
    return {used, d};
}

} // namespace

MonitorRound readMonitorRound(Connection &connection, const std::vector<UsageTarget> &targets, qint64 nowUs)
{
    MonitorRound round;
    round.nowUs = nowUs;
    round.usage.resize(targets.size());
    round.problems.resize(targets.size());

    std::vector<Command> commands{{"TIME"}};
    std::vector<std::pair<size_t, size_t>> owned(targets.size(), {0, 0}); // first command, count
    for (size_t i = 0; i < targets.size(); ++i) {
        const UsageTarget &t = targets[i];
        try {
            t.spec.validate();
            std::vector<Command> mine;
            if (isScriptFormat(t.kind.format)) {
                LimitSpec spec = t.spec;
                spec.algorithm = t.kind.algorithm().value_or(t.spec.algorithm);
                mine.push_back(LimiterScript::forAlgorithm(spec.algorithm)
                                   .command(t.key, Limiter::arguments(t.key, spec, nowUs, true), true, LimiterScript::callsOn(connection)));
            } else if (t.kind.format == KeyFormat::ForeignSlidingLog) {
                mine = foreignLogCommands(t, nowUs);
            } else if (t.kind.format == KeyFormat::CounterWindow) {
                mine = counterWindowCommands(t, nowUs);
            } else if (t.kind.format == KeyFormat::Library && t.kind.readable()) {
                const LimitSpec spec = limitsAsRead(t.kind, t.spec);
                mine = t.kind.reader->read(t.kind, &spec, nowUs);
            }
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
            if (isScriptFormat(t.kind.format)) {
                LimitSpec spec = t.spec;
                spec.algorithm = t.kind.algorithm().value_or(t.spec.algorithm);
                const Reply &r = replies[first];
                Decision d;
                if (LimiterScript::notLoaded(r)) {
                    d = Limiter(connection).peek(t.key, spec, nowUs); // loads it for the next ticks
                    ++round.roundTrips;
                } else {
                    d = Decision::fromReply(r);
                }
                round.usage[i] = Usage{d.used - (d.allowed ? spec.cost : 0), d};
            } else if (t.kind.format == KeyFormat::ForeignSlidingLog && n == 3) {
                round.usage[i] = foreignLogUsage(t, nowUs, replies[first], replies[first + 1], replies[first + 2]);
            } else if (t.kind.format == KeyFormat::CounterWindow && n == 2) {
                round.usage[i] = counterWindowUsage(t, replies[first], replies[first + 1], nowUs);
            } else if (t.kind.format == KeyFormat::Library && n > 0) {
                const std::vector<Reply> mine(replies.begin() + qsizetype(first), replies.begin() + qsizetype(first + n));
                for (const Reply &m : mine)
                    m.orThrow();
                round.usage[i] = t.kind.reader->usage(t.kind, mine, limitsAsRead(t.kind, t.spec), nowUs);
            } else {
                round.problems[i] = QStringLiteral("not a limiter Ratescope can read");
            }
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
