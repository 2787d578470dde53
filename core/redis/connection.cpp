#include "redis/connection.h"

#include "redis/cluster.h"
#include "base/errors.h"
#include "redis/nodeconnection.h"

#include <QSet>

#include <algorithm>
#include <chrono>

namespace ratescope {

namespace {

bool isReadOnlyReply(const Reply &r)
{
    return r.isError() && r.bytes().startsWith("READONLY");
}

} // namespace

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
    return (name == "SCRIPT" && sub == "EXISTS") || (name == "OBJECT" && sub == "ENCODING") || (name == "MEMORY" && sub == "USAGE");
}

void Connection::prefetch(const std::vector<Command> &reads)
{
    for (const Command &c : reads)
        if (!isReadCommand(c))
            throw UsageError(QStringLiteral("read-ahead of %1: not a read").arg(QString::fromUtf8(c.value(0))));
    if (reads.empty())
        return;
    std::vector<Reply> replies;
    if (!m_cluster && !m_node->isConnected()) {
        if (viaSentinel())
            followFailover();
        m_prefetched.clear();
        m_along.clear();
        m_scriptCalls.reset(); // as connect() does
        replies = m_node->connectWith(reads);
    } else {
        if (m_cluster && !m_cluster->isConnected())
            connect(); // the slot map first, as connect() reads it
        replies = pipelineNow(reads);
    }
    for (size_t i = 0; i < reads.size(); ++i)
        m_prefetched.emplace_back(reads[i], std::move(replies[i]));
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
    m_along.insert(m_along.end(), reads.begin(), reads.end());
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
    if (!m_along.empty() && isReadCommand(args)) { // the read-along goes with it
        Reply r = std::move(pipeline({args}).front());
        r.orThrow();
        return r;
    }
    if (!m_prefetched.empty() || !m_along.empty()) {
        if (auto r = takePrefetched(args)) {
            r->orThrow();
            return std::move(*r);
        }
        keepPrefetchedFor({args});
    }
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
    if (m_prefetched.empty() && m_along.empty())
        return pipelineNow(commands);
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
    if (!rest.empty()) {
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
        asked = pipelineNow(rest);
        for (size_t i : shared)
            if (i < asked.size())
                m_prefetched.emplace_back(rest[i], asked[i]);
        for (size_t i = 0; i < along.size() && own + i < asked.size(); ++i)
            m_prefetched.emplace_back(std::move(along[i]), std::move(asked[own + i]));
        asked.resize(std::min(asked.size(), own));
    }
    std::vector<Reply> replies;
    replies.reserve(commands.size());
    size_t next = 0;
    for (auto &k : kept)
        replies.push_back(k ? std::move(*k) : std::move(asked[next++]));
    return replies;
}

std::vector<Reply> Connection::pipelineNow(const std::vector<Command> &commands)
{
    if (m_cluster)
        return m_cluster->pipeline(commands);
    if (viaSentinel())
        followFailover();
    std::vector<Reply> replies = m_node->pipeline(commands);
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
    if (m_cluster)
        return m_cluster->nodes();
    if (!m_node->isConnected())
        m_node->connect();
    return {{m_node->peer(), viaSentinel() ? QStringLiteral("master (via sentinel)") : QStringLiteral("standalone"), {}, {}, {}, {}}};
}

void Connection::refreshTopology()
{
    if (m_cluster)
        m_cluster->refresh();
}

std::vector<std::vector<Reply>> Connection::onEachMaster(const std::vector<Command> &commands)
{
    if (m_cluster) {
        keepPrefetchedFor(commands);
        return m_cluster->onEachMaster(commands);
    }
    return {pipeline(commands)};
}

std::vector<std::vector<Reply>> Connection::onEachMaster(const std::function<std::vector<Command>(size_t)> &commandsFor)
{
    if (m_cluster)
        return m_cluster->onEachMaster(commandsFor);
    const std::vector<Command> mine = commandsFor(0);
    return {mine.empty() ? std::vector<Reply>{} : pipeline(mine)};
}

} // namespace ratescope
