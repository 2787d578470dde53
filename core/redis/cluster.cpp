#include "redis/cluster.h"

#include "base/errors.h"
#include "redis/nodeconnection.h"

#include <chrono>
#include <exception>
#include <map>
#include <QSet>

namespace ratescope {

namespace {

constexpr int kSlots = 16384;
constexpr int kMaxRedirects = 5;

quint16 crc16(const char *buf, qsizetype len)
{
    quint16 crc = 0;
    for (qsizetype i = 0; i < len; ++i) {
        crc ^= quint16(quint8(buf[i])) << 8;
        for (int b = 0; b < 8; ++b)
            crc = (crc & 0x8000) ? quint16((crc << 1) ^ 0x1021) : quint16(crc << 1);
    }
    return crc;
}

QByteArray upper(const QByteArray &s)
{
    return s.toUpper();
}

// "MOVED 3999 127.0.0.1:6381" / "ASK 3999 127.0.0.1:6381"
std::optional<std::pair<QByteArray, HostPort>> redirection(const Reply &r)
{
    if (!r.isError())
        return std::nullopt;
    const QList<QByteArray> parts = r.bytes().split(' ');
    if (parts.size() != 3 || (parts[0] != "MOVED" && parts[0] != "ASK"))
        return std::nullopt;
    const qsizetype colon = parts[2].lastIndexOf(':');
    if (colon < 0)
        return std::nullopt;
    return std::pair(parts[0], HostPort{QString::fromUtf8(parts[2].left(colon)), quint16(parts[2].mid(colon + 1).toUInt())});
}

const QSet<QByteArray> &keylessCommands()
{
    static const QSet<QByteArray> names = {
        "PING",   "INFO",     "TIME",      "DBSIZE",      "SCAN",       "SCRIPT",   "CLIENT",    "CONFIG",  "FLUSHALL", "FLUSHDB",
        "KEYS",   "PUBLISH",  "SUBSCRIBE", "UNSUBSCRIBE", "PSUBSCRIBE", "CLUSTER",  "ROLE",      "ECHO",    "AUTH",     "SELECT",
        "HELLO",  "COMMAND",  "ACL",       "WAIT",        "DEBUG",      "LASTSAVE", "RANDOMKEY", "SLOWLOG", "LATENCY",  "MODULE",
        "ASKING", "READONLY", "READWRITE", "MULTI",       "EXEC",       "DISCARD",  "FUNCTION"};
    return names;
}

// Keyless and free of side effects: any master can answer, so when one is out of reach the
// next is asked (this repeats nothing that could have counted).
bool anyMasterMayAnswer(const Command &c)
{
    static const QSet<QByteArray> names = {"PING", "TIME", "ECHO", "ROLE", "INFO", "LASTSAVE", "COMMAND"};
    const QByteArray name = upper(c[0]);
    if (names.contains(name))
        return true;
    const QByteArray sub = c.size() > 1 ? upper(c[1]) : QByteArray();
    return (name == "CONFIG" && sub == "GET") ||
           (name == "CLUSTER" && (sub == "SLOTS" || sub == "INFO" || sub == "NODES" || sub == "SHARDS" || sub == "KEYSLOT"));
}

const QSet<QByteArray> &multiKeyCounting()
{
    // Each key counts one on its own node: the sum over nodes is the answer.
    static const QSet<QByteArray> names = {"DEL", "UNLINK", "EXISTS", "TOUCH"};
    return names;
}

} // namespace

int keySlot(const QByteArray &key)
{
    const qsizetype open = key.indexOf('{');
    if (open >= 0) {
        const qsizetype close = key.indexOf('}', open + 1);
        if (close > open + 1)
            return crc16(key.constData() + open + 1, close - open - 1) % kSlots;
    }
    return crc16(key.constData(), key.size()) % kSlots;
}

std::optional<QByteArray> routingKey(const Command &c)
{
    if (c.isEmpty())
        return std::nullopt;
    const QByteArray name = upper(c[0]);
    if (name == "EVAL" || name == "EVALSHA" || name == "EVAL_RO" || name == "EVALSHA_RO" || name == "FCALL" || name == "FCALL_RO")
        return c.size() > 3 && c[2].toLongLong() > 0 ? std::optional(c[3]) : std::nullopt;
    if (name == "MEMORY" || name == "OBJECT")
        return c.size() > 2 ? std::optional(c[2]) : std::nullopt;
    if (keylessCommands().contains(name) || c.size() < 2)
        return std::nullopt;
    return c[1];
}

SlotMap SlotMap::fromReply(const Reply &reply, const HostPort &asked, const std::function<int(const HostPort &)> &nodeOf)
{
    SlotMap map;
    auto addressOf = [&asked](const Reply &node) -> HostPort {
        QString host = node[0].text();
        if (host.isEmpty() || host == QLatin1String("?"))
            host = asked.host; // the node did not announce its address: it is the one we asked
        return {host, quint16(node[1].toInteger())};
    };
    for (const Reply &range : reply.elements()) {
        if (range.size() < 3 || range[2].size() < 2)
            continue;
        const int master = nodeOf(addressOf(range[2]));
        for (qint64 s = range[0].toInteger(); s <= range[1].toInteger() && s < kSlots; ++s)
            if (s >= 0)
                map.m_owner[size_t(s)] = master;
        // Replicas follow the master; listed for status displays, never sent commands.
        for (size_t r = 3; r < range.size(); ++r) {
            if (range[r].size() < 2 || range[r][0].text().isEmpty() || range[r][0].text() == QLatin1String("?"))
                continue;
            const Replica replica{addressOf(range[r]), master};
            if (std::find(map.m_replicas.begin(), map.m_replicas.end(), replica) == map.m_replicas.end())
                map.m_replicas.push_back(replica);
        }
    }
    return map;
}

bool SlotMap::servesAny() const
{
    return std::any_of(m_owner.begin(), m_owner.end(), [](int n) { return n >= 0; });
}

std::vector<int> SlotMap::owners() const
{
    std::vector<int> result;
    for (int n : m_owner)
        if (n >= 0 && std::find(result.begin(), result.end(), n) == result.end())
            result.push_back(n);
    return result;
}

QString SlotMap::rangesOf(int node) const
{
    QStringList ranges;
    int start = -1;
    for (int s = 0; s <= kSlots; ++s) {
        const bool mine = s < kSlots && m_owner[size_t(s)] == node;
        if (mine && start < 0)
            start = s;
        if (!mine && start >= 0) {
            ranges << (start == s - 1 ? QString::number(start) : QStringLiteral("%1-%2").arg(start).arg(s - 1));
            start = -1;
        }
    }
    return ranges.join(QLatin1Char(','));
}

ClusterRouter::ClusterRouter(ConnectionOptions options)
    : m_options(std::move(options))
    , m_clock(
          [] { return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count(); })
{
}

ClusterRouter::~ClusterRouter() = default;

bool ClusterRouter::isConnected() const
{
    return m_haveMap &&
           std::any_of(m_nodes.begin(), m_nodes.end(), [](const Node &n) { return n.connection && n.connection->isConnected(); });
}

void ClusterRouter::disconnect()
{
    for (Node &n : m_nodes)
        if (n.connection)
            n.connection->disconnect();
    m_inFlight.clear();
}

void ClusterRouter::connect()
{
    refresh();
}

int ClusterRouter::nodeIndex(const HostPort &address)
{
    for (size_t i = 0; i < m_nodes.size(); ++i)
        if (m_nodes[i].address == address)
            return int(i);
    ConnectionOptions o = m_options;
    o.transport = ConnectionOptions::Transport::Tcp;
    o.address = address;
    o.seeds.clear();
    o.db = 0;
    Node added;
    added.address = address;
    added.connection = std::make_unique<NodeConnection>(o);
    m_nodes.push_back(std::move(added));
    return int(m_nodes.size() - 1);
}

void ClusterRouter::dropWindow()
{
    for (const InFlight &f : m_inFlight)
        node(f.node).disconnect(); // their replies will never be read: no socket out of step
    m_inFlight.clear();
    m_haveMap = false;
}

bool ClusterRouter::clusterReachable()
{
    try {
        refresh(); // also the map after a failover
        return true;
    } catch (const ConnectionError &) {
        return false;
    }
}

QByteArray ClusterRouter::downText(int index, const ConnectionError &e) const
{
    return "DOWN " + m_nodes[size_t(index)].address.toString().toUtf8() + ": " + e.message().toUtf8();
}

NodeConnection &ClusterRouter::node(int index)
{
    return *m_nodes[size_t(index)].connection;
}

void ClusterRouter::checkPause(int index) const
{
    const Node &n = m_nodes[size_t(index)];
    const qint64 now = m_clock();
    if (n.paused(now))
        throw IoError(QStringLiteral("not asked for another %1 ms after %2 failure%3 in a row: %4")
                          .arg(n.pausedUntilMs - now)
                          .arg(n.failures)
                          .arg(n.failures == 1 ? QString() : QStringLiteral("s"))
                          .arg(n.problem));
}

void ClusterRouter::noteLoss(int index, const ConnectionError &e)
{
    // Refused credentials or a garbled reply are no sign of a node out of reach.
    if (!dynamic_cast<const IoError *>(&e) && !dynamic_cast<const TimeoutError *>(&e))
        return;
    Node &n = m_nodes[size_t(index)];
    const qint64 now = m_clock();
    if (n.paused(now))
        return; // the fail-fast answer itself: nothing new was learnt
    n.failures = std::min(n.failures + 1, 30);
    n.problem = e.message();
    n.pausedUntilMs = now + std::min<qint64>(kBackoffMaxMs, qint64(kBackoffFirstMs) << std::min(n.failures - 1, 10));
}

void ClusterRouter::noteAnswer(int index)
{
    Node &n = m_nodes[size_t(index)];
    n.failures = 0;
    n.problem.clear();
}

void ClusterRouter::refresh()
{
    // Known nodes first (the map moved, the nodes mostly did not), those connected now
    // before the others (a node that is down costs a connect timeout), then the seeds.
    std::vector<HostPort> candidates;
    for (const bool connected : {true, false})
        for (const Node &n : m_nodes)
            if (bool(n.connection && n.connection->isConnected()) == connected)
                candidates.push_back(n.address);
    for (const HostPort &s : m_options.seeds)
        if (std::find(candidates.begin(), candidates.end(), s) == candidates.end())
            candidates.push_back(s);
    QStringList failures;
    for (const HostPort &candidate : candidates) {
        Reply slotMap;
        try {
            // A paused node (it timed out just now) is not asked: its checkPause() says why.
            slotMap = onNode(nodeIndex(candidate), [](NodeConnection &pooled) {
                if (pooled.outstanding() > 0) {
                    // Its socket has replies on the way (a window of requests): ask on another.
                    NodeConnection side(pooled.options());
                    return side.command({"CLUSTER", "SLOTS"});
                }
                return pooled.command({"CLUSTER", "SLOTS"});
            });
        } catch (const Error &e) {
            failures << QStringLiteral("%1:%2: %3").arg(candidate.host).arg(candidate.port).arg(e.message());
            continue;
        }
        SlotMap map = SlotMap::fromReply(slotMap, candidate, [this](const HostPort &a) { return nodeIndex(a); });
        if (!map.servesAny()) {
            failures << QStringLiteral("%1:%2 serves no slots").arg(candidate.host).arg(candidate.port);
            continue;
        }
        m_map = std::move(map);
        m_haveMap = true;
        return;
    }
    throw IoError(QStringLiteral("no cluster node answered CLUSTER SLOTS: %1").arg(failures.join(QStringLiteral("; "))));
}

void ClusterRouter::ensureMap()
{
    if (!m_haveMap)
        refresh();
}

std::vector<int> ClusterRouter::masters()
{
    ensureMap();
    std::vector<int> result = m_map.owners();
    std::sort(result.begin(), result.end(), [&](int a, int b) {
        const HostPort &x = m_nodes[size_t(a)].address, &y = m_nodes[size_t(b)].address;
        return std::pair(x.host, x.port) < std::pair(y.host, y.port);
    });
    return result;
}

int ClusterRouter::route(const Command &command)
{
    ensureMap();
    const auto key = routingKey(command);
    if (!key)
        return masters().front();
    const int n = m_map.owner(keySlot(*key));
    if (n < 0)
        throw IoError(QStringLiteral("no cluster node serves slot %1").arg(keySlot(*key)));
    return n;
}

Reply ClusterRouter::settle(const Command &command, Reply reply)
{
    for (int hops = 0; hops < kMaxRedirects; ++hops) {
        const auto r = redirection(reply);
        if (!r)
            return reply;
        const int target = nodeIndex(r->second);
        // Its socket busy with a window of requests: this reply would come out of turn. The
        // redirection stays the answer (the command did not run).
        if (node(target).outstanding() > 0)
            return reply;
        try {
            if (r->first == "MOVED") {
                refresh(); // the slot has a new owner for good
                reply = onNode(target, [&](NodeConnection &c) { return c.pipeline({command}).front(); });
            } else {
                // ASK: only this command, only now, goes to the importing node.
                reply = onNode(target, [&](NodeConnection &c) { return c.pipeline({{"ASKING"}, command}).back(); });
            }
        } catch (const ConnectionError &e) {
            m_haveMap = false;
            return Reply::error(downText(target, e)); // may have run: not repeated
        }
    }
    return reply;
}

Reply ClusterRouter::runOn(int nodeIdx, const Command &command)
{
    return settle(command, onNode(nodeIdx, [&](NodeConnection &c) { return c.pipeline({command}).front(); }));
}

Reply ClusterRouter::scan(const Command &command)
{
    // Cursor "<master address>/<that master's cursor>": "0" starts at the first master and
    // is returned once the last one is done. The address, not a position, so that a map
    // read again mid-walk (a failover) cannot send the walk to another master's keys.
    const std::vector<int> all = masters();
    size_t which = 0;
    QByteArray cursor = "0";
    if (command.size() > 1 && command[1] != "0") {
        const qsizetype slash = command[1].lastIndexOf('/');
        if (slash < 0)
            return Reply::error("ERR invalid cursor");
        const QString address = QString::fromUtf8(command[1].left(slash));
        cursor = command[1].mid(slash + 1);
        const auto at = std::find_if(all.begin(), all.end(), [&](int m) { return m_nodes[size_t(m)].address.toString() == address; });
        if (at == all.end())
            return Reply::error("ERR the cluster's masters changed during the scan (" + address.toUtf8() +
                                " is no master now): start it again");
        which = size_t(at - all.begin());
    }
    Command c = command;
    c[1] = cursor;
    Reply page;
    try {
        page = onNode(all[which], [&](NodeConnection &n) { return n.pipeline({c}).front(); });
    } catch (const ConnectionError &e) {
        // One master out of reach is an error reply, as a refusal would be; all of them, a
        // lost connection.
        m_haveMap = false;
        if (!clusterReachable())
            throw;
        return Reply::error(downText(all[which], e));
    }
    if (page.isError() || page.size() != 2)
        return page;
    const QByteArray next = page[0].bytes();
    auto at = [&](size_t m, const QByteArray &position) {
        return Reply::string(m_nodes[size_t(all[m])].address.toString().toUtf8() + "/" + position);
    };
    if (next != "0")
        page.elements()[0] = at(which, next);
    else if (which + 1 < all.size())
        page.elements()[0] = at(which + 1, "0");
    return page;
}

std::optional<Reply> ClusterRouter::special(const Command &command)
{
    const QByteArray name = upper(command[0]);
    if (name == "SCAN")
        return scan(command);
    const bool broadcast = name == "FLUSHALL" || name == "FLUSHDB" || name == "DBSIZE" || name == "KEYS" ||
                           (name == "SCRIPT" && command.size() > 1 && upper(command[1]) != "EXISTS") ||
                           (name == "CONFIG" && command.size() > 1 && upper(command[1]) == "RESETSTAT");
    if (broadcast) {
        std::vector<Reply> parts;
        std::exception_ptr firstLoss;
        for (int m : masters()) {
            try {
                parts.push_back(onNode(m, [&](NodeConnection &c) { return c.pipeline({command}).front(); }));
            } catch (const ConnectionError &e) {
                m_haveMap = false; // it may have failed over
                if (!firstLoss)
                    firstLoss = std::current_exception();
                parts.push_back(Reply::error(downText(m, e)));
            }
        }
        const bool allDown = std::all_of(parts.begin(), parts.end(), [](const Reply &p) { return p.bytes().startsWith("DOWN "); });
        if (firstLoss && allDown && !clusterReachable())
            std::rethrow_exception(firstLoss);
        // SCRIPT LOAD: the masters that have it can run it; one out of reach answers
        // NOSCRIPT when it is back, and is loaded then.
        if (name == "SCRIPT" && !allDown)
            std::erase_if(parts, [](const Reply &p) { return p.isError() && p.bytes().startsWith("DOWN "); });
        for (const Reply &p : parts)
            if (p.isError())
                return p;
        if (name == "DBSIZE") {
            qint64 sum = 0;
            for (const Reply &p : parts)
                sum += p.integer();
            return Reply::integer(sum);
        }
        if (name == "KEYS") {
            std::vector<Reply> all;
            for (const Reply &p : parts)
                all.insert(all.end(), p.elements().begin(), p.elements().end());
            return Reply::array(std::move(all));
        }
        return parts.front(); // SCRIPT LOAD: the same sha everywhere
    }
    if (multiKeyCounting().contains(name) && command.size() > 2) {
        // Keys in different slots cannot share a command in a cluster: one per key, summed.
        std::vector<Command> single;
        for (qsizetype i = 1; i < command.size(); ++i)
            single.push_back({command[0], command[i]});
        qint64 sum = 0;
        for (const Reply &r : pipeline(single)) {
            if (r.isError())
                return r;
            sum += r.integer();
        }
        return Reply::integer(sum);
    }
    return std::nullopt;
}

Reply ClusterRouter::command(const Command &command)
{
    if (command.isEmpty())
        throw UsageError(QStringLiteral("empty command"));
    return rereadMapAfterLoss([&] {
        if (auto r = special(command))
            return *r;
        if (!routingKey(command) && anyMasterMayAnswer(command)) {
            std::exception_ptr firstLoss;
            for (int m : masters()) {
                try {
                    return runOn(m, command);
                } catch (const ConnectionError &) {
                    m_haveMap = false;
                    if (!firstLoss)
                        firstLoss = std::current_exception();
                }
            }
            std::rethrow_exception(firstLoss);
        }
        const int n = route(command);
        try {
            return runOn(n, command);
        } catch (const ConnectionError &e) {
            // Its node is out of reach; the cluster may not be (then: an error reply).
            if (!clusterReachable())
                throw;
            return Reply::error(downText(n, e));
        }
    });
}

std::vector<Reply> ClusterRouter::pipeline(const std::vector<Command> &commands)
{
    return rereadMapAfterLoss([&] { return pipelineOnNodes(commands); });
}

std::vector<Reply> ClusterRouter::pipelineOnNodes(const std::vector<Command> &commands)
{
    // Refused before anything is sent, so that no node is left with replies to read.
    for (const Command &c : commands)
        if (c.isEmpty())
            throw UsageError(QStringLiteral("empty command"));
    std::vector<Reply> replies(commands.size());
    std::map<int, std::vector<size_t>> byNode;
    std::vector<size_t> specials;
    for (size_t i = 0; i < commands.size(); ++i) {
        const QByteArray name = commands[i].isEmpty() ? QByteArray() : upper(commands[i][0]);
        if (name == "SCAN" || name == "DBSIZE" || name == "FLUSHALL" || name == "FLUSHDB" || name == "KEYS" || name == "SCRIPT" ||
            (multiKeyCounting().contains(name) && commands[i].size() > 2))
            specials.push_back(i);
        else
            byNode[route(commands[i])].push_back(i);
    }
    // Every node gets its share at once, then the replies are read node by node. A node that
    // cannot be reached, or is lost midway, answers "DOWN <address>: why" for its commands
    // (they may have run or not: never repeated) while every other node's replies are still
    // read, so that no connection is left out of step. Only when all are lost is it thrown.
    //
    // Any other error on a node (a reply that cannot be parsed, a refusal while connecting)
    // is held, too, until every other node's owed replies are read; that node's socket is
    // closed (its remaining replies cannot be told apart), then the error is thrown.
    std::map<int, QByteArray> down;
    std::exception_ptr firstLoss;
    std::exception_ptr firstOther; // thrown once every owed reply is read
    auto lose = [&](int n, const ConnectionError &e) {
        m_haveMap = false; // it may have failed over
        if (!firstLoss)
            firstLoss = std::current_exception();
        down[n] = downText(n, e);
    };
    auto fault = [&](int n, const Error &e) {
        if (!firstOther)
            firstOther = std::current_exception();
        node(n).disconnect();
        down[n] = "ERR " + e.message().toUtf8();
    };
    for (const auto &[n, indices] : byNode) {
        std::vector<Command> batch;
        for (size_t i : indices)
            batch.push_back(commands[i]);
        try {
            onNode(n, [&](NodeConnection &c) {
                c.send(batch);
                return true;
            });
        } catch (const ConnectionError &e) {
            lose(n, e);
        } catch (const Error &e) {
            fault(n, e);
        }
    }
    for (const auto &[n, indices] : byNode) {
        for (size_t i : indices) {
            if (!down.count(n)) {
                try {
                    replies[i] = onNode(
                        n, [](NodeConnection &c) { return c.receive(); }, false); // owed
                    continue;
                } catch (const ConnectionError &e) {
                    lose(n, e);
                } catch (const Error &e) {
                    fault(n, e);
                }
            }
            replies[i] = Reply::error(down[n]);
        }
    }
    if (firstOther)
        std::rethrow_exception(firstOther);
    if (firstLoss && down.size() == byNode.size() && !clusterReachable())
        std::rethrow_exception(firstLoss);
    for (const auto &[n, indices] : byNode)
        for (size_t i : indices)
            if (redirection(replies[i]))
                replies[i] = settle(commands[i], replies[i]);
    // The commands that span nodes, each on its own once the others are read (nothing is
    // owed on any socket between them): a node out of reach answers DOWN in place, and only
    // a cluster lost altogether is thrown.
    for (size_t i : specials)
        replies[i] = command(commands[i]);
    return replies;
}

void ClusterRouter::send(const Command &command)
{
    int n = -1;
    try {
        // Routing fails too (no node serves the slot): the window sent so far goes with it.
        n = rereadMapAfterLoss([&] { return route(command); });
        onNode(n, [&](NodeConnection &c) {
            c.send(command);
            return true;
        });
    } catch (const ConnectionError &) {
        dropWindow();
        throw;
    }
    m_inFlight.push_back({n, command});
}

Reply ClusterRouter::receive()
{
    if (m_inFlight.empty())
        throw ClosedError(QStringLiteral("receiving: nothing was sent"));
    const InFlight f = m_inFlight.front();
    m_inFlight.pop_front();
    Reply r;
    try {
        r = onNode(
            f.node, [](NodeConnection &c) { return c.receive(); }, false); // owed
    } catch (const ConnectionError &) {
        // Callers take the whole window as lost (as on one server): every node's share goes.
        dropWindow();
        throw;
    }
    return redirection(r) ? settle(f.command, r) : r;
}

HostPort ClusterRouter::masterOf(int slot)
{
    ensureMap();
    const int n = m_map.owner(slot);
    return n < 0 ? HostPort{QString(), 0} : m_nodes[size_t(n)].address;
}

std::vector<ServerNode> ClusterRouter::nodes()
{
    std::vector<ServerNode> out;
    for (int m : masters()) {
        const HostPort &address = m_nodes[size_t(m)].address;
        out.push_back({address, QStringLiteral("master"), m_map.rangesOf(m), {}, {}, {}});
        for (const SlotMap::Replica &r : m_map.replicas())
            if (r.master == m)
                out.push_back({r.address, QStringLiteral("replica"), {}, address, {}, {}});
    }
    return out;
}

std::vector<std::vector<Reply>> ClusterRouter::onEachMaster(const std::vector<Command> &commands)
{
    return onEachMaster([&](size_t) { return commands; });
}

std::vector<std::vector<Reply>> ClusterRouter::onEachMaster(const std::function<std::vector<Command>(size_t)> &commandsFor)
{
    // A master that cannot be reached answers "DOWN ..." in place, so that the others are
    // still heard; only when none answers is it a lost connection.
    const std::vector<int> all = rereadMapAfterLoss([&] { return masters(); });
    std::vector<std::vector<Reply>> out;
    std::exception_ptr firstLoss;
    bool anyReached = false;
    for (size_t i = 0; i < all.size(); ++i) {
        const int m = all[i];
        const std::vector<Command> commands = commandsFor(i);
        if (commands.empty()) {
            out.emplace_back();
            continue;
        }
        try {
            out.push_back(onNode(m, [&](NodeConnection &c) { return c.pipeline(commands); }));
            anyReached = true;
        } catch (const ConnectionError &e) {
            m_haveMap = false; // it may have failed over
            if (!firstLoss)
                firstLoss = std::current_exception();
            out.push_back(std::vector<Reply>(commands.size(), Reply::error(downText(m, e))));
        }
    }
    if (!anyReached && firstLoss)
        std::rethrow_exception(firstLoss);
    return out;
}

} // namespace ratescope
