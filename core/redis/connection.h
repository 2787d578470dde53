// A connection to "the Redis" a URL names: one server, the master that sentinels name, or a
// whole cluster. Blocking; for use on one (worker) thread only.
#pragma once

#include "redis/connectionoptions.h"
#include "redis/servernode.h"
#include "redis/resp.h"

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace ratescope {

class ClusterRouter;
class NodeConnection;

// How the limiter scripts are called (docs/scripts.md): through the script cache (EVALSHA) or
// through the ratescope functions library (FCALL).
enum class ScriptCalls { Evalsha, Functions };

// Callers see one server. In a cluster, commands go to the node owning their key's slot
// (MOVED and ASK followed, scripts loaded on every master), pipelines split per node, SCAN
// walks every master behind one opaque cursor, DBSIZE and multi-key DEL/UNLINK/EXISTS add
// up across nodes. Through sentinels, a READONLY reply (we reached a demoted master) makes
// it ask the sentinels again and repeat that command once: the replica executed nothing.
//
// After any ConnectionError the failed command is never replayed, because it may already
// have executed (a limiter script may have counted the request); the next call reconnects.
// In a cluster, a node out of reach while others answer is not a lost connection: its
// commands get the error reply "DOWN <address>: why" (thrown as ReplyError by command()),
// equally never replayed; the slot map is read again for the next call.
class Connection {
public:
    explicit Connection(ConnectionOptions options);
    ~Connection();
    Connection(const Connection &) = delete;
    Connection &operator=(const Connection &) = delete;

    const ConnectionOptions &options() const { return m_options; }
    bool isConnected() const;

    // Connects now (and, for a cluster, reads the slot map). Throws ConnectionError
    // subclasses (AuthError for a rejected password) or ReplyError.
    void connect();
    void disconnect();

    // One command. An error reply is thrown as ReplyError.
    Reply command(const Command &args);
    // Sends every command, then reads exactly as many replies, in order. Error replies are
    // returned in place, not thrown.
    std::vector<Reply> pipeline(const std::vector<Command> &commands);

    // Read-ahead, for a command that knows what it will read (the CLI's check, peek, inspect):
    // sends these reads now, in one round trip (in the handshake's own when this connects
    // them), and keeps their replies. A later command(), pipeline() or onEachMaster() asking
    // exactly one of them gets its reply without a round trip, as if it had been sent then;
    // each reply answers once. A read whose reply is kept already (it went along with an
    // earlier request) is not sent again; the read-along goes with the rest. Sending anything
    // that is not a read (isReadCommand), and send(), drop the replies left: what they read
    // may change. Throws UsageError for a command that is not a read.
    void prefetch(const std::vector<Command> &reads);
    // Keeps a reply for a command as prefetch() would: for a read answered by another read
    // of the same round (a read-only script that asked several things at once).
    void keepPrefetched(Command command, Reply reply);
    // Takes the reply kept for exactly this command, if any.
    std::optional<Reply> takePrefetched(const Command &command);
    // Read-along: these reads go with the next request that goes to the server (command(),
    // pipeline() or prefetch() of reads), in its round trip, and their replies are kept as prefetch() keeps
    // them; no round trip of their own. For a command that knows what it will ask after a
    // round it must wait for (a decision's peek behind a key's state). A read whose reply is
    // kept already is not sent again: a copy is kept for it, as prefetch() does. A request that is not
    // a read, send(), connect() and disconnect() drop them. Throws UsageError for a command
    // that is not a read.
    void readAlong(const std::vector<Command> &reads);
    // Drops these commands' replies kept and their read-along not sent yet: for a caller on a
    // connection that lives on, so that nothing read for it answers a later read.
    void forget(const std::vector<Command> &reads);
    // Commands that never change data: what prefetch() takes, and what leaves its replies.
    static bool isReadCommand(const Command &command);

    // The reads a caller asked and their replies, in order (read ahead or over the network):
    // what a later rehearse() of the same work is given as `assumed`.
    using Transcript = std::vector<std::pair<Command, Reply>>;
    // While set, every read asked through command(), pipeline() and prefetch() is added to it
    // with its reply. nullptr stops it.
    void setTranscript(Transcript *transcript) { m_transcript = transcript; }
    // What `work` would ask the server, learnt without sending anything: it runs against
    // `assumed` (what it read last time, its transcript) in place of the server. A request
    // whose every command `assumed` answers gets those replies; the first one it does not
    // answer ends the rehearsal. Returns the commands of every request the rehearsal made,
    // that last one included, in order. Sent ahead as a read-along before the work runs for
    // real, they make its rounds one whenever what it reads has not changed (a command it then
    // asks differently goes in a round of its own, and the caller forgets the rest). Empty
    // when the work would send anything that is not a read, or use the connection otherwise
    // than by command(), pipeline() and prefetch() (send(), clusters' onEachMaster()). Leaves
    // the connection as it was: its read-ahead, read-along and script calls; nothing is sent.
    std::vector<Command> rehearse(const std::function<void()> &work, const Transcript &assumed);
    // How long the last request that went to the server waited for its replies (nanoseconds,
    // one server; 0 before any): a round trip, also for a caller whose reads went with another's.
    qint64 lastRoundNs() const { return m_lastRoundNs; }

    // For callers that keep a window of requests in flight (burst engine): queue commands
    // without waiting, then take replies one at a time, in order.
    void send(const std::vector<Command> &commands);
    void send(const Command &command);
    Reply receive();
    std::vector<Reply> receive(size_t count); // the next `count` replies, in order

    // The servers behind this connection, for status displays. Cluster: every master with
    // its slots, each followed by its replicas (from the slot map, no round trip). Otherwise
    // the one server connected to ("master (via sentinel)" or "standalone"); ServerInfo adds
    // replication details.
    using Node = ServerNode;
    std::vector<Node> nodes();
    // Cluster: a key's hash slot and the master serving it, from the slot map (no round trip
    // once the map is known). nullopt on one server.
    struct Placement {
        int slot = -1;
        HostPort master; // empty host: no master serves the slot
    };
    std::optional<Placement> placementOf(const QByteArray &key);
    // Cluster: reads the slot map again (masters may have failed over, replicas joined), so
    // that nodes() is current. Otherwise nothing to do.
    void refreshTopology();
    bool isCluster() const { return m_cluster != nullptr; }

    // Runs the same pipeline on every master of a cluster (in nodes() order) or on the one
    // server otherwise: for server-wide facts such as INFO. Error replies come back in place,
    // and so does a cluster master that cannot be reached: every reply "DOWN <address>: why"
    // (a ConnectionError only when no master answers).
    std::vector<std::vector<Reply>> onEachMaster(const std::vector<Command> &commands);
    // The same with a pipeline of its own for each master: commandsFor(i) for the i-th (nodes()
    // order); a master given no commands is not asked.
    std::vector<std::vector<Reply>> onEachMaster(const std::function<std::vector<Command>(size_t)> &commandsFor);

    // How limiter scripts go on this connection: unknown until LimiterScript::callsOn() has
    // asked the servers (once per connection); connect() and disconnect() forget it.
    std::optional<ScriptCalls> scriptCalls() const { return m_scriptCalls; }
    void setScriptCalls(std::optional<ScriptCalls> calls) { m_scriptCalls = calls; }

    // Sentinel: when no sentinel could be subscribed to for +switch-master, the next try is
    // kWatchRetryMs later on this clock (milliseconds, steady; tests set their own), however
    // many requests are made meanwhile.
    static constexpr int kWatchRetryMs = 5000;
    using Clock = std::function<qint64()>;
    void setClock(Clock clock) { m_clock = std::move(clock); }

private:
    // Sentinel: a subscription to +switch-master, read without waiting before each request,
    // so a failover is followed before anything goes to the demoted master. Replies owed by
    // the old master (a window of send()s) are read at the switch and handed out by
    // receive() first, in order.
    void followFailover();
    bool viaSentinel() const { return m_options.transport == ConnectionOptions::Transport::Sentinel; }

    std::vector<Reply> pipelineNow(const std::vector<Command> &commands);
    Reply commandNow(const Command &args);
    // Sends `ask` with the read-along in one round; keeps the read-along's replies (and a copy
    // of the reply of a command both ask). Returns ask's replies.
    std::vector<Reply> askWithAlong(std::vector<Command> ask);
    // Rehearsing: the network's stand-in (the assumed replies), and what it was asked.
    struct Rehearsal;
    std::vector<Reply> rehearsed(const std::vector<Command> &commands);
    void refuseInRehearsal() const; // a use rehearse() cannot stand in for
    void record(const Command &command, const Reply &reply);
    // Before sending `commands`: drops the read-ahead unless they are all reads.
    void keepPrefetchedFor(const std::vector<Command> &commands);

    ConnectionOptions m_options;
    std::vector<std::pair<Command, Reply>> m_prefetched; // read ahead, not yet asked for
    std::vector<Command> m_along;                        // to send with the next request (readAlong)
    std::unique_ptr<NodeConnection> m_node;
    std::unique_ptr<ClusterRouter> m_cluster;
    std::unique_ptr<NodeConnection> m_switchWatch;
    qint64 m_watchRetryAtMs = 0; // on m_clock: no new subscription attempt before
    std::deque<Reply> m_owed;    // read from a demoted master at the switch, not yet received
    Clock m_clock;
    std::optional<ScriptCalls> m_scriptCalls;
    Transcript *m_transcript = nullptr;
    Rehearsal *m_rehearsal = nullptr;
    qint64 m_lastRoundNs = 0;
};

} // namespace ratescope
