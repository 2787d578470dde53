// A blocking connection to one Redis server (one socket), for use on one thread only.
#pragma once

#include "redis/connectionoptions.h"
#include "redis/resp.h"

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

class QIODevice;

namespace ratescope {

// Connects lazily (for a sentinel URL: to the master the sentinels name), authenticates,
// selects the database and names itself. Every call
// waits at most commandTimeoutMs for progress. After any ConnectionError the socket is
// dropped and the next call reconnects; the failed command is never replayed, because it
// may already have executed (a limiter script may have counted the request).
//
// The socket belongs to the thread that first uses the connection; never share one
// Connection between threads. Only options.abort may be raised from another thread: host
// name lookups, TCP and unix socket connects, TLS handshakes and every reply wait then end
// within kAbortSliceMs. With a live abort signal a host name lookup also counts against
// connectTimeoutMs (it runs on a thread of its own, left to finish alone when given up).
class NodeConnection {
public:
    static constexpr int kAbortSliceMs = 50;

    explicit NodeConnection(ConnectionOptions options);
    ~NodeConnection();
    NodeConnection(const NodeConnection &) = delete;
    NodeConnection &operator=(const NodeConnection &) = delete;

    const ConnectionOptions &options() const { return m_options; }
    bool isConnected() const;

    // Opens the socket and runs the handshake now. Throws ConnectionError subclasses
    // (AuthError for a rejected password) or ReplyError (e.g. SELECT of a missing db).
    void connect();
    // The same, with reads sent in the handshake's own write (one round trip for both): their
    // replies, in order, errors in place. Only for commands that change nothing: when the
    // handshake is refused (AUTH, SELECT) they may already have run, as another user or on
    // database 0, and their replies are dropped with the exception. roundNs, when given, is set
    // to the time from that write to the last reply: the round trip, without the socket's own
    // opening (TCP's and TLS's handshakes).
    std::vector<Reply> connectWith(const std::vector<Command> &reads, qint64 *roundNs = nullptr);
    void disconnect();

    // One command. An error reply is thrown as ReplyError.
    Reply command(const Command &args);
    // Sends every command, then reads exactly as many replies, in order. Error replies
    // are returned in place, not thrown, so one bad command does not hide the others.
    std::vector<Reply> pipeline(const std::vector<Command> &commands);

    // Lower level, for callers that keep a window of requests in flight (burst engine, key
    // scanner): queue commands without waiting, then take replies one at a time. A command()
    // or pipeline() meanwhile first reads the replies still on their way and keeps them:
    // receive() hands them out first, in order, so a window is never answered out of turn.
    void send(const std::vector<Command> &commands);
    void send(const Command &command);
    Reply receive();
    // A reply that has already arrived, without waiting (pub/sub messages).
    std::optional<Reply> tryReceive();

    // Replies sent for and not yet received (a socket in use by a window of requests).
    qint64 outstanding() const { return m_outstanding; }

    // Where it is connected now (for sentinel URLs: the master found).
    HostPort peer() const { return m_peer; }

private:
    struct Socket;

    HostPort resolveSentinelMaster();

    void ensureConnected();
    void openSocket();
    std::vector<Command> handshakeCommands() const; // AUTH, SELECT, CLIENT SETNAME as the options ask
    // Throws for a refused handshake command (AuthError for AUTH); a refused SETNAME is fine.
    void checkHandshakeReply(const Command &sent, size_t index, const Reply &reply) const;
    void checkMasterRole(const Reply &role) const; // sentinel: ROLE must say master
    void writeRaw(const QByteArray &bytes);
    void writeBatch(const std::vector<Command> &commands); // one write, no reconnect
    Reply readReply();      // the next reply from the socket
    void holdOutstanding(); // the replies on their way read into m_held
    // Waits up to commandTimeoutMs for bytes to read: false on a timeout or a socket error.
    // With a live abort signal, in short slices; once it is raised, throws IoError.
    bool waitReadable(QIODevice *device);
    [[noreturn]] void aborted(const QString &context);
    [[noreturn]] void fail(const QString &context);

    ConnectionOptions m_options;
    std::unique_ptr<Socket> m_socket;
    RespParser m_parser;
    HostPort m_peer;
    qint64 m_outstanding = 0; // replies sent for and not yet received
    std::deque<Reply> m_held; // a window's replies, read to get to a command()'s own
};

// How connections whose options carry a live abort signal look host names up: numeric
// addresses for a name, or an error text. Tests replace it to hold a lookup (an empty
// function restores the system resolver, getaddrinfo). Called on a thread of its own.
using HostLookup = std::function<std::vector<std::string>(const std::string &host, std::string *error)>;
void setHostLookup(HostLookup lookup);

} // namespace ratescope
