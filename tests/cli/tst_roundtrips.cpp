// Round trips over a slow link, counted by the delay proxy (support/delayproxy.h): the proxy's
// own counting, and what ratescope-cli check, peek and inspect cost including the connection.
// Counts are exact (they never depend on timing), so the budgets are asserted as numbers.
#include "delayproxy.h"
#include "testsupport.h"

#include "base/errors.h"
#include "formats/keykind.h"
#include "keys/keyscanner.h"
#include "limiters/limiterscript.h"
#include "redis/connection.h"

#include <QDeadlineTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpSocket>
#include <QTest>

#include <map>

using namespace ratescope;
using namespace ratescope::test;

namespace {

// What a connection sent, round by round, for a failing comparison.
QString describe(const LinkStats &s, int expected)
{
    QString text = QStringLiteral("%1 round trips, expected %2 (1: the connection)").arg(s.roundTrips).arg(expected);
    for (int i = 0; i < s.rounds.size(); ++i)
        text += QStringLiteral("\n  %1: %2").arg(i + 2).arg(QString::fromUtf8(s.rounds[i]));
    return text;
}

} // namespace

class TestRoundTrips : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void proxyCountsRoundTrips();
    void proxyDelaysEachWay();
    void proxyCountsWithoutRespParsing();
    void readAlongRidesTheNextRequest();
    void rehearsalMakesARepeatedReadOneRound();
    void check();
    void checkWithSharedPolicy();
    void checkAfterScriptFlush();
    void peek();
    void inspect();
    void inspectLog();
    void scanPage();
    void scanPageSizedFromRoundTrip();
    void scanOverlapped();
    void samplesAheadForKeysOfNewShapes_data();
    void samplesAheadForKeysOfNewShapes();
    void keysListing();
    void topOnASlowLink();

private:
    // A connection through the proxy without a handshake (its first round is the first command),
    // connected and seen by the proxy; nullptr if the proxy did not see it.
    std::unique_ptr<Connection> bareLink();
    // Runs the CLI through the proxy and returns its one connection's counts.
    LinkStats cliThroughProxy(const QStringList &args, QByteArray *out = nullptr);

    std::unique_ptr<SandboxServer> m_server;
    std::unique_ptr<DelayProxy> m_proxy;
    std::unique_ptr<Connection> m_direct;
};

void TestRoundTrips::initTestCase()
{
    m_server = std::make_unique<SandboxServer>();
    m_server->start();
    m_proxy = std::make_unique<DelayProxy>(m_server->port());
    m_direct = std::make_unique<Connection>(m_server->options());
    m_direct->connect();
}

void TestRoundTrips::init()
{
    m_direct->command({"FLUSHALL"});
    m_direct->command({"SCRIPT", "FLUSH"});
    m_proxy->setDelayMs(0);
    // The last test's clients are gone before the counts restart: a link whose close the
    // proxy has not seen yet would count on into this test's first entry.
    QVERIFY(m_proxy->waitQuiet(10000, int(m_proxy->connections().size())));
    m_proxy->reset();
}

std::unique_ptr<Connection> TestRoundTrips::bareLink()
{
    ConnectionOptions o = m_proxy->options(m_server->options());
    o.clientName.clear();
    auto c = std::make_unique<Connection>(o);
    c->connect();
    if (!m_proxy->waitConnections(1, 5000))
        return nullptr;
    return c;
}

LinkStats TestRoundTrips::cliThroughProxy(const QStringList &args, QByteArray *out)
{
    m_proxy->reset();
    const CliResult r = runCli(QStringList{QStringLiteral("--url"), m_proxy->url(m_server->options())} + args);
    if (r.exitCode != 0)
        qWarning("ratescope-cli %s: exit %d: %s", qPrintable(args.join(QLatin1Char(' '))), r.exitCode, r.err.constData());
    if (out)
        *out = r.out;
    // The CLI has exited: its connection is closed, and every byte it sent was read.
    if (!m_proxy->waitQuiet(10000, 1))
        qWarning("the proxy did not see the CLI's connection close");
    const std::vector<LinkStats> links = m_proxy->connections();
    if (links.size() != 1) {
        qWarning("ratescope-cli made %d connections", int(links.size()));
        return {};
    }
    return links.front();
}

// The definition in delayproxy.h, step by step on one connection.
void TestRoundTrips::proxyCountsRoundTrips()
{
    ConnectionOptions o = m_proxy->options(m_server->options());
    o.clientName.clear(); // no handshake: the first command is the first thing sent
    Connection c(o);
    c.connect();
    QVERIFY(m_proxy->waitConnections(1, 5000));
    QVERIFY(m_proxy->waitQuiet(5000));
    std::vector<LinkStats> links = m_proxy->connections();
    QCOMPARE(links.size(), size_t(1));
    QCOMPARE(links[0].roundTrips, 1); // the connection itself
    QCOMPARE(links[0].commands, 0);

    c.command({"PING"});
    QCOMPARE(m_proxy->connections()[0].roundTrips, 2);
    c.pipeline({{"PING"}, {"ECHO", "x"}, {"TIME"}}); // one write, one wait
    QCOMPARE(m_proxy->connections()[0].roundTrips, 3);
    // (Two writes before the first reply is read are one wait only when the second reaches the
    // proxy before the first reply is delivered: without a delay that is a race, so it is not
    // asserted here; the pipelines above and the commands' counts below are exact.)
    links = m_proxy->connections();
    QCOMPARE(links[0].roundTrips, 3);
    QCOMPARE(links[0].commands, 4);
    QCOMPARE(links[0].replies, 4);
    QVERIFY(links[0].clientWrites >= 2);
    QVERIFY(links[0].bytesToServer > 0);
    QVERIFY(links[0].bytesToClient > 0);
    QVERIFY(links[0].open);

    // A request kept in flight while the previous reply is read: the reply of the first
    // is delivered before the second is sent, so the second is a round trip of its own.
    c.send(Command{"PING"});
    c.receive();
    c.send(Command{"PING"});
    c.receive();
    QCOMPARE(m_proxy->connections()[0].roundTrips, 5);

    m_proxy->reset();
    QCOMPARE(m_proxy->connections().size(), size_t(1)); // still open: counted afresh
    QCOMPARE(m_proxy->connections()[0].roundTrips, 0);
    c.command({"PING"});
    QCOMPARE(m_proxy->connections()[0].roundTrips, 1);
    c.disconnect();
    QVERIFY(m_proxy->waitQuiet(5000, 1));
    QVERIFY(!m_proxy->connections()[0].open);
}

// With a delay the counts are the same (they never depend on timing).
void TestRoundTrips::proxyDelaysEachWay()
{
    m_proxy->setDelayMs(20);
    ConnectionOptions o = m_proxy->options(m_server->options());
    o.clientName.clear();
    Connection c(o);
    c.connect();
    c.command({"PING"}); // the connection's round trip and the command's
    c.pipeline({{"PING"}, {"PING"}});
    QCOMPARE(m_proxy->connections()[0].roundTrips, 3);
    QCOMPARE(m_proxy->connections()[0].replies, 3);
}

// A stream the proxy cannot read as RESP is counted by bursts: a write after bytes came back.
void TestRoundTrips::proxyCountsWithoutRespParsing()
{
    QTcpSocket s;
    s.connectToHost(QStringLiteral("127.0.0.1"), m_proxy->port());
    QVERIFY(s.waitForConnected(5000));
    s.write("PING\r\n"); // an inline command: not a RESP array
    s.flush();
    QDeadlineTimer deadline(5000);
    QByteArray got;
    while (!got.contains("\r\n") && !deadline.hasExpired())
        if (s.waitForReadyRead(100))
            got += s.readAll();
    QCOMPARE(got, QByteArray("+PONG\r\n"));
    s.write("PING\r\n");
    s.flush();
    got.clear();
    while (!got.contains("\r\n") && !deadline.hasExpired())
        if (s.waitForReadyRead(100))
            got += s.readAll();
    QCOMPARE(got, QByteArray("+PONG\r\n"));
    QCOMPARE(m_proxy->connections()[0].roundTrips, 3);
}

// Connection::readAlong: reads that go with the next request, answered from there without a
// round trip of their own; a read the request asks itself answers both; forget drops them.
void TestRoundTrips::readAlongRidesTheNextRequest()
{
    m_direct->command({"SET", "ra:a", "1"});
    m_direct->command({"SET", "ra:b", "2"});
    std::unique_ptr<Connection> link = bareLink();
    QVERIFY(link);
    Connection &c = *link;
    auto rounds = [&] { return m_proxy->connections().at(0).roundTrips; };
    c.readAlong({{"GET", "ra:b"}, {"GET", "ra:a"}});
    QCOMPARE(rounds(), 1);                                  // nothing sent yet
    QCOMPARE(c.command({"GET", "ra:a"}).bytes(), QByteArray("1")); // with the read-along
    QCOMPARE(rounds(), 2);
    QCOMPARE(c.command({"GET", "ra:b"}).bytes(), QByteArray("2")); // read along: no round trip
    QCOMPARE(c.command({"GET", "ra:a"}).bytes(), QByteArray("1")); // the shared reply's copy
    QCOMPARE(rounds(), 2);
    c.readAlong({{"GET", "ra:b"}});
    c.forget({{"GET", "ra:b"}}); // never sent
    QCOMPARE(c.command({"GET", "ra:a"}).bytes(), QByteArray("1"));
    QCOMPARE(m_proxy->connections().at(0).commands, 3); // GET ra:a with GET ra:b, then GET ra:a: nothing forgotten was sent
    // A write drops the read-along; a write is never read along.
    c.readAlong({{"GET", "ra:b"}});
    c.command({"SET", "ra:b", "3"});
    QCOMPARE(c.command({"GET", "ra:b"}).bytes(), QByteArray("3"));
    const std::vector<Command> write{{"SET", "ra:b", "4"}};
    QVERIFY_THROWS_EXCEPTION(UsageError, c.readAlong(write));
}

// Connection::rehearse: a read repeated with its last transcript is learnt without a byte
// sent, and its rounds go as one; when what it reads has changed, it takes the rounds it needs
// and gets the answers of now; a write is never rehearsed.
void TestRoundTrips::rehearsalMakesARepeatedReadOneRound()
{
    m_direct->command({"SET", "rh:which", "rh:a"});
    m_direct->command({"SET", "rh:a", "1"});
    m_direct->command({"SET", "rh:b", "2"});
    std::unique_ptr<Connection> link = bareLink();
    QVERIFY(link);
    Connection &c = *link;
    auto rounds = [&] { return m_proxy->connections().at(0).roundTrips; };
    // Two rounds: which key, then that key's value (with TIME ahead of it).
    auto read = [&c] {
        c.prefetch({{"TIME"}, {"GET", "rh:which"}});
        const QByteArray which = c.command({"GET", "rh:which"}).bytes();
        c.command({"TIME"});
        return c.command({"GET", which}).bytes();
    };
    Connection::Transcript last;
    c.setTranscript(&last);
    QCOMPARE(read(), QByteArray("1"));
    c.setTranscript(nullptr);
    QCOMPARE(rounds(), 3);
    const std::vector<Command> firstTime = c.rehearse(read, {});
    QCOMPARE(firstTime, (std::vector<Command>{{"TIME"}, {"GET", "rh:which"}})); // the first round only
    std::vector<Command> plan = c.rehearse(read, last);
    QCOMPARE(plan, (std::vector<Command>{{"TIME"}, {"GET", "rh:which"}, {"GET", "rh:a"}}));
    QCOMPARE(rounds(), 3); // nothing sent
    m_direct->command({"SET", "rh:a", "10"});
    c.readAlong(plan);
    QCOMPARE(read(), QByteArray("10")); // the value of now
    QCOMPARE(rounds(), 4);               // in one round
    c.forget(plan);
    // What it reads changed: the planned read is not the one asked; a round more, and the
    // reply planned is forgotten, never given to a later read.
    m_direct->command({"SET", "rh:which", "rh:b"});
    c.readAlong(plan);
    QCOMPARE(read(), QByteArray("2"));
    QCOMPARE(rounds(), 6);
    c.forget(plan);
    m_direct->command({"SET", "rh:a", "11"});
    QCOMPARE(c.command({"GET", "rh:a"}).bytes(), QByteArray("11"));
    // A work that writes, or sends on its own, is not rehearsed; the connection is untouched.
    c.readAlong({{"GET", "rh:b"}});
    QCOMPARE(c.rehearse([&c] { c.command({"SET", "rh:a", "0"}); }, {}), std::vector<Command>{});
    QCOMPARE(c.rehearse([&c] { c.send(Command{"PING"}); }, {}), std::vector<Command>{});
    QCOMPARE(m_direct->command({"GET", "rh:a"}).bytes(), QByteArray("11"));
    const int before = rounds();
    QCOMPARE(c.command({"GET", "rh:a"}).bytes(), QByteArray("11")); // carries the read-along kept through it
    QCOMPARE(c.command({"GET", "rh:b"}).bytes(), QByteArray("2"));
    QCOMPARE(rounds(), before + 1);
}

namespace {

void setPolicy(const QString &url, const QString &name, const QString &match, const QString &algo, const QString &limit,
               const QString &window, const QStringList &extra = {})
{
    const CliResult r = runCli(QStringList{QStringLiteral("--url"), url, QStringLiteral("policy"), QStringLiteral("set"), name,
                                           QStringLiteral("--match"), match, QStringLiteral("--algo"), algo,
                                           QStringLiteral("--limit"), limit, QStringLiteral("--window"), window} +
                               extra);
    QVERIFY2(r.exitCode == 0, r.err.constData());
}

} // namespace

// check KEY with its limits from a policy and an override: connect, then read everything
// (handshake, policies, overrides, the key, the clock, the script's presence, and what the
// write guard asks: whether another service's counter windows lie beside the key, core's
// writeRefusal) in one round, then the script.
constexpr int kCheckRoundTrips = 3;
void TestRoundTrips::check()
{
    const QString url = m_server->url();
    setPolicy(url, QStringLiteral("api"), QStringLiteral("api:*"), QStringLiteral("sliding-log"), QStringLiteral("10"),
              QStringLiteral("1m"));
    QCOMPARE(runCli({QStringLiteral("--url"), url, QStringLiteral("override"), QStringLiteral("set"), QStringLiteral("api:b"),
                     QStringLiteral("--limit"), QStringLiteral("20"), QStringLiteral("--for"), QStringLiteral("1h")})
                 .exitCode,
             0);
    QByteArray out;
    // A new key, the script not yet cached on the server.
    LinkStats s = cliThroughProxy({QStringLiteral("--json"), QStringLiteral("check"), QStringLiteral("api:a")}, &out);
    QCOMPARE(QJsonDocument::fromJson(out).object().value(QStringLiteral("used")).toInt(), 1);
    QVERIFY2(s.roundTrips == kCheckRoundTrips, qPrintable(describe(s, kCheckRoundTrips)));
    // The key exists now, the script is cached.
    s = cliThroughProxy({QStringLiteral("--json"), QStringLiteral("check"), QStringLiteral("api:a")}, &out);
    QCOMPARE(QJsonDocument::fromJson(out).object().value(QStringLiteral("used")).toInt(), 2);
    QVERIFY2(s.roundTrips == kCheckRoundTrips, qPrintable(describe(s, kCheckRoundTrips)));
    // With an override: its limit applies.
    s = cliThroughProxy({QStringLiteral("--json"), QStringLiteral("check"), QStringLiteral("api:b")}, &out);
    const QJsonObject o = QJsonDocument::fromJson(out).object();
    QCOMPARE(o.value(QStringLiteral("limit")).toInt(), 20);
    QCOMPARE(o.value(QStringLiteral("limits_from")).toString(), QStringLiteral("override"));
    QVERIFY2(s.roundTrips == kCheckRoundTrips, qPrintable(describe(s, kCheckRoundTrips)));
    // Limits given as flags: the same.
    s = cliThroughProxy({QStringLiteral("check"), QStringLiteral("free:a"), QStringLiteral("--algo"), QStringLiteral("gcra"),
                         QStringLiteral("--limit"), QStringLiteral("5"), QStringLiteral("--window"), QStringLiteral("1s")});
    QVERIFY2(s.roundTrips == kCheckRoundTrips, qPrintable(describe(s, kCheckRoundTrips)));
}

// A shard of a sharded policy whose group has an override: the group's override is read in
// the same round as the rest.
void TestRoundTrips::checkWithSharedPolicy()
{
    const QString url = m_server->url();
    setPolicy(url, QStringLiteral("rl"), QStringLiteral("rl:*"), QStringLiteral("fixed-window"), QStringLiteral("100"),
              QStringLiteral("1m"), {QStringLiteral("--shards"), QStringLiteral("4")});
    QCOMPARE(runCli({QStringLiteral("--url"), url, QStringLiteral("override"), QStringLiteral("set"), QStringLiteral("rl:t"),
                     QStringLiteral("--limit"), QStringLiteral("400"), QStringLiteral("--for"), QStringLiteral("1h")})
                 .exitCode,
             0);
    QByteArray out;
    const LinkStats s = cliThroughProxy({QStringLiteral("--json"), QStringLiteral("check"), QStringLiteral("rl:t:2")}, &out);
    const QJsonObject o = QJsonDocument::fromJson(out).object();
    QCOMPARE(o.value(QStringLiteral("limit")).toInt(), 100); // 400 over 4 shards
    QCOMPARE(o.value(QStringLiteral("limits_from")).toString(), QStringLiteral("group override"));
    QVERIFY2(s.roundTrips == kCheckRoundTrips, qPrintable(describe(s, kCheckRoundTrips)));
}

// The server lost its scripts (restart, SCRIPT FLUSH) after they were asked about: the
// explicit NOSCRIPT is the one failure after which the script is sent again.
void TestRoundTrips::checkAfterScriptFlush()
{
    const QString url = m_server->url();
    QByteArray out;
    const QStringList args{QStringLiteral("--json"), QStringLiteral("check"), QStringLiteral("k"), QStringLiteral("--algo"),
                           QStringLiteral("token-bucket"), QStringLiteral("--limit"), QStringLiteral("3"),
                           QStringLiteral("--window"), QStringLiteral("1m")};
    LinkStats s = cliThroughProxy(args, &out);
    QVERIFY2(s.roundTrips == kCheckRoundTrips, qPrintable(describe(s, kCheckRoundTrips)));
    QCOMPARE(QJsonDocument::fromJson(out).object().value(QStringLiteral("used")).toInt(), 1);
    m_direct->command({"SCRIPT", "FLUSH"});
    s = cliThroughProxy(args, &out);
    QVERIFY2(s.roundTrips == kCheckRoundTrips, qPrintable(describe(s, kCheckRoundTrips))); // the script's absence was read with the rest: loaded with the call
    QCOMPARE(QJsonDocument::fromJson(out).object().value(QStringLiteral("used")).toInt(), 2);
}

void TestRoundTrips::peek()
{
    const QString url = m_server->url();
    setPolicy(url, QStringLiteral("api"), QStringLiteral("api:*"), QStringLiteral("token-bucket"), QStringLiteral("10"),
              QStringLiteral("1m"));
    QCOMPARE(runCli({QStringLiteral("--url"), url, QStringLiteral("check"), QStringLiteral("api:a")}).exitCode, 0);
    QByteArray out;
    LinkStats s = cliThroughProxy({QStringLiteral("--json"), QStringLiteral("peek"), QStringLiteral("api:a")}, &out);
    QCOMPARE(QJsonDocument::fromJson(out).object().value(QStringLiteral("used_now")).toInt(), 1);
    QVERIFY2(s.roundTrips == (3), qPrintable(describe(s, 3)));
    // A key that does not exist yet.
    s = cliThroughProxy({QStringLiteral("--json"), QStringLiteral("peek"), QStringLiteral("api:new")}, &out);
    QCOMPARE(QJsonDocument::fromJson(out).object().value(QStringLiteral("used_now")).toInt(), 0);
    QVERIFY2(s.roundTrips == (3), qPrintable(describe(s, 3)));
}

void TestRoundTrips::inspect()
{
    const QString url = m_server->url();
    setPolicy(url, QStringLiteral("api"), QStringLiteral("api:*"), QStringLiteral("gcra"), QStringLiteral("10"),
              QStringLiteral("1m"));
    QCOMPARE(runCli({QStringLiteral("--url"), url, QStringLiteral("check"), QStringLiteral("api:a")}).exitCode, 0);
    QByteArray out;
    const LinkStats s = cliThroughProxy({QStringLiteral("--json"), QStringLiteral("inspect"), QStringLiteral("api:a")}, &out);
    const QJsonObject o = QJsonDocument::fromJson(out).object();
    QCOMPARE(o.value(QStringLiteral("format")).toString(), QStringLiteral("gcra"));
    // Connect, the first round, the hash's state read bounded (an HSCAN page, HLEN and the
    // fields the script reads: a giant hash is never read whole) with the decision's peek
    // read along (Connection::readAlong).
    QVERIFY2(s.roundTrips == (3), qPrintable(describe(s, 3)));
}

void TestRoundTrips::inspectLog()
{
    const QString url = m_server->url();
    setPolicy(url, QStringLiteral("api"), QStringLiteral("api:*"), QStringLiteral("sliding-log"), QStringLiteral("10"),
              QStringLiteral("1m"));
    for (int i = 0; i < 3; ++i)
        QCOMPARE(runCli({QStringLiteral("--url"), url, QStringLiteral("check"), QStringLiteral("api:log")}).exitCode, 0);
    QByteArray out;
    const LinkStats s = cliThroughProxy({QStringLiteral("--json"), QStringLiteral("inspect"), QStringLiteral("api:log")}, &out);
    const QJsonObject o = QJsonDocument::fromJson(out).object();
    QCOMPARE(o.value(QStringLiteral("state")).toObject().value(QStringLiteral("entries_total")).toInt(), 3);
    // Connect, the first round, the log's state with the decision's peek read along.
    QVERIFY2(s.roundTrips == (3), qPrintable(describe(s, 3)));
}

// The key scanner: after its first call (the clock and the first SCAN, then the first page
// typed with every sample read ahead), each page costs one round trip: the next SCAN goes out
// with the page's classification (types guessed by shape, the samples in place of TYPE).
void TestRoundTrips::scanPage()
{
    std::vector<Command> fill;
    for (int i = 0; i < 3000; ++i)
        fill.push_back({"HSET", "s:k" + QByteArray::number(i) + ":fw", "w", "1", "n", "2"});
    m_direct->pipeline(fill);
    ConnectionOptions o = m_proxy->options(m_server->options());
    Connection c(o);
    c.connect();
    KeyScanner::Options options;
    options.count = 100; // at most 100 per 2 ms of round trip: several pages on any loopback
    KeyScanner scanner(c, options);
    m_proxy->reset();
    auto roundTrips = [&] { return m_proxy->connections().at(0).roundTrips; };
    std::vector<KeyRecord> page = scanner.nextPage();
    QVERIFY(!page.empty());
    QCOMPARE(roundTrips(), 2); // TIME + SCAN; SCAN + TYPE/PTTL and the samples of every type
    qint64 listed = qint64(page.size());
    int pages = 0;
    for (int guard = 0; guard < 1000 && !scanner.atEnd(); ++guard) {
        const int before = roundTrips();
        page = scanner.nextPage();
        QCOMPARE(roundTrips() - before, 1);
        for (const KeyRecord &r : page)
            QCOMPARE(r.kind.format, KeyFormat::FixedWindow);
        listed += qint64(page.size());
        ++pages;
    }
    QVERIFY(scanner.atEnd());
    QVERIFY(pages >= 1);
    QVERIFY(listed >= 3000); // SCAN may return a key twice, never leaves one out
}

// The scanner a step ahead (Options::overlap, what `keys` uses), over a link with a delay so
// that replies are on their way while the next requests go: every key listed once, read as the
// scanner without overlap reads it, keys whose type was guessed wrong read again; the reads of
// each page (alsoPerPage) and those sent along answered in turn, also when the caller uses the
// connection between two calls.
void TestRoundTrips::scanOverlapped()
{
    std::vector<Command> fill;
    for (int i = 0; i < 3000; ++i) {
        const QByteArray key = "o:k" + QByteArray::number(i) + ":fw";
        if (i % 500 == 499) // the shape of the hashes around it: guessed a hash, read again
            fill.push_back({"SET", key, "x"});
        else
            fill.push_back({"HSET", key, "w", "1", "n", "2"});
    }
    fill.push_back({"HSET", "other:1", "a", "1"}); // not matched
    m_direct->pipeline(fill);
    m_proxy->setDelayMs(2);
    auto scanAll = [&](bool overlap, std::map<QByteArray, QString> &seen, int *pagesRead) {
        Connection c(m_proxy->options(m_server->options()));
        KeyScanner::Options options;
        options.match = "o:*";
        options.count = 100;
        options.overlap = overlap;
        // Each page's keys asked again with EXISTS: one reply per key, 1 for each.
        std::map<QByteArray, int> existing;
        options.alsoPerPage = [&](const std::vector<QByteArray> &keys) {
            Command exists{"EXISTS"};
            for (const QByteArray &k : keys)
                exists.append(k);
            KeyScanner::PageReads reads;
            reads.commands = {{"ECHO", "page"}, exists};
            reads.take = [&existing, keys](Reply *replies) {
                QCOMPARE(replies[0].text(), QStringLiteral("page"));
                QCOMPARE(replies[1].integer(), qint64(keys.size()));
                for (const QByteArray &k : keys)
                    ++existing[k];
            };
            return reads;
        };
        KeyScanner scanner(c, options);
        int calls = 0;
        int alongSent = 0;
        std::vector<QByteArray> alongRead;
        for (; calls < 2000 && !scanner.atEnd(); ++calls) {
            if (calls % 3 == 0) {
                const QByteArray along = "along " + QByteArray::number(alongSent++);
                scanner.sendAlong({{{"ECHO", along}, {"ECHO", along + " too"}}, [&alongRead](Reply *replies) {
                                       alongRead.push_back(replies[0].bytes());
                                       QCOMPARE(replies[1].bytes(), alongRead.back() + " too");
                                   }});
            }
            const std::vector<KeyRecord> page = scanner.nextPage();
            if (calls % 4 == 1) // the caller's own request between two calls
                QCOMPARE(c.command({"ECHO", "mine"}).text(), QStringLiteral("mine"));
            for (const KeyRecord &r : page) // SCAN may hand out a key twice (while the server rehashes)
                seen[r.key] = QString::fromUtf8(r.type) + QLatin1Char(' ') + r.kind.label();
            *pagesRead += page.empty() ? 0 : 1;
        }
        QVERIFY(scanner.atEnd());
        QCOMPARE(int(alongRead.size()), alongSent); // every read sent along answered, in order
        for (int i = 0; i < alongSent; ++i)
            QCOMPARE(alongRead[size_t(i)], "along " + QByteArray::number(i));
        QCOMPARE(existing.size(), size_t(3000)); // every key's reads sent and answered
        QVERIFY(scanner.scanned() >= 3000);
    };
    std::map<QByteArray, QString> plain, ahead;
    int plainPages = 0, aheadPages = 0;
    scanAll(false, plain, &plainPages);
    if (QTest::currentTestFailed())
        return;
    scanAll(true, ahead, &aheadPages);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(ahead.size(), size_t(3000));
    QCOMPARE(ahead, plain);
    QCOMPARE(ahead["o:k499:fw"].left(7), QStringLiteral("string ")); // guessed a hash, read again
    QVERIFY(ahead["o:k0:fw"].startsWith(QStringLiteral("hash ")));
    QVERIFY(aheadPages > 1);
}

// Keys of shapes not seen before are asked their TYPE with every guessable type's sample in
// the same round, so a page of them needs no second round, up to 2,000 such keys a page;
// beyond, the samples follow in a round of their own (the server's time bounded).
void TestRoundTrips::samplesAheadForKeysOfNewShapes_data()
{
    QTest::addColumn<int>("keys");
    QTest::addColumn<int>("roundTrips"); // after the connection
    QTest::newRow("1,500 keys of new shapes: samples ahead") << 1500 << 2; // TIME + SCAN; TYPE/PTTL and the samples
    QTest::newRow("2,500: samples after") << 2500 << 3;                    // TIME + SCAN; TYPE/PTTL; samples
}

void TestRoundTrips::samplesAheadForKeysOfNewShapes()
{
    QFETCH(int, keys);
    QFETCH(int, roundTrips);
    auto letters = [](int n) { // a segment without digits: a shape of its own
        QByteArray s;
        do {
            s.append(char('a' + n % 26));
            n /= 26;
        } while (n > 0);
        return s;
    };
    std::vector<Command> fill;
    for (int i = 0; i < keys; ++i) {
        const QByteArray key = "n:" + letters(i);
        switch (i % 4) {
        case 0: fill.push_back({"HSET", key, "w", "1", "n", "2"}); break;
        case 1: fill.push_back({"ZADD", key, "1", "m"}); break;
        case 2: fill.push_back({"SET", key, "1"}); break;
        default: fill.push_back({"SADD", key, "m"}); break;
        }
    }
    m_direct->pipeline(fill);
    // A pipeline of thousands of commands leaves in several writes: a few milliseconds each way
    // keep replies from coming back before the last write (which would count a wait).
    m_proxy->setDelayMs(5);
    std::unique_ptr<Connection> c = bareLink();
    QVERIFY(c);
    KeyScanner::Options options;
    options.count = 10000; // one page
    KeyScanner scanner(*c, options);
    m_proxy->reset();
    std::map<QByteArray, QByteArray> types;
    for (int guard = 0; guard < 10 && !scanner.atEnd(); ++guard)
        for (const KeyRecord &r : scanner.nextPage())
            types[r.key] = r.type + ' ' + r.kind.label().toUtf8();
    QCOMPARE(types.size(), size_t(keys));
    QVERIFY(types["n:a"].startsWith("hash "));
    QVERIFY(types["n:b"].startsWith("zset "));
    QVERIFY(types["n:c"].startsWith("string "));
    QVERIFY(types["n:d"].startsWith("set "));
    const LinkStats s = m_proxy->connections().at(0);
    QVERIFY2(s.roundTrips == roundTrips, qPrintable(describe(s, roundTrips)));
}

void TestRoundTrips::scanPageSizedFromRoundTrip()
{
    QCOMPARE(KeyScanner::countFor(100, 1000), 1000);      // loopback: as asked
    QCOMPARE(KeyScanner::countFor(5000, 1000), 2000);     // 5 ms
    QCOMPARE(KeyScanner::countFor(50000, 1000), 10000);   // 50 ms: the bound
    QCOMPARE(KeyScanner::countFor(500000, 1000), 10000);
    QCOMPARE(KeyScanner::countFor(50000, 20000), 20000);  // never below what was asked
}

// ratescope-cli keys: the policies, the clock and the first SCAN with the handshake, and then
// as many round trips as the scan has pages (each next SCAN in flight while the page before it
// is read; the first page's keys with every sample ahead), each page's overrides and the page
// before's usage riding with it, and one more: the last page's usage.
void TestRoundTrips::keysListing()
{
    setPolicy(m_server->url(), QStringLiteral("fw"), QStringLiteral("s:*"), QStringLiteral("fixed-window"), QStringLiteral("10"),
              QStringLiteral("1m"));
    std::vector<Command> fill;
    // Fewer keys than the smallest COUNT the CLI asks (1,000): one page, whatever the link.
    for (int i = 0; i < 900; ++i)
        fill.push_back({"HSET", "s:k" + QByteArray::number(i) + ":fw", "w", "1", "n", "2"});
    m_direct->pipeline(fill);
    const int pages = 1;
    LimiterScript::forAlgorithm(Algorithm::FixedWindow).load(*m_direct); // as the services using it have
    // A pipeline of 1,800 commands leaves in several writes: over a link without delay the
    // first replies could be back before the last write, which would count as a wait. A few
    // milliseconds each way keep the count exact on a loaded machine too.
    m_proxy->setDelayMs(5);
    QByteArray out;
    LinkStats s = cliThroughProxy({QStringLiteral("--json"), QStringLiteral("keys")}, &out);
    QCOMPARE(out.count('\n'), 900);
    QVERIFY(out.contains("\"limit\":10"));
    QVERIFY2(s.roundTrips == (1 + 1 + pages + 1), qPrintable(describe(s, 1 + 1 + pages + 1)));
    // The server lost its scripts: the usage reads that came back NOSCRIPT go again together.
    m_direct->command({"SCRIPT", "FLUSH"});
    s = cliThroughProxy({QStringLiteral("--json"), QStringLiteral("keys")}, &out);
    QCOMPARE(out.count('\n'), 900);
    QVERIFY2(s.roundTrips == (1 + 1 + pages + 1 + 1), qPrintable(describe(s, 1 + 1 + pages + 1 + 1)));
}

// top sizes its SCAN pages and its reads' rounds from the link's round trip, as keys does: on
// a 20 ms link 20,000 limiters take a few pages and a round or two per read (10,000 limiters
// a round, two in flight): 16 round trips, where pages and rounds of 1,000 took 28.
void TestRoundTrips::topOnASlowLink()
{
    setPolicy(m_server->url(), QStringLiteral("fw"), QStringLiteral("s:*"), QStringLiteral("fixed-window"), QStringLiteral("10"),
              QStringLiteral("1m"));
    std::vector<Command> fill;
    for (int i = 0; i < 20000; ++i)
        fill.push_back({"HSET", "s:k" + QByteArray::number(i) + ":fw", "w", "1", "n", "2"});
    m_direct->pipeline(fill);
    m_proxy->setDelayMs(10); // at least 20 ms a round trip: pages of 10,000
    QByteArray out;
    const LinkStats s = cliThroughProxy({QStringLiteral("--json"), QStringLiteral("top"), QStringLiteral("--interval"),
                                         QStringLiteral("100ms"), QStringLiteral("--max"), QStringLiteral("3")},
                                        &out);
    const std::vector<QJsonObject> rows = jsonObjects(out);
    QVERIFY(!rows.empty());
    const QJsonObject pass = rows.back().value(QStringLiteral("pass")).toObject();
    QCOMPARE(pass.value(QStringLiteral("limiters")).toInt(), 20000); // every one found
    // The connection with the policies, DBSIZE, each SCAN page with its classification (SCAN
    // hands out about COUNT buckets' keys a call: a few pages, how many depends on the
    // server's table), the overrides, the clock and each read's rounds, the peeks shown.
    // Two rounds in flight share a wait only while the second is built within a round trip:
    // a sanitizer build, several times slower, may take longer to build 10,000 reads, so
    // there the count is printed, not held to the bound.
    qInfo("top over 20,000 limiters through a 20 ms link: %d round trips", s.roundTrips);
#if defined(__SANITIZE_ADDRESS__)
    QVERIFY2(s.roundTrips >= 8, qPrintable(QStringLiteral("%1 round trips").arg(s.roundTrips)));
#else
    QVERIFY2(s.roundTrips >= 8 && s.roundTrips <= 18, qPrintable(QStringLiteral("%1 round trips").arg(s.roundTrips)));
#endif
}

QTEST_GUILESS_MAIN(TestRoundTrips)
#include "tst_roundtrips.moc"
