// The transport against real redis-servers started here: TCP, unix socket, ACL users, TLS,
// pipelining, timeouts, crashes and reconnects.
#include "redis/connection.h"
#include "base/errors.h"
#include "redis/nodeconnection.h"
#include "testsupport.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <cstring>
#include <future>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

using namespace ratescope;
using namespace ratescope::test;

class TestConnection : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void pingSelectAndName();
    void bigValueRoundTrip();
    void pipelineOf10000InOrder();
    void errorRepliesStayInPlace();
    void sendWhileRepliesAreOutstanding();
    void aCommandAmidAWindowTakesItsOwnReply();
    void unixSocket();
    void aclUsers();
    void wrongPasswordIsNotEchoed();
    void reconnectsAfterIdleDrop();
    void pausedServerTimesOut();
    void killedMidPipelineIsIoErrorThenRecovers();
    void tls();
    void tlsClientCertificate();
    void unreachableSentinelsAndClusterSeeds();
    void anAbortEndsAConnectWait();
    void anAbortEndsAHostLookup();
    void aHostLookupCountsAgainstTheConnectTimeout();
    void hostNamesAreLookedUpOffThread();
    void anAbortEndsAUnixConnectWait();

private:
    std::unique_ptr<SandboxServer> m_server;
    ConnectionOptions opts(int db = 0) const
    {
        ConnectionOptions o = m_server->options();
        o.db = db;
        return o;
    }
};

void TestConnection::initTestCase()
{
    SandboxServer::Config config;
    config.unixSocket = true;
    m_server = std::make_unique<SandboxServer>(config);
    m_server->start();
}

void TestConnection::cleanupTestCase()
{
    m_server.reset();
}

void TestConnection::pingSelectAndName()
{
    Connection c(opts(2));
    QCOMPARE(c.command({"PING"}).text(), QStringLiteral("PONG"));
    c.command({"SET", "only-in-db2", "1"});
    QCOMPARE(c.command({"CLIENT", "GETNAME"}).text(), QStringLiteral("ratescope"));
    Connection db0(opts(0));
    QVERIFY(db0.command({"GET", "only-in-db2"}).isNil());
    QCOMPARE(c.command({"GET", "only-in-db2"}).text(), QStringLiteral("1"));
}

void TestConnection::bigValueRoundTrip()
{
    Connection c(opts());
    QByteArray big(10 * 1024 * 1024, '\0');
    for (qsizetype i = 0; i < big.size(); ++i)
        big[i] = char(i * 7919 % 251);
    c.command({"SET", "big", big});
    const Reply r = c.command({"GET", "big"});
    QCOMPARE(r.bytes().size(), big.size());
    QVERIFY(r.bytes() == big);
    c.command({"DEL", "big"});
}

void TestConnection::pipelineOf10000InOrder()
{
    Connection c(opts());
    c.command({"DEL", "counter"});
    std::vector<Command> commands(10000, Command{"INCR", "counter"});
    const auto replies = c.pipeline(commands);
    QCOMPARE(replies.size(), size_t(10000));
    for (size_t i = 0; i < replies.size(); ++i)
        QCOMPARE(replies[i].integer(), qint64(i + 1));
}

void TestConnection::errorRepliesStayInPlace()
{
    Connection c(opts());
    c.command({"SET", "str", "x"});
    const auto replies = c.pipeline({{"PING"}, {"LPUSH", "str", "y"}, {"ECHO", "after"}});
    QCOMPARE(replies.size(), size_t(3));
    QVERIFY(replies[1].isError());
    try {
        replies[1].orThrow();
        QFAIL("no throw");
    } catch (const ReplyError &e) {
        QCOMPARE(e.prefix(), QStringLiteral("WRONGTYPE"));
    }
    QCOMPARE(replies[2].text(), QStringLiteral("after"));
    QVERIFY_THROWS_EXCEPTION(ReplyError, c.command({"LPUSH", "str", "y"}));
    QCOMPARE(c.command({"PING"}).text(), QStringLiteral("PONG")); // still usable
}

void TestConnection::sendWhileRepliesAreOutstanding()
{
    // A sliding window of requests: more sent before the earlier replies are read.
    Connection c(opts());
    c.command({"DEL", "window"});
    const qint64 id = c.command({"CLIENT", "ID"}).integer();
    for (int round = 0; round < 20; ++round) {
        c.send(std::vector<Command>(4, Command{"INCR", "window"}));
        QCOMPARE(c.receive().integer(), round * 5 + 1);
        QTest::qWait(2); // let the other replies arrive before the next send
        c.send(Command{"INCR", "window"});
        for (int i = 2; i <= 5; ++i)
            QCOMPARE(c.receive().integer(), round * 5 + i);
    }
    QCOMPARE(c.command({"CLIENT", "ID"}).integer(), id); // never reconnected
}

// A command() or pipeline() while a window's replies are on their way reads past them to its
// own, and receive() then hands out the window's, in order: never one answer for another.
void TestConnection::aCommandAmidAWindowTakesItsOwnReply()
{
    Connection c(opts());
    c.command({"DEL", "amid"});
    const qint64 id = c.command({"CLIENT", "ID"}).integer();
    c.send(std::vector<Command>(3, Command{"INCR", "amid"}));
    QCOMPARE(c.command({"ECHO", "own"}).text(), QStringLiteral("own"));
    c.send(Command{"INCR", "amid"});
    const std::vector<Reply> own = c.pipeline({{"ECHO", "a"}, {"GET", "amid"}, {"ECHO", "b"}});
    QCOMPARE(own[0].text(), QStringLiteral("a"));
    QCOMPARE(own[1].text(), QStringLiteral("4")); // every INCR ran before it
    QCOMPARE(own[2].text(), QStringLiteral("b"));
    c.send(Command{"INCR", "amid"});
    for (qint64 i = 1; i <= 5; ++i)
        QCOMPARE(c.receive().integer(), i);
    QCOMPARE(c.command({"CLIENT", "ID"}).integer(), id); // one socket throughout
    // A window given up (disconnect) leaves nothing for the next receive on a new socket.
    c.send(Command{"INCR", "amid"});
    QCOMPARE(c.command({"ECHO", "x"}).text(), QStringLiteral("x"));
    c.disconnect();
    QCOMPARE(c.command({"GET", "amid"}).text(), QStringLiteral("6"));
}

void TestConnection::unixSocket()
{
    Connection c(ConnectionOptions::fromUrl(QStringLiteral("unix://") + m_server->socketPath() + QStringLiteral("?db=3")));
    c.command({"SET", "via-unix", "1"});
    Connection tcp(opts(3));
    QCOMPARE(tcp.command({"GET", "via-unix"}).text(), QStringLiteral("1"));
}

void TestConnection::aclUsers()
{
    SandboxServer acl(aclConfig());
    acl.start();
    ConnectionOptions admin = acl.options();
    admin.user = QStringLiteral("admin");
    admin.password = QStringLiteral("adminpw");
    Connection a(admin);
    a.command({"SET", "k", "v"});

    ConnectionOptions reader = acl.options();
    reader.user = QStringLiteral("reader");
    reader.password = QStringLiteral("readerpw");
    Connection r(reader);
    QCOMPARE(r.command({"GET", "k"}).text(), QStringLiteral("v"));
    try {
        r.command({"SET", "k", "w"});
        QFAIL("reader could write");
    } catch (const ReplyError &e) {
        QCOMPARE(e.prefix(), QStringLiteral("NOPERM"));
    }
    // Without credentials the default user is off.
    Connection anonymous(acl.options());
    QVERIFY_THROWS_EXCEPTION(ReplyError, anonymous.command({"GET", "k"}));
}

void TestConnection::wrongPasswordIsNotEchoed()
{
    SandboxServer acl(aclConfig());
    acl.start();
    ConnectionOptions o = acl.options();
    o.user = QStringLiteral("admin");
    o.password = QStringLiteral("Wr0ngPassw0rd");
    Connection c(o);
    try {
        c.command({"PING"});
        QFAIL("wrong password accepted");
    } catch (const AuthError &e) {
        QVERIFY2(e.message().contains(QStringLiteral("WRONGPASS")), qPrintable(e.message()));
        QVERIFY(!e.message().contains(QStringLiteral("Wr0ngPassw0rd")));
    }
    QVERIFY(!c.isConnected());

    // The CLI: exit 3, and the password appears nowhere in its output.
    ConnectionOptions cliOptions = o;
    const CliResult r = runCli({QStringLiteral("--url"), cliOptions.toUrl(true), QStringLiteral("info")});
    QCOMPARE(r.exitCode, 3);
    QVERIFY(r.err.contains("WRONGPASS"));
    QVERIFY(!r.err.contains("Wr0ngPassw0rd") && !r.out.contains("Wr0ngPassw0rd"));
    const CliResult j = runCli({QStringLiteral("--json"), QStringLiteral("--url"), cliOptions.toUrl(true), QStringLiteral("info")});
    QCOMPARE(j.exitCode, 3);
    QVERIFY(j.out.contains("\"kind\":\"connection\""));
    QVERIFY(!j.out.contains("Wr0ngPassw0rd") && !j.err.contains("Wr0ngPassw0rd"));
}

void TestConnection::reconnectsAfterIdleDrop()
{
    Connection c(opts());
    const qint64 id = c.command({"CLIENT", "ID"}).integer();
    Connection killer(opts());
    QCOMPARE(killer.command({"CLIENT", "KILL", "ID", QByteArray::number(id)}).integer(), 1);
    // The drop is noticed before anything is sent, so reconnecting replays nothing.
    QCOMPARE(c.command({"PING"}).text(), QStringLiteral("PONG"));
    QVERIFY(c.command({"CLIENT", "ID"}).integer() != id);
}

void TestConnection::pausedServerTimesOut()
{
    ConnectionOptions o = opts();
    o.commandTimeoutMs = 300;
    Connection c(o);
    c.command({"PING"});
    m_server->pause();
    QElapsedTimer t;
    t.start();
    QVERIFY_THROWS_EXCEPTION(TimeoutError, c.command({"PING"}));
    const qint64 elapsed = t.elapsed();
    m_server->resume();
    // Generous bound: this is about not hanging, not about speed.
    QVERIFY2(elapsed < 5000, qPrintable(QString::number(elapsed)));
    QVERIFY(!c.isConnected());
    QCOMPARE(c.command({"PING"}).text(), QStringLiteral("PONG"));
}

void TestConnection::killedMidPipelineIsIoErrorThenRecovers()
{
    Connection c(opts());
    c.command({"DEL", "never"});
    const pid_t pid = pid_t(m_server->pid());
    // The server blocks in BLPOP inside our pipeline; it dies there.
    std::thread killer([pid] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        ::kill(pid, SIGKILL);
    });
    bool ioError = false;
    try {
        c.pipeline({{"SET", "before", "1"}, {"BLPOP", "never", "10"}, {"GET", "before"}});
    } catch (const IoError &) {
        ioError = true;
    }
    killer.join();
    QVERIFY(ioError);
    QVERIFY(!c.isConnected());
    QVERIFY_THROWS_EXCEPTION(ConnectionError, c.command({"PING"})); // still down
    m_server->restart();
    QCOMPARE(c.command({"PING"}).text(), QStringLiteral("PONG"));
}

void TestConnection::tls()
{
    QTemporaryDir dir;
    const TlsFiles files = makeTlsFiles(dir.path());
    SandboxServer::Config config;
    config.tlsCertFile = files.serverCert;
    config.tlsKeyFile = files.serverKey;
    config.tlsCaFile = files.ca;
    SandboxServer server(config);
    server.start();
    const QString base = QStringLiteral("rediss://127.0.0.1:%1/0").arg(server.port());

    Connection withCa(ConnectionOptions::fromUrl(base + QStringLiteral("?cacert=") + files.ca));
    QCOMPARE(withCa.command({"PING"}).text(), QStringLiteral("PONG"));

    Connection withoutCa(ConnectionOptions::fromUrl(base));
    try {
        withoutCa.command({"PING"});
        QFAIL("untrusted certificate accepted");
    } catch (const IoError &e) {
        QVERIFY2(e.message().contains(QStringLiteral("TLS")), qPrintable(e.message()));
    }

    Connection insecure(ConnectionOptions::fromUrl(base + QStringLiteral("?insecure=1")));
    QCOMPARE(insecure.command({"PING"}).text(), QStringLiteral("PONG"));

    Connection sniOk(ConnectionOptions::fromUrl(base + QStringLiteral("?cacert=") + files.ca + QStringLiteral("&sni=localhost")));
    QCOMPARE(sniOk.command({"PING"}).text(), QStringLiteral("PONG"));
    Connection sniWrong(ConnectionOptions::fromUrl(base + QStringLiteral("?cacert=") + files.ca + QStringLiteral("&sni=other.example")));
    QVERIFY_THROWS_EXCEPTION(IoError, sniWrong.command({"PING"}));

    // The console's connections (an abort signal: connect and handshake in slices) verify
    // alike, and send the server name asked for.
    for (const QString &query :
         {QStringLiteral("?cacert=") + files.ca, QStringLiteral("?cacert=") + files.ca + QStringLiteral("&sni=localhost"),
          QStringLiteral("?cacert=") + files.ca + QStringLiteral("&sni=other.example"), QString()}) {
        ConnectionOptions o = ConnectionOptions::fromUrl(base + query);
        o.abort = AbortSignal::create();
        Connection c(o);
        if (query.isEmpty() || query.contains(QStringLiteral("other.example")))
            QVERIFY_THROWS_EXCEPTION(IoError, c.command({"PING"}));
        else
            QCOMPARE(c.command({"PING"}).text(), QStringLiteral("PONG"));
    }

    // The CLI over TLS.
    const CliResult r =
        runCli({QStringLiteral("--json"), QStringLiteral("--url"), base + QStringLiteral("?cacert=") + files.ca, QStringLiteral("info")});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains("\"mode\":\"standalone\""));
}

void TestConnection::tlsClientCertificate()
{
    QTemporaryDir dir;
    const TlsFiles files = makeTlsFiles(dir.path());
    SandboxServer::Config config;
    config.tlsCertFile = files.serverCert;
    config.tlsKeyFile = files.serverKey;
    config.tlsCaFile = files.ca;
    config.tlsAuthClients = true;
    SandboxServer server(config);
    server.start();
    const QString base = QStringLiteral("rediss://127.0.0.1:%1/0?cacert=%2").arg(server.port()).arg(files.ca);

    Connection withCert(ConnectionOptions::fromUrl(base + QStringLiteral("&cert=%1&key=%2").arg(files.clientCert, files.clientKey)));
    QCOMPARE(withCert.command({"PING"}).text(), QStringLiteral("PONG"));
    Connection withoutCert(ConnectionOptions::fromUrl(base));
    QVERIFY_THROWS_EXCEPTION(ConnectionError, withoutCert.command({"PING"}));
}

void TestConnection::unreachableSentinelsAndClusterSeeds()
{
    const quint16 a = freeLoopbackPort(), b = freeLoopbackPort();
    Connection s(ConnectionOptions::fromUrl(QStringLiteral("redis-sentinel://127.0.0.1:%1,127.0.0.1:%2/m").arg(a).arg(b)));
    try {
        s.command({"PING"});
        QFAIL("no sentinel runs");
    } catch (const IoError &e) {
        // Every sentinel tried, each named.
        QVERIFY2(e.message().contains(QString::number(a)) && e.message().contains(QString::number(b)), qPrintable(e.message()));
    }
    Connection c(ConnectionOptions::fromUrl(QStringLiteral("redis-cluster://127.0.0.1:%1").arg(a)));
    QVERIFY_THROWS_EXCEPTION(IoError, c.command({"PING"}));
    // A plain server is no cluster node: a clear error, not a hang.
    Connection notCluster(ConnectionOptions::fromUrl(QStringLiteral("redis-cluster://127.0.0.1:%1").arg(m_server->port())));
    QVERIFY_THROWS_EXCEPTION(IoError, notCluster.command({"PING"}));
}

void TestConnection::anAbortEndsAConnectWait()
{
    // A listener that never accepts, its queue full: the kernel drops further SYNs, so a
    // connect to it waits (here up to a minute). Raising the abort signal from another
    // thread ends the wait with "given up", as the console does when its window closes.
    const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    QVERIFY(listener >= 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof at;
    QVERIFY(::bind(listener, reinterpret_cast<sockaddr *>(&at), sizeof at) == 0);
    QVERIFY(::listen(listener, 0) == 0);
    QVERIFY(::getsockname(listener, reinterpret_cast<sockaddr *>(&at), &len) == 0);
    std::vector<int> fillers;
    for (int i = 0; i < 4; ++i) {
        const int f = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        ::connect(f, reinterpret_cast<sockaddr *>(&at), sizeof at);
        fillers.push_back(f);
    }
    ConnectionOptions o =
        ConnectionOptions::fromUrl(QStringLiteral("redis://127.0.0.1:%1?connect_timeout=60s&timeout=60s").arg(ntohs(at.sin_port)));
    o.abort = AbortSignal::create();
    Connection c(o);
    std::thread raiser([abort = o.abort] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300)); // the connect is waiting by then
        abort.raise();
    });
    QString message;
    try {
        c.command({"PING"});
    } catch (const ConnectionError &e) {
        message = e.message();
    }
    raiser.join();
    for (int f : fillers)
        ::close(f);
    ::close(listener);
    QVERIFY2(message.contains(QStringLiteral("given up")), qPrintable(message));
    QVERIFY2(!message.contains(QStringLiteral("within")), qPrintable(message));
    qInfo("%s", qPrintable(message));
}

namespace {

// A host lookup that waits until the test lets it go (then answers 127.0.0.1), standing for
// a resolver that does not answer.
struct HeldLookup {
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    std::shared_ptr<std::atomic<int>> asked = std::make_shared<std::atomic<int>>(0);

    HeldLookup()
    {
        setHostLookup([released = released, asked = asked](const std::string &, std::string *) {
            ++*asked;
            released.wait();
            return std::vector<std::string>{"127.0.0.1"};
        });
    }
    ~HeldLookup()
    {
        release.set_value();
        setHostLookup({});
    }
};

} // namespace

// The console closing while a host name is being looked up: the lookup is left to finish on
// its own thread, the connection gives up at once.
void TestConnection::anAbortEndsAHostLookup()
{
    HeldLookup held;
    ConnectionOptions o = ConnectionOptions::fromUrl(QStringLiteral("redis://redis.test:%1?connect_timeout=60s").arg(m_server->port()));
    o.abort = AbortSignal::create();
    Connection c(o);
    std::thread raiser([abort = o.abort, asked = held.asked] {
        for (int i = 0; i < 2000 && *asked == 0; ++i) // bounded: the lookup has started
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        abort.raise();
    });
    QString message;
    try {
        c.command({"PING"});
    } catch (const ConnectionError &e) {
        message = e.message();
    }
    raiser.join();
    QCOMPARE(held.asked->load(), 1);
    QVERIFY2(message.contains(QStringLiteral("given up")), qPrintable(message)); // while the lookup still hangs
}

void TestConnection::aHostLookupCountsAgainstTheConnectTimeout()
{
    HeldLookup held;
    ConnectionOptions o = ConnectionOptions::fromUrl(QStringLiteral("redis://redis.test:%1?connect_timeout=200ms").arg(m_server->port()));
    o.abort = AbortSignal::create();
    Connection c(o);
    QString message;
    try {
        c.command({"PING"});
    } catch (const TimeoutError &e) {
        message = e.message();
    }
    QVERIFY2(message.contains(QStringLiteral("host name lookup took more than 200 ms")), qPrintable(message));
}

// Names are looked up (the system resolver: localhost from /etc/hosts; a test resolver for
// another name), and a name without an address says so.
void TestConnection::hostNamesAreLookedUpOffThread()
{
    ConnectionOptions o = ConnectionOptions::fromUrl(QStringLiteral("redis://localhost:%1").arg(m_server->port()));
    o.abort = AbortSignal::create();
    QCOMPARE(Connection(o).command({"PING"}).text(), QStringLiteral("PONG"));
    setHostLookup([](const std::string &host, std::string *error) {
        if (host == "redis.test")
            return std::vector<std::string>{"::1", "127.0.0.1"}; // ::1 refused when the server listens on IPv4 only
        *error = "Name or service not known";
        return std::vector<std::string>{};
    });
    struct Restore {
        ~Restore() { setHostLookup({}); }
    } restore;
    ConnectionOptions named = ConnectionOptions::fromUrl(QStringLiteral("redis://redis.test:%1").arg(m_server->port()));
    named.abort = AbortSignal::create();
    QCOMPARE(Connection(named).command({"PING"}).text(), QStringLiteral("PONG"));
    ConnectionOptions unknown = ConnectionOptions::fromUrl(QStringLiteral("redis://nowhere.test:%1").arg(m_server->port()));
    unknown.abort = AbortSignal::create();
    QString message;
    try {
        Connection(unknown).command({"PING"});
    } catch (const IoError &e) {
        message = e.message();
    }
    QVERIFY2(message.contains(QStringLiteral("host name lookup failed: Name or service not known")), qPrintable(message));
}

// A unix socket whose server accepts nothing (its queue full): the connect waits, and the
// abort signal ends the wait.
void TestConnection::anAbortEndsAUnixConnectWait()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QByteArray path = dir.filePath(QStringLiteral("full.sock")).toLocal8Bit();
    const int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
    QVERIFY(listener >= 0);
    sockaddr_un at{};
    at.sun_family = AF_UNIX;
    std::memcpy(at.sun_path, path.constData(), size_t(path.size()));
    QVERIFY(::bind(listener, reinterpret_cast<sockaddr *>(&at), sizeof at) == 0);
    QVERIFY(::listen(listener, 0) == 0);
    std::vector<int> fillers;
    for (int i = 0; i < 4; ++i) {
        const int f = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
        ::connect(f, reinterpret_cast<sockaddr *>(&at), sizeof at);
        fillers.push_back(f);
    }
    ConnectionOptions o =
        ConnectionOptions::fromUrl(QStringLiteral("unix://%1?connect_timeout=60s&timeout=60s").arg(QString::fromLocal8Bit(path)));
    o.abort = AbortSignal::create();
    Connection c(o);
    std::thread raiser([abort = o.abort] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300)); // the connect is waiting by then
        abort.raise();
    });
    QString message;
    try {
        c.command({"PING"});
    } catch (const ConnectionError &e) {
        message = e.message();
    }
    raiser.join();
    for (int f : fillers)
        ::close(f);
    ::close(listener);
    QVERIFY2(message.contains(QStringLiteral("given up")), qPrintable(message));
}

QTEST_GUILESS_MAIN(TestConnection)
#include "tst_connection.moc"
