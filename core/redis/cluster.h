// Redis Cluster routing: which node owns a key, and following the cluster's redirections.
#pragma once

#include "redis/connectionoptions.h"
#include "redis/resp.h"
#include "redis/servernode.h"
#include "base/errors.h"

#include <array>
#include <deque>
#include <functional>
#include <optional>

namespace ratescope {

class NodeConnection;

// CRC16 (XMODEM) of the key's hash tag ({...}) or whole key, modulo 16384: the slot.
int keySlot(const QByteArray &key);
// The key a command is routed by; nullopt for commands without one (PING, INFO, SCAN, ...).
std::optional<QByteArray> routingKey(const Command &command);

// One reading of a cluster's slot map (CLUSTER SLOTS): the node serving each of the 16384
// slots, as an index into the router's nodes, and the replicas announced with them.
class SlotMap {
public:
    static constexpr int kSlots = 16384;
    struct Replica {
        HostPort address;
        int master; // node index
        bool operator==(const Replica &) const = default;
    };

    SlotMap() { m_owner.fill(-1); }
    // Reads the CLUSTER SLOTS reply of the node at `asked`; nodeOf(address) gives a node's
    // index (the router adds those it does not know yet). A master that does not announce
    // its address is `asked` itself; a replica that does not is left out rather than guessed.
    static SlotMap fromReply(const Reply &reply, const HostPort &asked, const std::function<int(const HostPort &)> &nodeOf);

    bool servesAny() const;
    int owner(int slot) const { return slot >= 0 && slot < kSlots ? m_owner[size_t(slot)] : -1; }
    std::vector<int> owners() const;  // each node serving slots, once, in slot order
    QString rangesOf(int node) const; // "0-5460", "0-99,200"
    const std::vector<Replica> &replicas() const { return m_replicas; }

private:
    std::array<int, kSlots> m_owner;
    std::vector<Replica> m_replicas;
};

class ClusterRouter {
public:
    explicit ClusterRouter(ConnectionOptions options);
    ~ClusterRouter();

    void connect(); // reads the slot map from a seed or a known node
    void disconnect();
    bool isConnected() const;

    // Error replies are returned, not thrown (the facade decides).
    Reply command(const Command &command);
    std::vector<Reply> pipeline(const std::vector<Command> &commands);
    void send(const Command &command);
    Reply receive();
    std::vector<ServerNode> nodes();
    HostPort masterOf(int slot); // empty host when no master serves it
    std::vector<std::vector<Reply>> onEachMaster(const std::vector<Command> &commands);
    std::vector<std::vector<Reply>> onEachMaster(const std::function<std::vector<Command>(size_t)> &commandsFor);
    void refresh(); // reads the slot map from a known node or a seed

    // A node that timed out or could not be reached is not asked again for a while: its
    // commands answer "DOWN <address>: not asked for another N ms: <why>" at once instead of
    // each waiting for a timeout. The pause starts at kBackoffFirstMs and doubles with each
    // failure in a row up to kBackoffMaxMs; an answer ends it. Replies already owed are read
    // whatever the pause; a slot map is read from the other nodes meanwhile.
    static constexpr int kBackoffFirstMs = 500;
    static constexpr int kBackoffMaxMs = 8000;
    // The clock the pauses are measured on, in milliseconds (steady; tests set their own).
    using Clock = std::function<qint64()>;
    void setClock(Clock clock) { m_clock = std::move(clock); }

private:
    struct Node {
        HostPort address;
        std::unique_ptr<NodeConnection> connection;
        int failures = 0;         // timeouts and connect failures in a row
        qint64 pausedUntilMs = 0; // on the router's clock, while failures > 0
        QString problem;          // the last failure, for the fail-fast replies
        bool paused(qint64 nowMs) const { return failures > 0 && nowMs < pausedUntilMs; }
    };
    struct InFlight {
        int node;
        Command command;
    };

    // A node that cannot be reached may have failed over: the slot map is read again on the
    // next call. The failed call itself is not repeated (it may have counted).
    template <typename F> auto rereadMapAfterLoss(F &&f)
    {
        try {
            return f();
        } catch (const ConnectionError &) {
            m_haveMap = false;
            throw;
        }
    }

    // Runs f(NodeConnection &) on a node, noting a timeout or connect failure (the pause
    // grows) or an answer (the pause ends). gate: while the node is paused, fail at once with
    // IoError instead (never for replies already owed).
    template <typename F> auto onNode(int index, F &&f, bool gate = true)
    {
        if (gate)
            checkPause(index);
        try {
            auto result = f(node(index));
            noteAnswer(index);
            return result;
        } catch (const ConnectionError &e) {
            noteLoss(index, e);
            throw;
        }
    }
    void checkPause(int index) const;
    void noteLoss(int index, const ConnectionError &e);
    void noteAnswer(int index);

    void ensureMap();
    int nodeIndex(const HostPort &address);
    NodeConnection &node(int index);
    // After a node of the send()/receive() window is lost: every in-flight command counts as
    // lost, and the sockets that still carry their replies are closed.
    void dropWindow();
    // Some node answers CLUSTER SLOTS (the map is read again, too).
    bool clusterReachable();
    // The error reply standing for a node out of reach: "DOWN <address>: why".
    QByteArray downText(int index, const ConnectionError &e) const;
    std::vector<int> masters();
    int route(const Command &command);
    // Follows MOVED (refreshing the map) and ASK; both mean the command did not run.
    Reply settle(const Command &command, Reply reply);
    Reply runOn(int nodeIndex, const Command &command);
    std::optional<Reply> special(const Command &command);
    Reply scan(const Command &command);
    std::vector<Reply> pipelineOnNodes(const std::vector<Command> &commands);

    ConnectionOptions m_options;
    std::vector<Node> m_nodes;
    SlotMap m_map;
    bool m_haveMap = false; // m_map is current (false after a node was lost: read it again)
    std::deque<InFlight> m_inFlight;
    Clock m_clock;
};

} // namespace ratescope
