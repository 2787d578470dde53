// Redis Cluster routing: which node owns a key, and following the cluster's redirections.
#pragma once

#include "connection.h"
#include "errors.h"

#include <array>
#include <deque>
#include <optional>

namespace ratescope {

class NodeConnection;

// CRC16 (XMODEM) of the key's hash tag ({...}) or whole key, modulo 16384: the slot.
int keySlot(const QByteArray &key);
// The key a command is routed by; nullopt for commands without one (PING, INFO, SCAN, ...).
std::optional<QByteArray> routingKey(const Command &command);

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
    std::vector<Connection::Node> nodes();
    HostPort masterOf(int slot); // empty host when no master serves it
    std::vector<std::vector<Reply>> onEachMaster(const std::vector<Command> &commands);
    void refresh(); // reads the slot map from a known node or a seed

private:
    struct Node {
        HostPort address;
        std::unique_ptr<NodeConnection> connection;
    };
    struct Replica {
        HostPort address;
        int master; // index into m_nodes
        bool operator==(const Replica &) const = default;
    };
    struct InFlight {
        int node;
        Command command;
    };

    // A node that cannot be reached may have failed over: the slot map is read again on the
    // next call. The failed call itself is not repeated (it may have counted).
    template <typename F>
    auto rereadMapAfterLoss(F &&f)
    {
        try {
            return f();
        } catch (const ConnectionError &) {
            m_haveMap = false;
            throw;
        }
    }

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
    std::array<int, 16384> m_slots{};
    std::vector<Replica> m_replicas;
    bool m_haveMap = false;
    std::deque<InFlight> m_inFlight;
};

} // namespace ratescope
