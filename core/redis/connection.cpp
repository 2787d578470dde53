#include "redis/connection.h"

#include "redis/cluster.h"
#include "base/errors.h"
#include "redis/nodeconnection.h"

#include <QHash>
#include <QSet>

#include <algorithm>
#include <chrono>

namespace ratescope {

namespace {

bool isReadOnlyReply(const Reply &r)
{
    return r.isError() && r.bytes().startsWith("READONLY");
}

// Ends a rehearsal: thrown through the work, caught by rehearse() alone (it derives from no
// error type, so the work's own handlers let it pass).
struct RehearsalEnd {
};

// A command as one hash key.
QByteArray commandKey(const Command &command)
{
    QByteArray k;
    for (const QByteArray &arg : command)
        k += QByteArray::number(arg.size()) + ':' + arg;
    return k;
}

qint64 steadyNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

} // namespace

struct Connection::Rehearsal {
    Transcript assumed;
    QHash<QByteArray, QList<qsizetype>> unused; // each command's replies in `assumed` not given yet
    std::vector<Command> asked;                 // every command of every request made
    bool refused = false;
};

Connection::Connection(ConnectionOptions options)
    : m_options(std::move(options))
    , m_clock(
          [] { return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count(); })
{
    if (m_options.transport == ConnectionOptions::Transport::Cluster)
        m_cluster = std::make_unique<ClusterRouter>(m_options);
    else
        m_node = std::make_unique<NodeConnection>(m_options);
}

Connection::~Connection() = default;

bool Connection::isConnected() const
{
    return m_cluster ? m_cluster->isConnected() : m_node->isConnected();
}

void Connection::connect()
{
    refuseInRehearsal();
    m_prefetched.clear();
    m_along.clear();
    m_scriptCalls.reset();
    if (m_cluster)
        m_cluster->connect();
    else
        m_node->connect();
}

void Connection::disconnect()
{
    refuseInRehearsal();
    m_prefetched.clear();
    m_along.clear();
    m_scriptCalls.reset();
    m_switchWatch.reset();
    m_owed.clear();
    if (m_cluster)
        m_cluster->disconnect();
    else
        m_node->disconnect();
}

void Connection::followFailover()
{
    if (!m_switchWatch) {
        if (m_clock() < m_watchRetryAtMs)
            return; // no sentinel to watch just now: try again a little later
        for (const HostPort &sentinel : m_options.seeds) {
            ConnectionOptions o = m_options.forSentinel(sentinel);
            o.clientName.clear();
            try {
                auto watch = std::make_unique<NodeConnection>(o);
                watch->send(Command{"SUBSCRIBE", "+switch-master"});
                watch->receive().orThrow();
                m_switchWatch = std::move(watch);
                break;
            } catch (const Error &) {
            }
        }
        if (!m_switchWatch) {
            m_watchRetryAtMs = m_clock() + kWatchRetryMs;
            return;
        }
    }
    try {
        // "+switch-master" messages: "<master name> <old ip> <old port> <new ip> <new port>"
        while (const auto message = m_switchWatch->tryReceive()) {
            if (message->size() == 3 && message->elements()[2].bytes().startsWith(m_options.masterName.toUtf8() + ' ')) {
                // The next request asks the sentinels again. Replies still owed by the old
                // master (a window of send()s) are read first and kept for receive():
                // dropping them would lose them, and the caller would take a later
                // command's reply for theirs. Losing the socket meanwhile loses them, as
                // any lost connection does.
                while (m_node->outstanding() > 0)
                    m_owed.push_back(m_node->receive());
                m_node->disconnect();
            }
        }
    } catch (const Error &) {
        m_switchWatch.reset();
    }
}

bool Connection::isReadCommand(const Command &command)
{
    if (command.isEmpty())
        return false;
    static const QSet<QByteArray> reads = {
        "GET",    "MGET",      "GETRANGE", "STRLEN",  "EXISTS",     "TYPE",       "TTL",     "PTTL",     "HGET",     "HMGET",
        "HGETALL", "HLEN",     "HRANDFIELD", "HEXISTS", "HKEYS",    "HVALS",      "ZRANGE",  "ZCARD",    "ZCOUNT",   "ZSCORE",
        "ZRANGEBYSCORE", "LINDEX", "LRANGE", "LLEN",  "SCARD",      "SMEMBERS",   "XLEN",    "XRANGE",   "XREVRANGE", "TIME",
        "PING",   "ECHO",      "DBSIZE",   "SCAN",    "HSCAN",      "ZSCAN",      "SSCAN",   "INFO",     "ROLE",
        "EVALSHA_RO", "EVAL_RO", "FCALL_RO",
    };
    const QByteArray name = command[0].toUpper();
    if (reads.contains(name))
        return true;
    const QByteArray sub = command.size() > 1 ? command[1].toUpper() : QByteArray();
    return (name == "SCRIPT" && sub == "EXISTS") || (name == "OBJECT" && sub == "ENCODING") || (name == "MEMORY" && sub == "USAGE") ||
           (name == "CONFIG" && sub == "GET") || (name == "FUNCTION" && sub == "LIST");
}

void Connection::prefetch(const std::vector<Command> &reads)
{
    for (const Command &c : reads)
        if (!isReadCommand(c))
            throw UsageError(QStringLiteral("read-ahead of %1: not a read").arg(QString::fromUtf8(c.value(0))));
    if (reads.empty())
        return;
    if (!m_rehearsal && !m_cluster && !m_node->isConnected()) {
        if (viaSentinel())
            followFailover();
        m_prefetched.clear();
        m_along.clear();
        m_scriptCalls.reset(); // as connect() does
        std::vector<Reply> replies = m_node->connectWith(reads, &m_lastRoundNs);
        for (size_t i = 0; i < reads.size(); ++i) {
            record(reads[i], replies[i]);
            m_prefetched.emplace_back(reads[i], std::move(replies[i]));
        }
        return;
    }
    if (m_cluster && !m_cluster->isConnected())
        connect(); // the slot map first, as connect() reads it
    // A read whose reply is kept already (it went along with an earlier request of the same
    // round) is not asked again: a copy of that reply is kept for it, as if it had been sent
    // with that request (the caller's forget() takes back one copy, whichever is left).
    QHash<QByteArray, qsizetype> kept; // the first reply kept for each command
    for (qsizetype i = 0; i < qsizetype(m_prefetched.size()); ++i)
        kept.insert(commandKey(m_prefetched[size_t(i)].first), i);
    std::vector<Command> ask;
    for (const Command &c : reads) {
        const auto at = kept.constFind(commandKey(c));
        if (at == kept.constEnd()) {
            ask.push_back(c);
            continue;
        }
        const Reply reply = m_prefetched[size_t(*at)].second;
        record(c, reply);
        m_prefetched.emplace_back(c, reply);
    }
    if (ask.empty())
        return;
    std::vector<Reply> replies = askWithAlong(ask);
    for (size_t i = 0; i < ask.size(); ++i) {
        record(ask[i], replies[i]);
        m_prefetched.emplace_back(std::move(ask[i]), std::move(replies[i]));
    }
}

void Connection::keepPrefetched(Command command, Reply reply)
{
    if (isReadCommand(command))
        m_prefetched.emplace_back(std::move(command), std::move(reply));
}

std::optional<Reply> Connection::takePrefetched(const Command &command)
{
    for (auto it = m_prefetched.begin(); it != m_prefetched.end(); ++it)
        if (it->first == command) {
            Reply r = std::move(it->second);
            m_prefetched.erase(it);
            return r;
        }
    return std::nullopt;
}

void Connection::keepPrefetchedFor(const std::vector<Command> &commands)
{
    if (!std::all_of(commands.begin(), commands.end(), isReadCommand)) {
        m_prefetched.clear();
        m_along.clear();
    }
}

void Connection::readAlong(const std::vector<Command> &reads)
{
    for (const Command &c : reads)
        if (!isReadCommand(c))
            throw UsageError(QStringLiteral("read-along of %1: not a read").arg(QString::fromUtf8(c.value(0))));
    for (const Command &c : reads) {
        // Kept already (read ahead in this round for another caller): a copy of that reply is
        // kept for this one, as prefetch() does, rather than asking again with the next request.
        const auto kept = std::find_if(m_prefetched.begin(), m_prefetched.end(), [&c](const auto &p) { return p.first == c; });
        if (kept != m_prefetched.end())
            m_prefetched.emplace_back(c, kept->second);
        else
            m_along.push_back(c);
    }
}

void Connection::forget(const std::vector<Command> &reads)
{
    for (const Command &c : reads) {
        takePrefetched(c);
        if (const auto it = std::find(m_along.begin(), m_along.end(), c); it != m_along.end())
            m_along.erase(it);
    }
}

Reply Connection::command(const Command &args)
{
    if (m_rehearsal || (!m_along.empty() && isReadCommand(args))) { // the read-along goes with it
        Reply r = std::move(pipeline({args}).front());
        r.orThrow();
        return r;
    }
    if (!m_prefetched.empty() || !m_along.empty()) {
        if (auto r = takePrefetched(args)) {
            r->orThrow();
            record(args, *r);
            return std::move(*r);
        }
        keepPrefetchedFor({args});
    }
    const qint64 sent = steadyNs();
    Reply r = commandNow(args);
    m_lastRoundNs = steadyNs() - sent;
    record(args, r);
    return r;
}

Reply Connection::commandNow(const Command &args)
{
    if (m_cluster)
        return m_cluster->command(args).orThrow();
    if (!viaSentinel())
        return m_node->command(args);
    followFailover();
    try {
        return m_node->command(args);
    } catch (const ReplyError &e) {
        if (e.prefix() != QLatin1String("READONLY"))
            throw;
    }
    m_node->disconnect(); // the next connect asks the sentinels again
    return m_node->command(args);
}

std::vector<Reply> Connection::pipeline(const std::vector<Command> &commands)
{
    std::vector<Reply> replies;
    if (m_prefetched.empty() && m_along.empty()) {
        replies = pipelineNow(commands);
    } else {
        keepPrefetchedFor(commands);
        // The replies read ahead, and the rest asked now in one round, with the read-along.
        std::vector<std::optional<Reply>> kept(commands.size());
        std::vector<Command> rest;
        for (size_t i = 0; i < commands.size(); ++i) {
            kept[i] = takePrefetched(commands[i]);
            if (!kept[i])
                rest.push_back(commands[i]);
        }
        std::vector<Reply> asked;
        if (!rest.empty())
            asked = askWithAlong(std::move(rest));
        replies.reserve(commands.size());
        size_t next = 0;
        for (auto &k : kept)
            replies.push_back(k ? std::move(*k) : std::move(asked[next++]));
    }
    if (m_transcript)
        for (size_t i = 0; i < commands.size() && i < replies.size(); ++i)
            record(commands[i], replies[i]);
    return replies;
}

std::vector<Reply> Connection::askWithAlong(std::vector<Command> rest)
{
    // What the request asks itself is not asked twice: its reply answers the read-along too.
    std::vector<Command> along;
    std::vector<size_t> shared; // index in rest of a read-along the request asks as well
    for (Command &c : m_along) {
        const auto same = std::find(rest.begin(), rest.end(), c);
        if (same == rest.end())
            along.push_back(std::move(c));
        else
            shared.push_back(size_t(same - rest.begin()));
    }
    m_along.clear();
    const size_t own = rest.size();
    rest.insert(rest.end(), along.begin(), along.end());
    if (m_rehearsal) // sent once, answering two: the plan holds both
        for (size_t i : shared)
            m_rehearsal->asked.push_back(rest[i]);
    std::vector<Reply> asked = pipelineNow(rest);
    for (size_t i : shared)
        if (i < asked.size())
            m_prefetched.emplace_back(rest[i], asked[i]);
    for (size_t i = 0; i < along.size() && own + i < asked.size(); ++i)
        m_prefetched.emplace_back(std::move(along[i]), std::move(asked[own + i]));
    asked.resize(std::min(asked.size(), own));
    return asked;
}

std::vector<Reply> Connection::pipelineNow(const std::vector<Command> &commands)
{
    if (m_rehearsal)
        return rehearsed(commands);
    if (m_cluster)
        return m_cluster->pipeline(commands);
    if (viaSentinel())
        followFailover();
    const qint64 sent = steadyNs();
    std::vector<Reply> replies = m_node->pipeline(commands);
    m_lastRoundNs = steadyNs() - sent;
    if (!viaSentinel() || std::none_of(replies.begin(), replies.end(), isReadOnlyReply))
        return replies;
    // Only the refused commands go again, to the new master.
    m_node->disconnect();
    std::vector<size_t> again;
    std::vector<Command> retry;
    for (size_t i = 0; i < replies.size(); ++i)
        if (isReadOnlyReply(replies[i])) {
            again.push_back(i);
            retry.push_back(commands[i]);
        }
    const std::vector<Reply> second = m_node->pipeline(retry);
    for (size_t j = 0; j < again.size(); ++j)
        replies[again[j]] = second[j];
    return replies;
}

void Connection::send(const std::vector<Command> &commands)
{
    refuseInRehearsal();
    m_prefetched.clear();
    m_along.clear();
    if (viaSentinel())
        followFailover();
    if (m_cluster)
        for (const Command &c : commands)
            m_cluster->send(c);
    else
        m_node->send(commands);
}

void Connection::send(const Command &command)
{
    refuseInRehearsal();
    m_prefetched.clear();
    m_along.clear();
    if (viaSentinel())
        followFailover();
    if (m_cluster)
        m_cluster->send(command);
    else
        m_node->send(command);
}

Reply Connection::receive()
{
    refuseInRehearsal();
    if (!m_owed.empty()) {
        Reply r = std::move(m_owed.front());
        m_owed.pop_front();
        return r;
    }
    return m_cluster ? m_cluster->receive() : m_node->receive();
}

std::vector<Reply> Connection::receive(size_t count)
{
    std::vector<Reply> replies;
    replies.reserve(count);
    for (size_t i = 0; i < count; ++i)
        replies.push_back(receive());
    return replies;
}

std::optional<Connection::Placement> Connection::placementOf(const QByteArray &key)
{
    if (!m_cluster)
        return std::nullopt;
    const int slot = keySlot(key);
    return Placement{slot, m_cluster->masterOf(slot)};
}

std::vector<Connection::Node> Connection::nodes()
{
    if (!isConnected())
        refuseInRehearsal();
    if (m_cluster)
        return m_cluster->nodes();
    if (!m_node->isConnected())
        m_node->connect();
    return {{m_node->peer(), viaSentinel() ? QStringLiteral("master (via sentinel)") : QStringLiteral("standalone"), {}, {}, {}, {}}};
}

void Connection::refreshTopology()
{
    if (!m_cluster)
        return; // one server: nothing to ask (and a rehearsal goes on past it)
    refuseInRehearsal();
    m_cluster->refresh();
}

std::vector<std::vector<Reply>> Connection::onEachMaster(const std::vector<Command> &commands)
{
    if (m_cluster) {
        refuseInRehearsal();
        keepPrefetchedFor(commands);
        return m_cluster->onEachMaster(commands);
    }
    return {pipeline(commands)};
}

std::vector<std::vector<Reply>> Connection::onEachMaster(const std::function<std::vector<Command>(size_t)> &commandsFor)
{
    if (m_cluster) {
        refuseInRehearsal();
        return m_cluster->onEachMaster(commandsFor);
    }
    const std::vector<Command> mine = commandsFor(0);
    return {mine.empty() ? std::vector<Reply>{} : pipeline(mine)};
}

void Connection::record(const Command &command, const Reply &reply)
{
    if (m_transcript && !m_rehearsal)
        m_transcript->emplace_back(command, reply);
}

void Connection::refuseInRehearsal() const
{
    if (!m_rehearsal)
        return;
    m_rehearsal->refused = true;
    throw RehearsalEnd{};
}

std::vector<Reply> Connection::rehearsed(const std::vector<Command> &commands)
{
    Rehearsal &r = *m_rehearsal;
    if (!std::all_of(commands.begin(), commands.end(), isReadCommand))
        refuseInRehearsal();
    r.asked.insert(r.asked.end(), commands.begin(), commands.end());
    std::vector<Reply> replies;
    replies.reserve(commands.size());
    for (const Command &c : commands) {
        QList<qsizetype> &left = r.unused[commandKey(c)];
        if (left.isEmpty())
            throw RehearsalEnd{}; // the first request the last run's replies do not answer
        replies.push_back(r.assumed[size_t(left.takeFirst())].second);
    }
    return replies;
}

std::vector<Command> Connection::rehearse(const std::function<void()> &work, const Transcript &assumed)
{
    if (m_rehearsal)
        return {};
    Rehearsal r;
    r.assumed = assumed;
    for (qsizetype i = 0; i < qsizetype(assumed.size()); ++i)
        r.unused[commandKey(assumed[size_t(i)].first)].append(i);
    // The connection's own state, set aside for the rehearsal and put back after it.
    auto prefetched = std::exchange(m_prefetched, {});
    auto along = std::exchange(m_along, {});
    const std::optional<ScriptCalls> calls = m_scriptCalls;
    Transcript *const transcript = std::exchange(m_transcript, nullptr);
    m_rehearsal = &r;
    try {
        work();
    } catch (const RehearsalEnd &) {
    } catch (...) {
        // what the last run's replies made of the work (a reply it refuses now): what it asked
        // until then is still what it will ask
    }
    m_rehearsal = nullptr;
    m_prefetched = std::move(prefetched);
    m_along = std::move(along);
    m_scriptCalls = calls;
    m_transcript = transcript;
    if (r.refused)
        return {};
    return std::move(r.asked);
}

} // namespace ratescope
