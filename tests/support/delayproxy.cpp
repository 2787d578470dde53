#include "delayproxy.h"

#include "base/errors.h"
#include "redis/resp.h"

#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QHostAddress>
#include <QMutex>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QThread>
#include <QTimer>
#include <QWaitCondition>

#include <atomic>
#include <deque>
#include <stdexcept>

namespace ratescope::test {

LinkStats &LinkStats::operator+=(const LinkStats &o)
{
    roundTrips += o.roundTrips;
    clientWrites += o.clientWrites;
    commands += o.commands;
    replies += o.replies;
    bytesToServer += o.bytesToServer;
    bytesToClient += o.bytesToClient;
    open = open || o.open;
    return *this;
}

namespace {

// What the proxy's thread and the callers share, under one mutex.
struct Shared {
    QMutex mutex;
    QWaitCondition changed;             // any count, queue or connection changed
    std::vector<std::shared_ptr<LinkStats>> stats; // since the last reset, in accept order
    qint64 queued = 0;                  // chunks waiting in either direction of any connection
    std::atomic<int> delayMs{0};
    QElapsedTimer clock;                // started once: the proxy's milliseconds
};

// One client connection and its connection to the server.
class Link : public QObject {
public:
    Link(QTcpSocket *client, const QString &host, quint16 port, Shared &shared)
        : m_shared(shared)
        , m_client(client)
        , m_server(new QTcpSocket(this))
    {
        m_client->setParent(this);
        m_acceptedMs = m_shared.clock.elapsed();
        {
            QMutexLocker lock(&m_shared.mutex);
            m_stats = std::make_shared<LinkStats>();
            m_stats->roundTrips = 1; // the connection's own
            m_shared.stats.push_back(m_stats);
            m_shared.changed.wakeAll();
        }
        for (QTimer *t : {&m_toServerTimer, &m_toClientTimer}) {
            t->setSingleShot(true);
            t->setTimerType(Qt::PreciseTimer);
        }
        connect(&m_toServerTimer, &QTimer::timeout, this, [this] { pump(m_toServer, m_toServerTimer, true); });
        connect(&m_toClientTimer, &QTimer::timeout, this, [this] { pump(m_toClient, m_toClientTimer, false); });
        m_client->setSocketOption(QAbstractSocket::LowDelayOption, 1);
        m_server->setSocketOption(QAbstractSocket::LowDelayOption, 1);
        connect(m_client, &QTcpSocket::readyRead, this, &Link::fromClient);
        connect(m_server, &QTcpSocket::readyRead, this, &Link::fromServer);
        connect(m_client, &QTcpSocket::disconnected, this, [this] { closed(true); });
        connect(m_server, &QTcpSocket::disconnected, this, [this] { closed(false); });
        connect(m_server, &QTcpSocket::errorOccurred, this, [this](QAbstractSocket::SocketError) {
            if (m_server->state() != QAbstractSocket::ConnectedState)
                closed(false);
        });
        m_server->connectToHost(host, port);
        if (m_client->bytesAvailable() > 0)
            fromClient();
    }

    ~Link() override
    {
        // No signal of a socket closing while it is destroyed reaches this half-destroyed link.
        m_client->disconnect(this);
        m_server->disconnect(this);
        delete m_client;
        delete m_server;
        QMutexLocker lock(&m_shared.mutex);
        m_shared.queued -= qint64(m_toServer.size() + m_toClient.size());
        m_stats->open = false;
        m_shared.changed.wakeAll();
    }

    // After a reset: counts from now on go to a fresh entry.
    void restartStats(std::shared_ptr<LinkStats> fresh) { m_stats = std::move(fresh); }
    bool clientOpen() const { return !m_clientGone; }

private:
    struct Chunk {
        qint64 dueMs = 0;
        QByteArray bytes;
        bool close = false; // the sender closed its side: close the other one's
    };

    qint64 nowMs() const { return m_shared.clock.elapsed(); }

    void enqueue(std::deque<Chunk> &queue, QTimer &timer, bool toServer, QByteArray bytes, bool close)
    {
        const qint64 delay = m_shared.delayMs.load();
        qint64 due = nowMs() + delay;
        if (toServer && delay > 0)
            due = std::max(due, m_acceptedMs + 3 * delay); // TCP's handshake first, as on a real link
        if (!queue.empty())
            due = std::max(due, queue.back().dueMs); // in order
        queue.push_back({due, std::move(bytes), close});
        {
            QMutexLocker lock(&m_shared.mutex);
            ++m_shared.queued;
        }
        pump(queue, timer, toServer);
    }

    void pump(std::deque<Chunk> &queue, QTimer &timer, bool toServer)
    {
        const qint64 now = nowMs();
        while (!queue.empty() && queue.front().dueMs <= now) {
            Chunk c = std::move(queue.front());
            queue.pop_front();
            deliver(c, toServer);
            QMutexLocker lock(&m_shared.mutex);
            --m_shared.queued;
            m_shared.changed.wakeAll();
        }
        if (!queue.empty())
            timer.start(int(std::max<qint64>(0, queue.front().dueMs - now)));
        else
            maybeFinish();
    }

    void deliver(const Chunk &c, bool toServer)
    {
        QTcpSocket *to = toServer ? m_server : m_client;
        if (c.close) {
            if (to->state() != QAbstractSocket::UnconnectedState)
                to->disconnectFromHost();
            return;
        }
        if (to->state() == QAbstractSocket::UnconnectedState)
            return; // the other side is gone: nothing to deliver to
        to->write(c.bytes);
        QMutexLocker lock(&m_shared.mutex);
        if (toServer) {
            m_stats->bytesToServer += c.bytes.size();
            return;
        }
        m_stats->bytesToClient += c.bytes.size();
        if (!m_resp) {
            m_deliveredSinceWrite = true;
            return;
        }
        try {
            m_replies.feed(c.bytes);
            while (m_replies.next()) {
                ++m_stats->replies;
                if (m_outstanding > 0)
                    --m_outstanding;
            }
        } catch (const Error &) {
            m_resp = false; // not RESP after all: counted by bytes from now on
            m_deliveredSinceWrite = true;
        }
    }

    void fromClient()
    {
        QByteArray data = m_client->readAll();
        if (data.isEmpty())
            return;
        {
            QMutexLocker lock(&m_shared.mutex);
            ++m_stats->clientWrites;
            if (m_resp) {
                try {
                    m_commands.feed(data);
                    while (const auto command = m_commands.next()) {
                        ++m_stats->commands;
                        if (m_outstanding == 0) {
                            ++m_stats->roundTrips; // it has to wait for the server once more
                            if (m_stats->rounds.size() < 40)
                                m_stats->rounds.append(QByteArray());
                            m_named = 0;
                        }
                        if (m_named++ < 200 && !m_stats->rounds.isEmpty() && m_stats->rounds.size() < 40 && command->size() > 0) {
                            QByteArray &round = m_stats->rounds.last();
                            round += (round.isEmpty() ? "" : " ") + (*command)[0].bytes().toUpper().left(20);
                        }
                        ++m_outstanding;
                    }
                } catch (const Error &) {
                    m_resp = false;
                }
            }
            if (!m_resp) {
                if (m_deliveredSinceWrite)
                    ++m_stats->roundTrips;
                m_deliveredSinceWrite = false;
            }
            m_shared.changed.wakeAll();
        }
        enqueue(m_toServer, m_toServerTimer, true, std::move(data), false);
    }

    void fromServer()
    {
        QByteArray data = m_server->readAll();
        if (!data.isEmpty())
            enqueue(m_toClient, m_toClientTimer, false, std::move(data), false);
    }

    void closed(bool client)
    {
        bool &gone = client ? m_clientGone : m_serverGone;
        if (gone)
            return;
        gone = true;
        if (client) {
            fromClient(); // what it sent before closing
            QMutexLocker lock(&m_shared.mutex);
            m_stats->open = false;
            m_shared.changed.wakeAll();
        } else {
            fromServer();
        }
        if (client)
            enqueue(m_toServer, m_toServerTimer, true, {}, true);
        else
            enqueue(m_toClient, m_toClientTimer, false, {}, true);
    }

    void maybeFinish()
    {
        if (m_clientGone && m_serverGone && m_toServer.empty() && m_toClient.empty())
            deleteLater();
    }

    Shared &m_shared;
    QTcpSocket *m_client;
    QTcpSocket *m_server;
    std::shared_ptr<LinkStats> m_stats; // written under m_shared.mutex
    std::deque<Chunk> m_toServer, m_toClient;
    QTimer m_toServerTimer, m_toClientTimer;
    RespParser m_commands, m_replies;
    bool m_resp = true;
    bool m_deliveredSinceWrite = true; // for streams that are not RESP
    qint64 m_outstanding = 0;          // replies asked for and not yet delivered
    int m_named = 0;                   // commands named in the round under way
    qint64 m_acceptedMs = 0;
    bool m_clientGone = false, m_serverGone = false;
};

// Lives on the proxy's thread: the listening socket and the links.
class Engine : public QObject {
public:
    Engine(Shared &shared, QString host, quint16 port)
        : m_shared(shared)
        , m_host(std::move(host))
        , m_port(port)
    {
    }

    quint16 listen()
    {
        m_server = new QTcpServer(this);
        if (!m_server->listen(QHostAddress::LocalHost, 0))
            return 0;
        connect(m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *s = m_server->nextPendingConnection())
                m_links.push_back(new Link(s, m_host, m_port, m_shared));
        });
        return m_server->serverPort();
    }

    // Under m_shared.mutex (the caller's): open links count into fresh entries.
    void restartStats()
    {
        std::vector<std::shared_ptr<LinkStats>> fresh;
        for (const QPointer<Link> &l : m_links)
            if (l && l->clientOpen()) {
                auto s = std::make_shared<LinkStats>();
                l->restartStats(s);
                fresh.push_back(std::move(s));
            }
        m_shared.stats = std::move(fresh);
    }

    void stop()
    {
        for (const QPointer<Link> &l : m_links)
            delete l.data();
        m_links.clear();
        delete m_server;
        m_server = nullptr;
    }

private:
    Shared &m_shared;
    QString m_host;
    quint16 m_port;
    QTcpServer *m_server = nullptr;
    std::vector<QPointer<Link>> m_links;
};

} // namespace

class DelayProxy::Worker {
public:
    Shared shared;
    QThread thread;
    Engine *engine = nullptr;
    quint16 port = 0;
};

DelayProxy::DelayProxy(quint16 serverPort, int delayMs, const QString &serverHost)
    : m_worker(std::make_unique<Worker>())
{
    m_worker->shared.clock.start();
    m_worker->shared.delayMs = std::max(0, delayMs);
    m_worker->thread.setObjectName(QStringLiteral("DelayProxy"));
    m_worker->engine = new Engine(m_worker->shared, serverHost, serverPort);
    m_worker->engine->moveToThread(&m_worker->thread);
    QObject::connect(&m_worker->thread, &QThread::finished, m_worker->engine, &QObject::deleteLater);
    m_worker->thread.start();
    QMetaObject::invokeMethod(
        m_worker->engine, [this] { m_worker->port = m_worker->engine->listen(); }, Qt::BlockingQueuedConnection);
    if (m_worker->port == 0)
        throw std::runtime_error("DelayProxy: cannot listen on 127.0.0.1");
}

DelayProxy::~DelayProxy()
{
    QMetaObject::invokeMethod(
        m_worker->engine, [this] { m_worker->engine->stop(); }, Qt::BlockingQueuedConnection);
    m_worker->thread.quit(); // the engine is deleted on its thread as it finishes
    m_worker->thread.wait();
}

quint16 DelayProxy::port() const
{
    return m_worker->port;
}

ConnectionOptions DelayProxy::options(ConnectionOptions server) const
{
    server.transport = ConnectionOptions::Transport::Tcp;
    server.address = {QStringLiteral("127.0.0.1"), port()};
    return server;
}

QString DelayProxy::url(const ConnectionOptions &server) const
{
    return options(server).toUrl(true);
}

int DelayProxy::delayMs() const
{
    return m_worker->shared.delayMs.load();
}

void DelayProxy::setDelayMs(int delayMs)
{
    m_worker->shared.delayMs = std::max(0, delayMs);
}

std::vector<LinkStats> DelayProxy::connections() const
{
    QMutexLocker lock(&m_worker->shared.mutex);
    std::vector<LinkStats> out;
    for (const auto &s : m_worker->shared.stats)
        out.push_back(*s);
    return out;
}

LinkStats DelayProxy::total() const
{
    LinkStats sum;
    sum.open = false;
    for (const LinkStats &s : connections())
        sum += s;
    return sum;
}

void DelayProxy::reset()
{
    // On the proxy's thread, which owns the links; the stats are swapped under the mutex.
    QMetaObject::invokeMethod(
        m_worker->engine,
        [this] {
            QMutexLocker lock(&m_worker->shared.mutex);
            m_worker->engine->restartStats();
        },
        Qt::BlockingQueuedConnection);
}

bool DelayProxy::waitConnections(int count, int timeoutMs) const
{
    Shared &s = m_worker->shared;
    const QDeadlineTimer deadline(timeoutMs);
    QMutexLocker lock(&s.mutex);
    while (int(s.stats.size()) < count) {
        if (deadline.hasExpired())
            return false;
        s.changed.wait(&s.mutex, deadline);
    }
    return true;
}

bool DelayProxy::waitQuiet(int timeoutMs, int closedConnections) const
{
    Shared &s = m_worker->shared;
    const QDeadlineTimer deadline(timeoutMs);
    QMutexLocker lock(&s.mutex);
    for (;;) {
        int closed = 0;
        for (const auto &st : s.stats)
            closed += st->open ? 0 : 1;
        if (s.queued == 0 && (closedConnections < 0 || closed >= closedConnections))
            return true;
        if (deadline.hasExpired())
            return false;
        s.changed.wait(&s.mutex, deadline);
    }
}

} // namespace ratescope::test
