#include "redis/nodeconnection.h"

#include "base/errors.h"

#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QHostAddress>
#include <QLocalSocket>
#include <QSslConfiguration>
#include <QSslKey>
#include <QSslSocket>
#include <QTcpSocket>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ratescope {

// The one socket of a connection: TCP, TLS or unix, behind the common QIODevice.
struct NodeConnection::Socket {
    std::unique_ptr<QIODevice> device;
    QAbstractSocket *tcp = nullptr; // set for TCP and TLS
    QLocalSocket *local = nullptr;  // set for unix sockets

    bool isConnected() const
    {
        if (tcp)
            return tcp->state() == QAbstractSocket::ConnectedState;
        return local && local->state() == QLocalSocket::ConnectedState;
    }
    bool timedOut() const
    {
        if (tcp)
            return tcp->error() == QAbstractSocket::SocketTimeoutError;
        return local && local->error() == QLocalSocket::SocketTimeoutError;
    }
    bool peerClosed() const
    {
        if (tcp)
            return tcp->error() == QAbstractSocket::RemoteHostClosedError;
        return local && local->error() == QLocalSocket::PeerClosedError;
    }
    void flush()
    {
        if (tcp)
            tcp->flush();
        else if (local)
            local->flush();
    }
};

NodeConnection::NodeConnection(ConnectionOptions options)
    : m_options(std::move(options))
{
}

NodeConnection::~NodeConnection() = default;

bool NodeConnection::isConnected() const
{
    return m_socket && m_socket->isConnected();
}

void NodeConnection::disconnect()
{
    if (m_socket && m_socket->tcp)
        m_socket->tcp->abort();
    else if (m_socket && m_socket->local)
        m_socket->local->abort();
    m_socket.reset();
    m_parser.reset();
    m_outstanding = 0;
    m_held.clear();
}

void NodeConnection::ensureConnected()
{
    if (m_socket && m_outstanding > 0)
        return; // replies are on their way: bytes arriving now are theirs
    if (m_socket) {
        // Redis sends nothing unasked, so pending bytes or EOF before we send, with no reply
        // outstanding, mean the server dropped us (timeout, CLIENT KILL, restart).
        // Reconnecting now is safe: nothing of the next command has been sent yet.
        QIODevice *dev = m_socket->device.get();
        if (dev->bytesAvailable() == 0 && m_socket->isConnected())
            dev->waitForReadyRead(0);
        if (m_socket->isConnected() && dev->bytesAvailable() == 0 && m_parser.idle())
            return;
    }
    connect();
}

void NodeConnection::connect()
{
    connectWith({});
}

std::vector<Reply> NodeConnection::connectWith(const std::vector<Command> &reads, qint64 *roundNs)
{
    disconnect();
    openSocket();
    try {
        // One write: the handshake, the master check (sentinel) and the caller's reads; then
        // their replies in order. A refused handshake is thrown before any read is looked at.
        std::vector<Command> all = handshakeCommands();
        const size_t setup = all.size();
        const bool checkRole = m_options.transport == ConnectionOptions::Transport::Sentinel;
        if (checkRole)
            all.push_back({"ROLE"});
        all.insert(all.end(), reads.begin(), reads.end());
        std::vector<Reply> replies;
        if (all.empty())
            return replies;
        QElapsedTimer round;
        round.start();
        writeBatch(all); // on the socket just opened
        for (size_t i = 0; i < setup; ++i)
            checkHandshakeReply(all[i], i, receive());
        if (checkRole)
            checkMasterRole(receive());
        replies.reserve(reads.size());
        for (size_t i = 0; i < reads.size(); ++i)
            replies.push_back(receive());
        if (roundNs)
            *roundNs = round.nsecsElapsed();
        return replies;
    } catch (...) {
        disconnect();
        throw;
    }
}

namespace {

QByteArray readPem(const QString &path, const char *what)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        throw IoError(QStringLiteral("cannot read TLS %1 file '%2': %3").arg(QLatin1String(what), path, f.errorString()));
    return f.readAll();
}

QSslConfiguration tlsConfiguration(const TlsOptions &tls)
{
    QSslConfiguration config = QSslConfiguration::defaultConfiguration();
    if (!tls.caFile.isEmpty()) {
        const auto cas = QSslCertificate::fromData(readPem(tls.caFile, "CA"), QSsl::Pem);
        if (cas.isEmpty())
            throw IoError(QStringLiteral("no PEM certificate found in CA file '%1'").arg(tls.caFile));
        config.setCaCertificates(cas);
    }
    if (!tls.certFile.isEmpty()) {
        const auto certs = QSslCertificate::fromData(readPem(tls.certFile, "certificate"), QSsl::Pem);
        if (certs.isEmpty())
            throw IoError(QStringLiteral("no PEM certificate found in '%1'").arg(tls.certFile));
        config.setLocalCertificateChain(certs);
        const QByteArray keyPem = readPem(tls.keyFile, "key");
        QSslKey key(keyPem, QSsl::Rsa, QSsl::Pem);
        if (key.isNull())
            key = QSslKey(keyPem, QSsl::Ec, QSsl::Pem);
        if (key.isNull())
            throw IoError(QStringLiteral("cannot load private key '%1' (PEM RSA or EC, unencrypted)").arg(tls.keyFile));
        config.setPrivateKey(key);
    }
    config.setPeerVerifyMode(tls.insecure ? QSslSocket::VerifyNone : QSslSocket::VerifyPeer);
    return config;
}

// The system resolver, with nothing but standard types: a lookup given up may still be
// running on its own thread when the program exits.
std::vector<std::string> systemLookup(const std::string &host, std::string *error)
{
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *found = nullptr;
    const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
    std::vector<std::string> addresses;
    if (rc != 0) {
        *error = ::gai_strerror(rc);
        return addresses;
    }
    for (const addrinfo *a = found; a; a = a->ai_next) {
        char text[NI_MAXHOST];
        if (::getnameinfo(a->ai_addr, a->ai_addrlen, text, sizeof text, nullptr, 0, NI_NUMERICHOST) == 0 &&
            std::find(addresses.begin(), addresses.end(), text) == addresses.end())
            addresses.emplace_back(text);
    }
    ::freeaddrinfo(found);
    return addresses;
}

std::mutex g_lookupMutex;
HostLookup g_lookup; // empty: systemLookup

// A host name lookup that can be given up: it runs on a thread of its own while this one
// waits in slices that look at the abort signal and the deadline. Given up, the lookup
// finishes alone and its answer is dropped.
QList<QHostAddress> lookupAbortable(const QString &host, const QDeadlineTimer &deadline, int timeoutMs, const AbortSignal &abort,
                                    const QString &where)
{
    struct Shared {
        std::mutex mutex;
        std::condition_variable changed;
        bool done = false;
        std::vector<std::string> addresses;
        std::string error;
    };
    auto shared = std::make_shared<Shared>();
    HostLookup lookup;
    {
        std::lock_guard lock(g_lookupMutex);
        lookup = g_lookup ? g_lookup : HostLookup(systemLookup);
    }
    try {
        std::thread([shared, lookup, name = host.toStdString()] {
            std::string error;
            std::vector<std::string> addresses = lookup(name, &error);
            std::lock_guard lock(shared->mutex);
            shared->addresses = std::move(addresses);
            shared->error = std::move(error);
            shared->done = true;
            shared->changed.notify_all();
        }).detach();
    } catch (const std::system_error &e) {
        throw IoError(QStringLiteral("could not connect to %1: no thread for the host name lookup (%2)")
                          .arg(where, QString::fromLocal8Bit(e.what())));
    }
    std::unique_lock lock(shared->mutex);
    while (!shared->done) {
        if (abort.raised())
            throw IoError(QStringLiteral("could not connect to %1: given up (the connection is closing)").arg(where));
        if (deadline.hasExpired())
            throw TimeoutError(
                QStringLiteral("could not connect to %1: the host name lookup took more than %2 ms").arg(where).arg(timeoutMs));
        const qint64 slice = std::clamp<qint64>(deadline.remainingTime(), 1, NodeConnection::kAbortSliceMs);
        shared->changed.wait_for(lock, std::chrono::milliseconds(slice));
    }
    QList<QHostAddress> addresses;
    for (const std::string &a : shared->addresses) {
        QHostAddress address;
        if (address.setAddress(QString::fromStdString(a)))
            addresses << address;
    }
    if (addresses.isEmpty())
        throw IoError(QStringLiteral("could not connect to %1: %2")
                          .arg(where, shared->error.empty()
                                          ? QStringLiteral("the host name has no address")
                                          : QStringLiteral("host name lookup failed: %1").arg(QString::fromStdString(shared->error))));
    return addresses;
}

// A TCP connect that can be given up: a non-blocking connect() polled in short slices that
// look at the abort signal, so that closing the console never waits out a connect timeout.
// The connected descriptor, or TimeoutError / IoError.
qintptr connectAbortable(const HostPort &peer, int timeoutMs, const AbortSignal &abort, const QString &where)
{
    const QDeadlineTimer deadline(timeoutMs);
    QList<QHostAddress> addresses;
    QHostAddress literal;
    if (literal.setAddress(peer.host))
        addresses = {literal};
    else
        addresses = lookupAbortable(peer.host, deadline, timeoutMs, abort, where);
    QString why = QStringLiteral("no address");
    for (const QHostAddress &a : addresses) {
        sockaddr_storage ss{};
        socklen_t len = 0;
        if (a.protocol() == QAbstractSocket::IPv4Protocol) {
            auto *in = reinterpret_cast<sockaddr_in *>(&ss);
            in->sin_family = AF_INET;
            in->sin_port = htons(peer.port);
            in->sin_addr.s_addr = htonl(a.toIPv4Address());
            len = sizeof(sockaddr_in);
        } else {
            auto *in6 = reinterpret_cast<sockaddr_in6 *>(&ss);
            in6->sin6_family = AF_INET6;
            in6->sin6_port = htons(peer.port);
            const Q_IPV6ADDR ip = a.toIPv6Address();
            std::memcpy(&in6->sin6_addr, &ip, sizeof ip);
            in6->sin6_scope_id = a.scopeId().toUInt();
            len = sizeof(sockaddr_in6);
        }
        const int fd = ::socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            why = QString::fromLocal8Bit(std::strerror(errno));
            continue;
        }
        bool connected = ::connect(fd, reinterpret_cast<sockaddr *>(&ss), len) == 0;
        if (!connected && errno != EINPROGRESS) {
            why = QString::fromLocal8Bit(std::strerror(errno));
            ::close(fd);
            continue;
        }
        while (!connected) {
            if (abort.raised()) {
                ::close(fd);
                throw IoError(QStringLiteral("could not connect to %1: given up (the connection is closing)").arg(where));
            }
            if (deadline.hasExpired()) {
                ::close(fd);
                throw TimeoutError(QStringLiteral("could not connect to %1 within %2 ms").arg(where).arg(timeoutMs));
            }
            pollfd p{fd, POLLOUT, 0};
            const int n = ::poll(&p, 1, int(std::clamp<qint64>(deadline.remainingTime(), 0, NodeConnection::kAbortSliceMs)));
            if (n <= 0)
                continue; // a slice passed (or EINTR): look at the signal and the deadline again
            int err = 0;
            socklen_t errLen = sizeof err;
            if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errLen) != 0)
                err = errno;
            if (err != 0) {
                why = QString::fromLocal8Bit(std::strerror(err));
                break;
            }
            connected = true;
        }
        if (connected)
            return fd;
        ::close(fd);
    }
    throw IoError(QStringLiteral("could not connect to %1: %2").arg(where, why));
}

} // namespace

void setHostLookup(HostLookup lookup)
{
    std::lock_guard lock(g_lookupMutex);
    g_lookup = std::move(lookup);
}

HostPort NodeConnection::resolveSentinelMaster()
{
    // Ask the sentinels in order, skipping those that are down or do not know the master.
    QStringList failures;
    bool allRefusedLogin = true; // then it is the sentinel credentials, not the network
    for (const HostPort &sentinel : m_options.seeds) {
        const ConnectionOptions o = m_options.forSentinel(sentinel);
        const QString where = QStringLiteral("%1:%2").arg(sentinel.host).arg(sentinel.port);
        try {
            NodeConnection c(o);
            const Reply r = c.command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", m_options.masterName.toUtf8()});
            if (r.size() == 2)
                return {r[0].text(), quint16(r[1].toInteger())};
            failures << QStringLiteral("%1 does not know master '%2'").arg(where, m_options.masterName);
            allRefusedLogin = false;
        } catch (const AuthError &e) {
            failures << QStringLiteral("sentinel %1").arg(e.message());
        } catch (const ReplyError &e) {
            failures << QStringLiteral("%1: %2").arg(where, e.message());
            allRefusedLogin = allRefusedLogin && e.prefix() == QLatin1String("NOAUTH"); // needs a password
        } catch (const Error &e) {
            failures << QStringLiteral("%1: %2").arg(where, e.message());
            allRefusedLogin = false;
        }
    }
    const QString why = failures.join(QStringLiteral("; "));
    if (allRefusedLogin && !failures.isEmpty())
        throw AuthError(QStringLiteral("by the sentinels: %1").arg(why));
    throw IoError(QStringLiteral("no sentinel named a master for '%1': %2").arg(m_options.masterName, why));
}

void NodeConnection::openSocket()
{
    using T = ConnectionOptions::Transport;
    auto s = std::make_unique<Socket>();
    const int timeout = m_options.connectTimeoutMs;
    m_peer = m_options.transport == T::Sentinel ? resolveSentinelMaster() : m_options.address;
    const QString where = m_options.transport == T::Sentinel
                              ? QStringLiteral("%1:%2 (master '%3')").arg(m_peer.host).arg(m_peer.port).arg(m_options.masterName)
                              : m_options.endpoint();

    if (m_options.transport == T::Unix) {
        // Qt says "Invalid name" for a path that is not there; say what is wrong.
        if (!QFileInfo::exists(m_options.socketPath))
            throw IoError(QStringLiteral("no such socket: %1").arg(m_options.socketPath));
        auto local = std::make_unique<QLocalSocket>();
        local->connectToServer(m_options.socketPath);
        // In slices that look at the abort signal (a server with a full accept queue keeps a
        // unix connect waiting).
        const QDeadlineTimer deadline(timeout);
        while (local->state() == QLocalSocket::ConnectingState) {
            if (m_options.abort.raised())
                throw IoError(QStringLiteral("could not connect to %1: given up (the connection is closing)").arg(where));
            if (deadline.hasExpired())
                throw TimeoutError(QStringLiteral("could not connect to %1 within %2 ms").arg(where).arg(timeout));
            local->waitForConnected(int(std::clamp<qint64>(deadline.remainingTime(), 0, kAbortSliceMs)));
        }
        if (local->state() != QLocalSocket::ConnectedState) {
            if (local->error() == QLocalSocket::SocketTimeoutError)
                throw TimeoutError(QStringLiteral("could not connect to %1 within %2 ms").arg(where).arg(timeout));
            throw IoError(QStringLiteral("could not connect to %1: %2").arg(where, local->errorString()));
        }
        s->local = local.get();
        s->device = std::move(local);
    } else if (m_options.transport == T::Tls) {
        if (!QSslSocket::supportsSsl())
            throw IoError(QStringLiteral("TLS is not available: Qt found no TLS backend (install libssl3)"));
        auto ssl = std::make_unique<QSslSocket>();
        ssl->setSslConfiguration(tlsConfiguration(m_options.tls));
        const QString peerName = m_options.tls.sni.isEmpty() ? m_peer.host : m_options.tls.sni;
        bool encrypted = false;
        if (m_options.abort.live()) {
            // The TCP connect, then the handshake, each wait in slices that look at the signal.
            const QDeadlineTimer deadline(timeout);
            const qintptr fd = connectAbortable(m_peer, timeout, m_options.abort, where);
            if (!ssl->setSocketDescriptor(fd)) {
                ::close(int(fd));
                throw IoError(QStringLiteral("TLS connection to %1 failed: %2").arg(where, ssl->errorString()));
            }
            ssl->setPeerVerifyName(peerName); // the name sent (SNI) and verified
            ssl->startClientEncryption();
            while (!encrypted) {
                if (m_options.abort.raised())
                    throw IoError(QStringLiteral("TLS connection to %1: given up (the connection is closing)").arg(where));
                encrypted = ssl->waitForEncrypted(int(std::clamp<qint64>(deadline.remainingTime(), 0, kAbortSliceMs)));
                if (!encrypted && (ssl->error() != QAbstractSocket::SocketTimeoutError || ssl->state() != QAbstractSocket::ConnectedState ||
                                   deadline.hasExpired()))
                    break;
            }
        } else {
            ssl->connectToHostEncrypted(m_peer.host, m_peer.port, peerName);
            encrypted = ssl->waitForEncrypted(timeout);
        }
        if (!encrypted) {
            QStringList why;
            for (const QSslError &e : ssl->sslHandshakeErrors())
                why << e.errorString();
            if (why.isEmpty())
                why << ssl->errorString();
            if (ssl->error() == QAbstractSocket::SocketTimeoutError)
                throw TimeoutError(QStringLiteral("TLS connection to %1 not established within %2 ms").arg(where).arg(timeout));
            throw IoError(QStringLiteral("TLS connection to %1 failed: %2").arg(where, why.join(QStringLiteral("; "))));
        }
        s->tcp = ssl.get();
        s->device = std::move(ssl);
    } else {
        auto tcp = std::make_unique<QTcpSocket>();
        if (m_options.abort.live()) {
            const qintptr fd = connectAbortable(m_peer, timeout, m_options.abort, where);
            if (!tcp->setSocketDescriptor(fd)) {
                ::close(int(fd));
                throw IoError(QStringLiteral("could not connect to %1: %2").arg(where, tcp->errorString()));
            }
        } else {
            tcp->connectToHost(m_peer.host, m_peer.port);
        }
        if (!tcp->waitForConnected(timeout)) {
            if (tcp->error() == QAbstractSocket::SocketTimeoutError)
                throw TimeoutError(QStringLiteral("could not connect to %1 within %2 ms").arg(where).arg(timeout));
            throw IoError(QStringLiteral("could not connect to %1: %2").arg(where, tcp->errorString()));
        }
        s->tcp = tcp.get();
        s->device = std::move(tcp);
    }
    if (s->tcp)
        s->tcp->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    m_socket = std::move(s);
    m_parser.reset();
}

std::vector<Command> NodeConnection::handshakeCommands() const
{
    std::vector<Command> setup;
    const bool auth = !m_options.password.isEmpty() || !m_options.user.isEmpty();
    if (auth) {
        if (m_options.user.isEmpty())
            setup.push_back({"AUTH", m_options.password.toUtf8()});
        else
            setup.push_back({"AUTH", m_options.user.toUtf8(), m_options.password.toUtf8()});
    }
    if (m_options.db != 0)
        setup.push_back({"SELECT", QByteArray::number(m_options.db)});
    if (!m_options.clientName.isEmpty())
        setup.push_back({"CLIENT", "SETNAME", m_options.clientName.toUtf8()});
    return setup;
}

void NodeConnection::checkHandshakeReply(const Command &sent, size_t index, const Reply &r) const
{
    if (!r.isError())
        return;
    if (index == 0 && sent[0] == "AUTH") {
        const QString who =
            m_options.user.isEmpty() ? QStringLiteral("the default user") : QStringLiteral("user '%1'").arg(m_options.user);
        throw AuthError(QStringLiteral("authentication as %1 at %2 failed: %3").arg(who, m_options.endpoint(), r.text()));
    }
    if (sent[0] == "CLIENT")
        return; // naming the connection is a courtesy; an ACL may forbid it
    throw ReplyError(r.text());
}

void NodeConnection::checkMasterRole(const Reply &role) const
{
    // During a failover a sentinel may still name the old master, now a replica.
    if (role.isError()) {
        if (role.bytes().startsWith("NOPERM"))
            return; // a user without ROLE: READONLY replies will tell us instead
        throw ReplyError(role.text());
    }
    if (role.size() > 0 && role[0].bytes() != "master")
        throw IoError(QStringLiteral("%1:%2, named master of '%3' by the sentinels, is a %4 (failover in progress)")
                          .arg(m_peer.host)
                          .arg(m_peer.port)
                          .arg(m_options.masterName, role[0].text()));
}

void NodeConnection::fail(const QString &context)
{
    const bool timedOut = m_socket && m_socket->timedOut();
    const bool closed = !m_socket || m_socket->peerClosed();
    const QString detail = m_socket ? m_socket->device->errorString() : QStringLiteral("not connected");
    const QString where = QStringLiteral("%1:%2").arg(m_peer.host).arg(m_peer.port);
    disconnect();
    if (timedOut)
        throw TimeoutError(QStringLiteral("%1: no reply from %2 within %3 ms").arg(context, where).arg(m_options.commandTimeoutMs));
    if (closed)
        throw ClosedError(QStringLiteral("%1: %2 closed the connection").arg(context, where));
    throw IoError(QStringLiteral("%1: connection to %2 failed: %3").arg(context, where, detail));
}

void NodeConnection::aborted(const QString &context)
{
    const QString where = QStringLiteral("%1:%2").arg(m_peer.host).arg(m_peer.port);
    disconnect();
    throw IoError(QStringLiteral("%1: %2 given up (the connection is closing)").arg(context, where));
}

bool NodeConnection::waitReadable(QIODevice *dev)
{
    if (!m_options.abort.live())
        return dev->waitForReadyRead(m_options.commandTimeoutMs);
    const QDeadlineTimer deadline(m_options.commandTimeoutMs);
    for (;;) {
        if (m_options.abort.raised())
            aborted(QStringLiteral("waiting for a reply"));
        const int slice = int(std::clamp<qint64>(deadline.remainingTime(), 0, kAbortSliceMs));
        if (dev->waitForReadyRead(slice))
            return true;
        // A slice that ran out is no failure yet; a closed or broken socket is.
        if (!m_socket->timedOut() || !m_socket->isConnected() || deadline.hasExpired())
            return false;
    }
}

void NodeConnection::writeRaw(const QByteArray &bytes)
{
    if (!m_socket || m_socket->device->write(bytes) != bytes.size())
        fail(QStringLiteral("sending"));
    m_socket->flush();
}

void NodeConnection::send(const Command &command)
{
    if (command.isEmpty())
        throw UsageError(QStringLiteral("empty command"));
    ensureConnected();
    writeRaw(encodeCommand(command));
    ++m_outstanding;
}

void NodeConnection::send(const std::vector<Command> &commands)
{
    ensureConnected();
    writeBatch(commands);
}

void NodeConnection::writeBatch(const std::vector<Command> &commands)
{
    QByteArray batch;
    qsizetype size = 0;
    for (const Command &c : commands) {
        if (c.isEmpty())
            throw UsageError(QStringLiteral("empty command"));
        size += 16;
        for (const QByteArray &a : c)
            size += a.size() + 16;
    }
    batch.reserve(size);
    for (const Command &c : commands)
        appendCommand(batch, c);
    writeRaw(batch);
    m_outstanding += qint64(commands.size());
}

Reply NodeConnection::receive()
{
    if (!m_held.empty()) {
        Reply r = std::move(m_held.front());
        m_held.pop_front();
        return r;
    }
    return readReply();
}

void NodeConnection::holdOutstanding()
{
    while (m_outstanding > 0)
        m_held.push_back(readReply());
}

Reply NodeConnection::readReply()
{
    if (!m_socket)
        throw ClosedError(QStringLiteral("receiving: not connected"));
    for (;;) {
        std::optional<Reply> reply;
        try {
            reply = m_parser.next();
        } catch (const ProtocolError &) {
            disconnect();
            throw;
        }
        if (reply) {
            if (m_outstanding > 0)
                --m_outstanding;
            return std::move(*reply);
        }
        QIODevice *dev = m_socket->device.get();
        if (dev->bytesAvailable() == 0 && !waitReadable(dev))
            fail(QStringLiteral("waiting for a reply"));
        const QByteArray data = dev->readAll();
        try {
            m_parser.feed(data);
        } catch (const ProtocolError &) {
            disconnect();
            throw;
        }
    }
}

std::optional<Reply> NodeConnection::tryReceive()
{
    if (!m_socket)
        return std::nullopt;
    if (auto r = m_parser.next())
        return r;
    QIODevice *dev = m_socket->device.get();
    if (dev->bytesAvailable() == 0)
        dev->waitForReadyRead(0);
    if (dev->bytesAvailable() == 0) {
        if (!m_socket->isConnected())
            fail(QStringLiteral("waiting for a message"));
        return std::nullopt;
    }
    m_parser.feed(dev->readAll());
    return m_parser.next();
}

Reply NodeConnection::command(const Command &args)
{
    holdOutstanding();
    send(args);
    Reply r = readReply();
    r.orThrow();
    return r;
}

std::vector<Reply> NodeConnection::pipeline(const std::vector<Command> &commands)
{
    std::vector<Reply> replies;
    if (commands.empty())
        return replies;
    holdOutstanding();
    send(commands);
    replies.reserve(commands.size());
    for (size_t i = 0; i < commands.size(); ++i)
        replies.push_back(readReply());
    return replies;
}

} // namespace ratescope
