// A TCP proxy in front of one redis-server that delays each direction by a fixed time and
// counts, per connection, how often the client had to wait for the server: a slow link to
// test and measure on, without leaving loopback. For QtTest suites (CLI, core, console) and
// the benchmarks alike: it runs on a thread of its own, so nothing it does waits on the
// caller's event loop, and no call into it blocks for more than a moment.
//
// Counting (exact, so tests may assert the numbers):
//   - The connection itself is round trip 1: on a real link the client waits one round trip
//     for TCP's handshake before it can send anything. The proxy holds what the client sends
//     first until 3 x delay after it accepted the connection, so that the first reply comes
//     back when it would on a real link (one round trip to connect, one for the request).
//   - The proxy reads the client's commands and the server's replies as RESP. A command sent
//     while every reply the client has asked for so far has been delivered to it (nothing
//     outstanding: it has to wait for the server once more) begins a new round trip. Commands
//     sent while replies are still on their way ride in the round trip under way (a pipeline
//     sent in several writes, or a request kept in flight while the last reply is read).
//     A reply is delivered when the proxy hands it to the client, after its delay; the
//     client cannot act on it before. Replies nobody asked for (pub/sub messages, the
//     second channel of a SUBSCRIBE) never make "outstanding" negative.
//   - A stream that is not RESP (TLS) is counted by bytes instead: a client write burst
//     begins a new round trip when server bytes were delivered since the previous one.
//   - clientWrites: the bursts of bytes the proxy read from the client (TCP may merge writes
//     made close together); bytes: as they passed each way.
// So a client that sends the handshake and its first reads in one write, waits, then sends
// one script call and waits, made 3 round trips: the connection and two.
#pragma once

#include "redis/connectionoptions.h"

#include <QByteArrayList>
#include <QString>

#include <memory>
#include <vector>

namespace ratescope::test {

struct LinkStats {
    int roundTrips = 0;        // the connection's own included (see above)
    int clientWrites = 0;      // bursts read from the client
    qint64 commands = 0;       // commands the client sent (RESP arrays)
    qint64 replies = 0;        // replies delivered to the client
    qint64 bytesToServer = 0;  // forwarded client -> server
    qint64 bytesToClient = 0;  // delivered server -> client
    bool open = true;          // the client's side is still connected
    // Each round trip after the connection's: the names of the commands sent in it, space
    // separated (the first 40 round trips, 20 names each): what a failing test prints.
    QByteArrayList rounds;
    LinkStats &operator+=(const LinkStats &o);
};

class DelayProxy {
public:
    // Listens on a free port of 127.0.0.1 and forwards every connection to serverHost:serverPort,
    // each direction delayed by delayMs (0: none, forwarded as it comes).
    explicit DelayProxy(quint16 serverPort, int delayMs = 0, const QString &serverHost = QStringLiteral("127.0.0.1"));
    ~DelayProxy(); // closes every connection, then stops its thread
    DelayProxy(const DelayProxy &) = delete;
    DelayProxy &operator=(const DelayProxy &) = delete;

    quint16 port() const;
    // `server` with its address replaced by the proxy's (TCP only): credentials, db and
    // timeouts kept.
    ConnectionOptions options(ConnectionOptions server) const;
    // The same as a URL, for the CLI (password revealed: test servers' own).
    QString url(const ConnectionOptions &server) const;

    int delayMs() const;
    // Applies to bytes read from now on (what is queued keeps its time).
    void setDelayMs(int delayMs);

    // Every connection accepted since construction or the last reset(), in accept order.
    std::vector<LinkStats> connections() const;
    LinkStats total() const; // their sum (open: any is)
    // Forgets the connections counted so far (open ones keep counting into fresh entries).
    void reset();
    // Waits up to timeoutMs until nothing is queued in either direction of any connection and
    // `connections` connections are closed by their clients: counts are final then.
    bool waitQuiet(int timeoutMs, int closedConnections = -1) const;
    // Waits up to timeoutMs until `count` connections were accepted since the last reset().
    bool waitConnections(int count, int timeoutMs) const;

private:
    class Worker;
    std::unique_ptr<Worker> m_worker;
};

} // namespace ratescope::test
