// The ratescope functions library against real redis-servers: generated from the scripts,
// deciding exactly as EVALSHA does over a replayed trace, _peek twins through FCALL_RO for a
// read-only user and on a replica, detection (this build's version only, NOPERM and servers
// without functions fall back to EVALSHA), "Function not found" recovered once, persistence
// across SCRIPT FLUSH and a restart, and `ratescope-cli scripts` (status, drift, deploy on
// every master of a cluster, downgrade refused, read-only, audit).
#include "admin/audit.h"
#include "load/burst.h"
#include "redis/connection.h"
#include "base/errors.h"
#include "limiters/limiter.h"
#include "limiters/limiterscript.h"
#include "reference_model.h"
#include "limiters/scriptlibrary.h"
#include "testsupport.h"

#include <QDeadlineTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTest>
#include <QThread>

using namespace ratescope;
using namespace ratescope::test;

Q_DECLARE_METATYPE(ratescope::Algorithm)

namespace {

constexpr qint64 kSecond = 1000000;
constexpr qint64 kT0 = 1735689600LL * kSecond; // 2025-01-01T00:00:00Z

QString toString(const Decision &d)
{
    return QStringLiteral("%1 limit=%2 used=%3 remaining=%4 retry_after_us=%5 reset_after_us=%6")
        .arg(d.allowed ? QStringLiteral("allowed") : QStringLiteral("denied"))
        .arg(d.limit)
        .arg(d.used)
        .arg(d.remaining)
        .arg(d.retryAfterUs)
        .arg(d.resetAfterUs);
}

// This build's library with another version and/or digest: what an older or newer release
// (or the same release from other scripts) would have loaded.
QByteArray libraryVariant(const QString &version, const QByteArray &digest = {})
{
    QByteArray code = FunctionLibrary::instance().code();
    code.replace("local VERSION = '" + FunctionLibrary::instance().version().toUtf8() + "'", "local VERSION = '" + version.toUtf8() + "'");
    if (!digest.isEmpty())
        code.replace("local SCRIPTS = '" + FunctionLibrary::instance().scriptsDigest() + "'", "local SCRIPTS = '" + digest + "'");
    return code;
}

qint64 statCount(Connection &c, const QByteArray &section, const QByteArray &name)
{
    // "errorstat_NOSCRIPT:count=3" / "cmdstat_fcall:calls=12,..."
    for (const QByteArray &line : c.command({"INFO", section}).bytes().split('\n'))
        if (line.startsWith(name + ':')) {
            const QByteArray rest = line.mid(name.size() + 1);
            const qsizetype eq = rest.indexOf('='), comma = rest.indexOf(',');
            return rest.mid(eq + 1, comma < 0 ? -1 : comma - eq - 1).trimmed().toLongLong();
        }
    return 0;
}

template <typename Ok> bool waitFor(Ok ok, int timeoutMs = 20000)
{
    QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        try {
            if (ok())
                return true;
        } catch (const Error &) {
        }
        QThread::msleep(50);
    }
    return false;
}

QJsonObject jsonOf(const CliResult &r)
{
    return QJsonDocument::fromJson(r.out).object();
}

} // namespace

class TestFunctions : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void libraryIsGeneratedFromTheScripts();
    void releasesTable();
    void fcallAndEvalshaDecideIdentically_data();
    void fcallAndEvalshaDecideIdentically();
    void peekTwinsThroughFcallRoForAReadOnlyUser();
    void peekTwinsOnAReplica();
    void onlyThisBuildsLibraryIsCalled();
    void functionNotFoundIsRecoveredOnce();
    void survivesScriptFlushAndRestart();
    void burstThroughTheLibrary();
    void serverWithoutFunctions();
    void statusReportsDrift();
    void cliShowStatusAndDeploy();
    void downgradeIsRefusedWithoutReplace();
    void deployOnEveryMasterOfACluster();
    void aReaderIsToldTheLibraryIsNotReadable();
    void versionFromTheCodeWhenFcallIsRenamed();
    void aLibraryLoadedWhileDeployingStays();

private:
    ConnectionOptions as(const QString &user, const QString &password) const
    {
        ConnectionOptions o = m_server->options();
        o.user = user;
        o.password = password;
        return o;
    }
    QStringList cliBase() const { return {QStringLiteral("--url"), as(QStringLiteral("admin"), QStringLiteral("adminpw")).toUrl(true)}; }
    void loadLibrary(Connection &c, const QByteArray &code = FunctionLibrary::instance().code())
    {
        c.command({"FUNCTION", "LOAD", "REPLACE", code});
    }

    std::unique_ptr<SandboxServer> m_server;
    std::unique_ptr<Connection> m_conn;
};

void TestFunctions::initTestCase()
{
    SandboxServer::Config config = aclConfig();
    // What a service's read-only account needs for the _peek twins, and nothing more.
    config.configLines << QStringLiteral("user service on >servicepw ~* &* -@all +@read +fcall_ro");
    // The read-only user of docs/cli.md: reads and the scripts' read-only calls, no FCALL_RO.
    config.configLines << QStringLiteral("user plain on >plainpw ~* &* -@all +@read +@connection +evalsha_ro +eval_ro");
    // peekTwinsOnAReplica's replica syncs at once, not after the default 5 s diskless delay.
    config.configLines << QStringLiteral("repl-diskless-sync-delay 0") << QStringLiteral("shutdown-timeout 0");
    m_server = std::make_unique<SandboxServer>(config);
    m_server->start();
    m_conn = std::make_unique<Connection>(as(QStringLiteral("admin"), QStringLiteral("adminpw")));
}

void TestFunctions::init()
{
    m_conn->command({"FLUSHALL"});
    m_conn->command({"FUNCTION", "FLUSH"});
    m_conn->command({"SCRIPT", "FLUSH"});
    m_conn->command({"CONFIG", "RESETSTAT"});
    m_conn->setScriptCalls(std::nullopt);
}

void TestFunctions::libraryIsGeneratedFromTheScripts()
{
    const FunctionLibrary &lib = FunctionLibrary::instance();
    QVERIFY(lib.code().startsWith("#!lua name=ratescope\n"));
    QCOMPARE(lib.version(), QStringLiteral(RATESCOPE_VERSION));
    QVERIFY(lib.code().contains("local VERSION = '" + lib.version().toUtf8() + "'\n"));
    QVERIFY(lib.code().contains("local SCRIPTS = '" + lib.scriptsDigest() + "'\n"));
    // Each script, byte for byte, is the body of the function run at load that returns its decide:
    // the two forms cannot drift.
    for (Algorithm a : kAllAlgorithms) {
        const QByteArray fn = FunctionLibrary::functionName(a, false).mid(10); // without "ratescope_"
        const QByteArray wrapped = "local " + fn + " = (function(KEYS, ARGV)\n" + LimiterScript::forAlgorithm(a).source() + "\nend)()\n";
        QVERIFY2(lib.code().contains(wrapped), fn.constData());
    }
    // It loads, and registers exactly the documented functions.
    loadLibrary(*m_conn);
    const Reply list = m_conn->command({"FUNCTION", "LIST", "LIBRARYNAME", "ratescope"});
    QCOMPARE(list.size(), size_t(1));
    QSet<QByteArray> names, noWrites;
    const Reply &library = list[0];
    for (size_t k = 0; k + 1 < library.size(); k += 2) {
        if (library[k].bytes() != "functions")
            continue;
        for (const Reply &f : library[k + 1].elements()) {
            QByteArray name;
            bool flagged = false;
            for (size_t j = 0; j + 1 < f.size(); j += 2) {
                if (f[j].bytes() == "name")
                    name = f[j + 1].bytes();
                if (f[j].bytes() == "flags")
                    for (const Reply &flag : f[j + 1].elements())
                        flagged = flagged || flag.bytes() == "no-writes";
            }
            names.insert(name);
            if (flagged)
                noWrites.insert(name);
        }
    }
    QSet<QByteArray> expected, expectedNoWrites{"ratescope_version"};
    for (const QByteArray &n : FunctionLibrary::functionNames())
        expected.insert(n);
    for (Algorithm a : kAllAlgorithms)
        expectedNoWrites.insert(FunctionLibrary::functionName(a, true));
    QCOMPARE(names, expected);
    QCOMPARE(noWrites, expectedNoWrites);
    const Reply version = m_conn->command({"FCALL_RO", "ratescope_version", "0"});
    QCOMPARE(version[0].text(), lib.version());
    QCOMPARE(version[1].bytes(), lib.scriptsDigest());
}

void TestFunctions::releasesTable()
{
    const auto &known = knownReleases();
    QCOMPARE(known.size(), size_t(5)); // 0.1.0, one per algorithm
    for (const ReleasedScript &r : known)
        QCOMPARE(r.release, QStringLiteral("0.1.0"));
    QCOMPARE(known.front().sha1, QByteArray("a84eea7ad49c5044e05074fe6c3222a8950f60a4"));
    QVERIFY_THROWS_EXCEPTION(UsageError, parseReleases("0.1.0 sliding-log nothex\n"));
    QVERIFY_THROWS_EXCEPTION(UsageError, parseReleases("0.1.0 leaky a84eea7ad49c5044e05074fe6c3222a8950f60a4\n"));
    QCOMPARE(compareVersions(QStringLiteral("0.2.0"), QStringLiteral("0.10.0")), -1);
    QCOMPARE(compareVersions(QStringLiteral("1.0"), QStringLiteral("1.0.0")), 0);
    QCOMPARE(compareVersions(QStringLiteral("0.3.0"), QStringLiteral("0.2.9")), 1);
}

void TestFunctions::fcallAndEvalshaDecideIdentically_data()
{
    QTest::addColumn<Algorithm>("algorithm");
    QTest::addColumn<qint64>("limit");
    QTest::addColumn<qint64>("window");
    const std::pair<qint64, qint64> params[] = {
        {5, 10 * kSecond}, {7, 10 * kSecond + 3}, {1000000, 366LL * 86400 * kSecond}, {333, 17 * kSecond + 1}};
    for (Algorithm a : kAllAlgorithms)
        for (const auto &[limit, window] : params)
            QTest::addRow("%s L=%lld W=%lld", qPrintable(algorithmName(a)), limit, window) << a << limit << window;
}

void TestFunctions::fcallAndEvalshaDecideIdentically()
{
    // The reference model's replay, with explicit now, sent both ways to two keys: every
    // answer of FCALL (and of the FCALL_RO twin for peeks) equals EVALSHA's and the model's.
    QFETCH(Algorithm, algorithm);
    QFETCH(qint64, limit);
    QFETCH(qint64, window);
    loadLibrary(*m_conn);
    const LimiterScript &script = LimiterScript::forAlgorithm(algorithm);
    script.load(*m_conn);
    std::vector<std::unique_ptr<reference::Model>> models; // a fresh key and model each time the clock ran far ahead
    models.push_back(reference::makeModel(algorithmName(algorithm).toStdString(), limit, window));
    QRandomGenerator rng(quint32(limit * 17 + window % 977 + int(algorithm)));
    qint64 now = kT0 + rng.bounded(window);
    std::vector<Command> batch;
    std::vector<std::tuple<qint64, qint64, bool, size_t>> steps;
    for (int i = 0; i < 1500; ++i) {
        if (now > kT0 + 40 * 366LL * 86400 * kSecond) { // the scripts accept times up to 2^52 us (2112)
            models.push_back(reference::makeModel(algorithmName(algorithm).toStdString(), limit, window));
            now = kT0 + rng.bounded(window);
        }
        const QByteArray segment = ":" + QByteArray::number(qsizetype(models.size()));
        switch (rng.bounded(6)) {
        case 0:
            now = (now / window + 1) * window + (rng.bounded(3) - 1);
            break;
        case 1:
            now += rng.bounded(2 * window);
            break;
        case 2:
            break; // same microsecond
        default:
            now += rng.bounded(window / std::max<qint64>(1, limit) + 2);
        }
        const qint64 cost = 1 + qint64(rng.bounded(quint64(std::min<qint64>(limit, rng.bounded(8) == 0 ? limit : 4))));
        const bool peek = rng.bounded(5) == 0;
        const LimitSpec spec{algorithm, limit, window, cost};
        batch.push_back(
            script.command("viaeval" + segment, Limiter::arguments("viaeval" + segment, spec, now, peek), peek, ScriptCalls::Evalsha));
        batch.push_back(
            script.command("viafcall" + segment, Limiter::arguments("viafcall" + segment, spec, now, peek), peek, ScriptCalls::Functions));
        QCOMPARE(batch.back()[0], peek ? QByteArray("FCALL_RO") : QByteArray("FCALL"));
        steps.emplace_back(now, cost, peek, models.size() - 1);
    }
    const auto replies = m_conn->pipeline(batch);
    for (size_t i = 0; i < steps.size(); ++i) {
        const auto [at, cost, peek, segment] = steps[i];
        reference::Model &model = *models[segment];
        const reference::Decision m = peek ? model.peek(at, cost) : model.check(at, cost);
        const Decision expected{m.allowed, m.limit, m.used, m.remaining, m.retryAfterUs, m.resetAfterUs};
        QVERIFY2(!replies[2 * i].isError() && !replies[2 * i + 1].isError(),
                 qPrintable(replies[2 * i].text() + QLatin1Char(' ') + replies[2 * i + 1].text()));
        const Decision viaEval = Decision::fromReply(replies[2 * i]);
        const Decision viaFcall = Decision::fromReply(replies[2 * i + 1]);
        if (viaEval != viaFcall || viaFcall != expected)
            QFAIL(qPrintable(QStringLiteral("step %1 (%2): EVALSHA %3, FCALL %4, model %5")
                                 .arg(i)
                                 .arg(peek ? QStringLiteral("peek") : QStringLiteral("check"), toString(viaEval), toString(viaFcall),
                                      toString(expected))));
    }
    // And the state they leave is the same, byte for byte.
    const QByteArray last = ":" + QByteArray::number(qsizetype(models.size()));
    QCOMPARE(m_conn->command({"DUMP", "viafcall" + last}).bytes(), m_conn->command({"DUMP", "viaeval" + last}).bytes());
}

void TestFunctions::peekTwinsThroughFcallRoForAReadOnlyUser()
{
    loadLibrary(*m_conn);
    Limiter admin(*m_conn);
    for (Algorithm a : kAllAlgorithms) {
        const QByteArray key = "ro:" + algorithmName(a).toUtf8();
        const LimitSpec spec{a, 5, 10 * kSecond, 1};
        for (int i = 0; i < 3; ++i)
            admin.check(key, spec, kT0 + i);
    }
    // A service account with +@read +fcall_ro only: no EVALSHA_RO, no FUNCTION LIST.
    Connection service(as(QStringLiteral("service"), QStringLiteral("servicepw")));
    QCOMPARE(LimiterScript::callsOn(service), ScriptCalls::Functions);
    Limiter readOnly(service);
    for (Algorithm a : kAllAlgorithms) {
        const QByteArray key = "ro:" + algorithmName(a).toUtf8();
        const LimitSpec spec{a, 5, 10 * kSecond, 1};
        const QByteArray before = m_conn->command({"DUMP", key}).bytes();
        const Decision d = readOnly.peek(key, spec, kT0 + 5);
        QCOMPARE(d, admin.peek(key, spec, kT0 + 5));
        QCOMPARE(d.used, 4); // three counted, plus the one asked about
        // The twin peeks whatever the mode argument says: flagged no-writes, it never writes.
        const Reply twin = service.command(
            {"FCALL_RO", FunctionLibrary::functionName(a, true), "1", key, "5", "10000000", "1", QByteArray::number(kT0 + 5), "check"});
        QCOMPARE(Decision::fromReply(twin), d);
        QCOMPARE(m_conn->command({"DUMP", key}).bytes(), before);
        // The deciding function is not callable read-only, and the account may not FCALL.
        QVERIFY_THROWS_EXCEPTION(ReplyError, service.command({"FCALL_RO", FunctionLibrary::functionName(a, false), "1", key, "5",
                                                              "10000000", "1", QByteArray::number(kT0 + 5), "peek"}));
        QVERIFY_THROWS_EXCEPTION(ReplyError, readOnly.check(key, spec, kT0 + 6));
        QCOMPARE(m_conn->command({"DUMP", key}).bytes(), before);
    }
    QCOMPARE(m_conn->command({"EXISTS", "absent"}).integer(), 0);
}

void TestFunctions::peekTwinsOnAReplica()
{
    SandboxServer::Config c;
    c.configLines = {QStringLiteral("replicaof 127.0.0.1 %1").arg(m_server->port()), QStringLiteral("masteruser admin"),
                     QStringLiteral("masterauth adminpw")};
    SandboxServer replica(c);
    replica.start();
    loadLibrary(*m_conn);
    const LimitSpec spec{Algorithm::TokenBucket, 10, 10 * kSecond, 2};
    Limiter(*m_conn).check("replicated", spec, kT0);
    Connection onReplica(replica.options());
    QVERIFY(waitFor([&] { return onReplica.command({"EXISTS", "replicated"}).integer() == 1; }));
    // The library came with the replication stream: the replica runs the _peek twin.
    QCOMPARE(LimiterScript::callsOn(onReplica), ScriptCalls::Functions);
    const Decision fromReplica = Limiter(onReplica).peek("replicated", spec, kT0 + kSecond);
    QCOMPARE(fromReplica, Limiter(*m_conn).peek("replicated", spec, kT0 + kSecond));
    QCOMPARE(fromReplica.remaining, 7); // 10 - 2, plus one token refilled, minus none (peek)
    QCOMPARE(statCount(onReplica, "commandstats", "cmdstat_fcall_ro") > 0, true);
    QCOMPARE(statCount(onReplica, "commandstats", "cmdstat_evalsha_ro"), 0);
}

void TestFunctions::onlyThisBuildsLibraryIsCalled()
{
    const LimitSpec spec{Algorithm::FixedWindow, 3, 60 * kSecond, 1};
    // None loaded: EVALSHA.
    QCOMPARE(LimiterScript::callsOn(*m_conn), ScriptCalls::Evalsha);
    // An older release's library: EVALSHA, so answers never depend on older code.
    loadLibrary(*m_conn, libraryVariant(QStringLiteral("0.1.9")));
    Connection older(as(QStringLiteral("admin"), QStringLiteral("adminpw")));
    QCOMPARE(LimiterScript::callsOn(older), ScriptCalls::Evalsha);
    QCOMPARE(Limiter(older).check("v", spec, kT0).used, 1);
    // The same release built from other scripts: EVALSHA too.
    loadLibrary(*m_conn, libraryVariant(FunctionLibrary::instance().version(), QByteArray(40, 'a')));
    Connection other(as(QStringLiteral("admin"), QStringLiteral("adminpw")));
    QCOMPARE(LimiterScript::callsOn(other), ScriptCalls::Evalsha);
    // This build's: FCALL, and the state carries on across the two forms.
    loadLibrary(*m_conn);
    Connection current(as(QStringLiteral("admin"), QStringLiteral("adminpw")));
    QCOMPARE(LimiterScript::callsOn(current), ScriptCalls::Functions);
    const qint64 fcallsBefore = statCount(*m_conn, "commandstats", "cmdstat_fcall");
    QCOMPARE(Limiter(current).check("v", spec, kT0).used, 2);
    QCOMPARE(statCount(*m_conn, "commandstats", "cmdstat_fcall"), fcallsBefore + 1);
    // A user who may not call functions at all (NOPERM): EVALSHA, silently.
    m_conn->command({"ACL", "SETUSER", "nofcall", "on", ">nofcallpw", "~*", "&*", "+@all", "-fcall_ro", "-fcall", "-function"});
    Connection noFcall(as(QStringLiteral("nofcall"), QStringLiteral("nofcallpw")));
    QCOMPARE(LimiterScript::callsOn(noFcall), ScriptCalls::Evalsha);
    QCOMPARE(Limiter(noFcall).check("v", spec, kT0).used, 3);
    // Detection is once per connection: reconnecting asks again.
    m_conn->command({"FUNCTION", "DELETE", "ratescope"});
    QCOMPARE(LimiterScript::callsOn(current), ScriptCalls::Functions);
    current.disconnect();
    QCOMPARE(LimiterScript::callsOn(current), ScriptCalls::Evalsha);
}

void TestFunctions::functionNotFoundIsRecoveredOnce()
{
    loadLibrary(*m_conn);
    const LimitSpec spec{Algorithm::SlidingLog, 10, 60 * kSecond, 1};
    Connection c(as(QStringLiteral("admin"), QStringLiteral("adminpw")));
    Limiter limiter(c);
    QCOMPARE(limiter.check("gone", spec, kT0).used, 1);
    QCOMPARE(c.scriptCalls(), std::optional(ScriptCalls::Functions));
    // The library is deleted under the connection: FCALL answers "Function not found", nothing
    // ran, and the request goes again as EVALSHA, once: counted exactly once.
    m_conn->command({"FUNCTION", "DELETE", "ratescope"});
    m_conn->command({"SCRIPT", "FLUSH"}); // and NOSCRIPT on the way, recovered too
    QCOMPARE(limiter.check("gone", spec, kT0).used, 2);
    QCOMPARE(c.scriptCalls(), std::optional(ScriptCalls::Evalsha));
    QCOMPARE(statCount(*m_conn, "errorstats", "errorstat_ERR"), 1); // the one "Function not found"
    QCOMPARE(limiter.peek("gone", spec, kT0).used, 3);
    // A read-only caller is recovered the same way (EVALSHA_RO / EVAL_RO).
    loadLibrary(*m_conn);
    Connection reader(as(QStringLiteral("reader"), QStringLiteral("readerpw")));
    QCOMPARE(LimiterScript::callsOn(reader), ScriptCalls::Functions);
    m_conn->command({"FUNCTION", "DELETE", "ratescope"});
    QCOMPARE(Limiter(reader).peek("gone", spec, kT0).used, 3);
    // A failure that is not "not loaded" is never retried: WRONGTYPE once, no second call.
    loadLibrary(*m_conn);
    m_conn->command({"SET", "str", "x"});
    Connection fresh(as(QStringLiteral("admin"), QStringLiteral("adminpw")));
    const qint64 before = statCount(*m_conn, "commandstats", "cmdstat_fcall") + statCount(*m_conn, "commandstats", "cmdstat_evalsha");
    QVERIFY_THROWS_EXCEPTION(ReplyError, Limiter(fresh).check("str", spec, kT0));
    QCOMPARE(statCount(*m_conn, "commandstats", "cmdstat_fcall") + statCount(*m_conn, "commandstats", "cmdstat_evalsha"), before + 1);
}

void TestFunctions::survivesScriptFlushAndRestart()
{
    SandboxServer::Config config;
    config.configLines = {QStringLiteral("appendonly yes"), QStringLiteral("appendfsync always")};
    SandboxServer server(config);
    server.start();
    {
        Connection c(server.options());
        c.command({"FUNCTION", "LOAD", FunctionLibrary::instance().code()});
        const LimitSpec spec{Algorithm::Gcra, 5, 3600 * kSecond, 1};
        QCOMPARE(Limiter(c).check("persist", spec, kT0).used, 1);
        c.command({"SCRIPT", "FLUSH"});
        QCOMPARE(Limiter(c).check("persist", spec, kT0).used, 2);
    }
    server.restart();
    Connection c(server.options());
    QCOMPARE(LimiterScript::callsOn(c), ScriptCalls::Functions); // the library came back from the AOF
    const LimitSpec spec{Algorithm::Gcra, 5, 3600 * kSecond, 1};
    QCOMPARE(Limiter(c).check("persist", spec, kT0).used, 3);
    QCOMPARE(Limiter(c).peek("persist", spec, kT0).used, 4);
    // No NOSCRIPT, no script ever loaded: every decision went through the library.
    QCOMPARE(statCount(c, "errorstats", "errorstat_NOSCRIPT"), 0);
    QCOMPARE(statCount(c, "commandstats", "cmdstat_script|load"), 0);
    QCOMPARE(statCount(c, "commandstats", "cmdstat_fcall"), 1);
    QCOMPARE(statCount(c, "commandstats", "cmdstat_fcall_ro"), 2); // detection, then the peek
}

void TestFunctions::burstThroughTheLibrary()
{
    loadLibrary(*m_conn);
    BurstConfig config;
    config.key = "burst:fcall";
    config.spec = {Algorithm::TokenBucket, 50, 3600 * kSecond, 1}; // refills 0.005 tokens in the burst's 0.4 s
    config.requests = 200;
    config.rate = 500;
    config.connections = 2;
    config.pipeline = 5;
    BurstEngine engine(as(QStringLiteral("admin"), QStringLiteral("adminpw")), config);
    // The library is deleted while the burst runs: the requests that met "Function not
    // found" go once more as EVALSHA, and every request is counted exactly once.
    Connection other(as(QStringLiteral("admin"), QStringLiteral("adminpw")));
    bool deleted = false;
    engine.setProgressCallback([&](const BurstProgress &p) {
        if (!deleted && p.sent >= 40) {
            other.command({"FUNCTION", "DELETE", "ratescope"});
            deleted = true;
        }
    });
    const BurstSummary s = engine.run();
    QVERIFY(deleted);
    QCOMPARE(s.sent, 200);
    QCOMPARE(s.errors, 0);
    QCOMPARE(s.allowed, 50);
    QCOMPARE(s.denied, 150);
    const qint64 fcalls = statCount(*m_conn, "commandstats", "cmdstat_fcall");
    const qint64 evalshas = statCount(*m_conn, "commandstats", "cmdstat_evalsha");
    QVERIFY2(fcalls >= 40 && evalshas > 0, qPrintable(QStringLiteral("%1 FCALL, %2 EVALSHA").arg(fcalls).arg(evalshas)));
    // Each request ran once: the FCALLs that found no function ran nothing and went again.
    QCOMPARE(fcalls - statCount(*m_conn, "errorstats", "errorstat_ERR") + evalshas - statCount(*m_conn, "errorstats", "errorstat_NOSCRIPT"),
             200);
}

void TestFunctions::serverWithoutFunctions()
{
    // Redis 6 has no functions; Debian 12 has 7.0, so they are renamed away.
    SandboxServer::Config config;
    config.configLines = {QStringLiteral("rename-command FUNCTION \"\""), QStringLiteral("rename-command FCALL \"\""),
                          QStringLiteral("rename-command FCALL_RO \"\"")};
    SandboxServer server(config);
    server.start();
    Connection c(server.options());
    QCOMPARE(LimiterScript::callsOn(c), ScriptCalls::Evalsha);
    const LimitSpec spec{Algorithm::SlidingCounter, 2, 60 * kSecond, 1};
    QCOMPARE(Limiter(c).check("old", spec, kT0).used, 1);
    QCOMPARE(Limiter(c).peek("old", spec, kT0).used, 2);
    const QStringList base{QStringLiteral("--url"), server.url()};
    const CliResult deploy = runCli(base + QStringList{QStringLiteral("scripts"), QStringLiteral("deploy")});
    QCOMPARE(deploy.exitCode, 4);
    QVERIFY2(deploy.err.contains("has no Redis Functions") && deploy.err.contains("Redis 7 or later") && deploy.err.contains("EVALSHA"),
             deploy.err.constData());
    const CliResult status = runCli(base + QStringList{QStringLiteral("--json"), QStringLiteral("scripts"), QStringLiteral("status")});
    QCOMPARE(status.exitCode, 0);
    const QJsonObject o = jsonOf(status);
    QCOMPARE(o.value(QStringLiteral("summary")).toString(), QStringLiteral("script cache only (no Redis Functions on this server)"));
    QCOMPARE(o.value(QStringLiteral("masters")).toArray().at(0).toObject().value(QStringLiteral("functions")).toBool(), false);
    // The script the check loaded is reported in the cache.
    const QJsonArray algos = o.value(QStringLiteral("algorithms")).toArray();
    QCOMPARE(algos.at(int(Algorithm::SlidingCounter)).toObject().value(QStringLiteral("cached_on")).toArray().size(), 1);
    QCOMPARE(algos.at(int(Algorithm::Gcra)).toObject().value(QStringLiteral("cached_on")).toArray().size(), 0);
}

void TestFunctions::statusReportsDrift()
{
    // An older release's script in the cache: some service still runs it. The table names its
    // SHA-1; here a made-up 0.0.9 whose script differs from this release's by a comment.
    const LimiterScript &log = LimiterScript::forAlgorithm(Algorithm::SlidingLog);
    const QByteArray oldSource = log.source() + "\n-- 0.0.9\n";
    const QByteArray oldSha = m_conn->command({"SCRIPT", "LOAD", oldSource}).bytes();
    std::vector<ReleasedScript> known = knownReleases();
    known.push_back({QStringLiteral("0.0.9"), Algorithm::SlidingLog, oldSha});
    known.push_back({QStringLiteral("0.0.8"), Algorithm::Gcra, QByteArray(40, 'b')}); // not cached anywhere
    // A release whose script is unchanged is not drift, even though its SHA-1 is cached.
    known.push_back({QStringLiteral("0.0.7"), Algorithm::FixedWindow, LimiterScript::forAlgorithm(Algorithm::FixedWindow).sha1()});
    LimiterScript::forAlgorithm(Algorithm::FixedWindow).load(*m_conn);
    ScriptsStatus s = readScriptsStatus(*m_conn, known);
    QCOMPARE(s.drift(), QStringList{QStringLiteral("sliding-log of 0.0.9")});
    QCOMPARE(s.summary(), QStringLiteral("script cache only; older scripts found: sliding-log of 0.0.9"));
    QCOMPARE(s.masters.size(), size_t(1));
    QVERIFY(s.masters[0].cached[size_t(Algorithm::FixedWindow)]);
    QVERIFY(!s.masters[0].cached[size_t(Algorithm::SlidingLog)]);
    loadLibrary(*m_conn);
    s = readScriptsStatus(*m_conn, known);
    QCOMPARE(s.summary(), QStringLiteral("functions library ratescope %1 loaded; older scripts found: sliding-log of 0.0.9")
                              .arg(FunctionLibrary::instance().version()));
    m_conn->command({"SCRIPT", "FLUSH"});
    QVERIFY(readScriptsStatus(*m_conn, known).drift().isEmpty());
    // A reader (no FUNCTION LIST, no SCRIPT EXISTS) still learns the version, through FCALL_RO.
    Connection reader(as(QStringLiteral("reader"), QStringLiteral("readerpw")));
    s = readScriptsStatus(reader, known);
    QVERIFY(s.masters[0].hasThisBuild());
    QVERIFY(!s.masters[0].cacheProblem.isEmpty());
}

void TestFunctions::cliShowStatusAndDeploy()
{
    const QStringList scripts{QStringLiteral("scripts")};
    // show: the exact bytes, ready for redis-cli -x.
    CliResult r = runCli(cliBase() + scripts + QStringList{QStringLiteral("show"), QStringLiteral("gcra")});
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.out, LimiterScript::forAlgorithm(Algorithm::Gcra).source());
    r = runCli(cliBase() + scripts + QStringList{QStringLiteral("show"), QStringLiteral("library")});
    QCOMPARE(r.out, FunctionLibrary::instance().code());
    QCOMPARE(runCli(cliBase() + scripts + QStringList{QStringLiteral("show"), QStringLiteral("leaky")}).exitCode, 2);
    QCOMPARE(runCli(cliBase() + scripts + QStringList{QStringLiteral("frobnicate")}).exitCode, 2);

    r = runCli(cliBase() + QStringList{QStringLiteral("--json")} + scripts + QStringList{QStringLiteral("status")});
    QCOMPARE(r.exitCode, 0);
    QJsonObject o = jsonOf(r);
    QCOMPARE(o.value(QStringLiteral("summary")).toString(), QStringLiteral("script cache only"));
    QCOMPARE(o.value(QStringLiteral("release")).toString(), FunctionLibrary::instance().version());
    QCOMPARE(o.value(QStringLiteral("masters_with_library")).toInt(), 0);

    // Read-only: refused before anything is sent.
    r = runCli(cliBase() + QStringList{QStringLiteral("--read-only")} + scripts + QStringList{QStringLiteral("deploy")});
    QCOMPARE(r.exitCode, 5);
    QCOMPARE(m_conn->command({"FUNCTION", "LIST"}).size(), size_t(0));

    r = runCli(cliBase() + QStringList{QStringLiteral("--operator"), QStringLiteral("Dana")} + scripts +
               QStringList{QStringLiteral("deploy")});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("load ratescope " + FunctionLibrary::instance().version().toUtf8()), r.out.constData());
    QVERIFY2(r.out.contains("loaded ratescope"), r.out.constData());
    QCOMPARE(m_conn->command({"FCALL_RO", "ratescope_version", "0"})[0].text(), FunctionLibrary::instance().version());
    // One audit entry saying what was loaded where.
    std::vector<AuditEntry> audit = AuditLog(*m_conn, QStringLiteral("ratescope:")).list(10);
    QCOMPARE(audit.size(), size_t(1));
    QCOMPARE(audit[0].action, QStringLiteral("scripts.deploy"));
    QCOMPARE(audit[0].actor, QStringLiteral("Dana"));
    QCOMPARE(audit[0].target, QStringLiteral("ratescope ") + FunctionLibrary::instance().version());
    QCOMPARE(audit[0].count, 1);
    const QJsonObject after = QJsonDocument::fromJson(audit[0].after.toUtf8()).object();
    QCOMPARE(after.value(QStringLiteral("functions")).toArray().size(),
             2 * int(std::size(kAllAlgorithms)) + 1); // each algorithm, its _peek, the version
    QCOMPARE(after.value(QStringLiteral("masters")).toArray().at(0).toObject().value(QStringLiteral("address")).toString(),
             QStringLiteral("127.0.0.1:%1").arg(m_server->port()));

    // Deploying again has nothing to do, and records nothing.
    r = runCli(cliBase() + scripts + QStringList{QStringLiteral("deploy")});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("already loaded"), r.out.constData());
    QCOMPARE(AuditLog(*m_conn, QStringLiteral("ratescope:")).list(10).size(), size_t(1));

    r = runCli(cliBase() + scripts + QStringList{QStringLiteral("status")});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("functions library ratescope " + FunctionLibrary::instance().version().toUtf8() + " loaded"),
             r.out.constData());
    QVERIFY2(r.out.contains("(this release)"), r.out.constData());

    // An older release's library is upgraded without --replace.
    loadLibrary(*m_conn, libraryVariant(QStringLiteral("0.1.5")));
    r = runCli(cliBase() + QStringList{QStringLiteral("--json")} + scripts + QStringList{QStringLiteral("deploy")});
    QCOMPARE(r.exitCode, 0);
    o = jsonOf(r);
    QCOMPARE(o.value(QStringLiteral("masters")).toArray().at(0).toObject().value(QStringLiteral("action")).toString(),
             QStringLiteral("upgrade"));
    QCOMPARE(o.value(QStringLiteral("loaded_on")).toInt(), 1);
    QCOMPARE(m_conn->command({"FCALL_RO", "ratescope_version", "0"})[0].text(), FunctionLibrary::instance().version());
}

void TestFunctions::downgradeIsRefusedWithoutReplace()
{
    {
        // A version with terminal controls in it is shown escaped.
        loadLibrary(*m_conn, libraryVariant(QStringLiteral("9.0\\27]0;pwned\\7\\13"))); // Lua escapes: ESC, BEL, CR
        const CliResult status = runCli(cliBase() + QStringList{QStringLiteral("scripts"), QStringLiteral("status")});
        QCOMPARE(status.exitCode, 0);
        QVERIFY2(!status.out.contains('\x1b') && !status.out.contains('\x07') && !status.out.contains('\r'), status.out.constData());
        QVERIFY2(status.out.contains("9.0\\x1b]0;pwned\\x07\\x0d"), status.out.constData());
    }
    const QByteArray newer = libraryVariant(QStringLiteral("9.0.0"));
    loadLibrary(*m_conn, newer);
    const QStringList deploy{QStringLiteral("scripts"), QStringLiteral("deploy")};
    CliResult r = runCli(cliBase() + deploy);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("9.0.0") && r.err.contains("--replace"), r.err.constData());
    QCOMPARE(m_conn->command({"FCALL_RO", "ratescope_version", "0"})[0].text(), QStringLiteral("9.0.0"));
    QCOMPARE(AuditLog(*m_conn, QStringLiteral("ratescope:")).list(10).size(), size_t(0));
    // The same release from other scripts is not replaced silently either.
    loadLibrary(*m_conn, libraryVariant(FunctionLibrary::instance().version(), QByteArray(40, 'c')));
    QCOMPARE(runCli(cliBase() + deploy).exitCode, 2);
    loadLibrary(*m_conn, newer);
    r = runCli(cliBase() + deploy + QStringList{QStringLiteral("--replace")});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("replace 9.0.0 with"), r.out.constData());
    QCOMPARE(m_conn->command({"FCALL_RO", "ratescope_version", "0"})[0].text(), FunctionLibrary::instance().version());
    const std::vector<AuditEntry> audit = AuditLog(*m_conn, QStringLiteral("ratescope:")).list(10);
    QCOMPARE(audit.size(), size_t(1));
    QVERIFY2(audit[0].before.contains("9.0.0"), qPrintable(audit[0].before));
}

void TestFunctions::deployOnEveryMasterOfACluster()
{
    TestCluster cluster(3);
    const QStringList base{QStringLiteral("--url"), cluster.url()};
    CliResult r = runCli(base + QStringList{QStringLiteral("scripts"), QStringLiteral("deploy")});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("on 3 of 3 masters"), r.out.constData());
    for (int i = 0; i < 3; ++i) {
        Connection node(cluster.node(i).options());
        QCOMPARE(node.command({"FCALL_RO", "ratescope_version", "0"})[0].text(), FunctionLibrary::instance().version());
    }
    r = runCli(base + QStringList{QStringLiteral("--json"), QStringLiteral("scripts"), QStringLiteral("status")});
    QCOMPARE(r.exitCode, 0);
    QJsonObject o = jsonOf(r);
    QCOMPARE(o.value(QStringLiteral("summary")).toString(),
             QStringLiteral("functions library ratescope %1 on 3 of 3 masters").arg(FunctionLibrary::instance().version()));

    // Decisions on keys of every master go through FCALL, with no script loaded anywhere.
    Connection c(ConnectionOptions::fromUrl(cluster.url()));
    QCOMPARE(LimiterScript::callsOn(c), ScriptCalls::Functions);
    QSet<int> owners;
    for (int k = 0; k < 12; ++k) {
        const QByteArray key = "cluster:" + QByteArray::number(k);
        owners.insert(cluster.ownerOf(key));
        QCOMPARE(Limiter(c).check(key, {Algorithm::SlidingLog, 5, 60 * kSecond, 1}, kT0).used, 1);
    }
    QCOMPARE(owners.size(), 3);
    for (int i = 0; i < 3; ++i) {
        Connection node(cluster.node(i).options());
        QCOMPARE(statCount(node, "commandstats", "cmdstat_evalsha"), 0);
    }

    // An older script cached on one master is drift on that master.
    Connection node1(cluster.node(1).options());
    const QByteArray oldSha =
        node1.command({"SCRIPT", "LOAD", LimiterScript::forAlgorithm(Algorithm::Gcra).source() + "\n-- 0.0.9\n"}).bytes();
    std::vector<ReleasedScript> known = knownReleases();
    known.push_back({QStringLiteral("0.0.9"), Algorithm::Gcra, oldSha});
    const ScriptsStatus s = readScriptsStatus(c, known);
    QCOMPARE(s.masters.size(), size_t(3));
    QCOMPARE(s.summary(), QStringLiteral("functions library ratescope %1 on 3 of 3 masters; older scripts found: gcra of 0.0.9")
                              .arg(FunctionLibrary::instance().version()));
    int withDrift = 0;
    for (const ScriptsNodeStatus &m : s.masters)
        if (!m.olderFound.empty()) {
            ++withDrift;
            QCOMPARE(m.address, QStringLiteral("127.0.0.1:%1").arg(cluster.node(1).port()));
        }
    QCOMPARE(withDrift, 1);

    // A newer library on one master refuses the whole deploy: nothing is loaded anywhere.
    node1.command({"FUNCTION", "LOAD", "REPLACE", libraryVariant(QStringLiteral("9.0.0"))});
    Connection node0(cluster.node(0).options());
    node0.command({"FUNCTION", "DELETE", "ratescope"});
    r = runCli(base + QStringList{QStringLiteral("scripts"), QStringLiteral("deploy")});
    QCOMPARE(r.exitCode, 2);
    QCOMPARE(node0.command({"FUNCTION", "LIST"}).size(), size_t(0));
    r = runCli(base + QStringList{QStringLiteral("scripts"), QStringLiteral("deploy"), QStringLiteral("--replace")});
    QCOMPARE(r.exitCode, 0);
    for (int i = 0; i < 3; ++i) {
        Connection node(cluster.node(i).options());
        QCOMPARE(node.command({"FCALL_RO", "ratescope_version", "0"})[0].text(), FunctionLibrary::instance().version());
    }
}

QTEST_GUILESS_MAIN(TestFunctions)
void TestFunctions::aReaderIsToldTheLibraryIsNotReadable()
{
    // A loaded library this user may not see (no FUNCTION LIST, no FCALL_RO): never "no library".
    loadLibrary(*m_conn);
    const QStringList plain{QStringLiteral("--url"), as(QStringLiteral("plain"), QStringLiteral("plainpw")).toUrl(true)};
    CliResult r = runCli(plain + QStringList{QStringLiteral("scripts"), QStringLiteral("status")});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("summary  functions library not readable by this user"), r.out.constData());
    QVERIFY2(r.out.contains("library not readable: NOPERM"), r.out.constData());
    QVERIFY2(!r.out.contains("no library") && !r.out.contains("script cache only"), r.out.constData());
    r = runCli(plain + QStringList{QStringLiteral("--json"), QStringLiteral("scripts"), QStringLiteral("status")});
    const QJsonObject master = jsonOf(r).value(QStringLiteral("masters")).toArray().at(0).toObject();
    QVERIFY2(master.value(QStringLiteral("library_loaded")).isNull(), r.out.constData());
}

void TestFunctions::versionFromTheCodeWhenFcallIsRenamed()
{
    SandboxServer::Config config;
    config.configLines = {QStringLiteral("rename-command FCALL \"\""), QStringLiteral("rename-command FCALL_RO \"\"")};
    SandboxServer server(config);
    server.start();
    const QStringList base{QStringLiteral("--url"), server.url()};
    const QStringList deploy = base + QStringList{QStringLiteral("scripts"), QStringLiteral("deploy")};
    QCOMPARE(runCli(deploy).exitCode, 0);
    // Its own library, read from FUNCTION LIST WITHCODE: this release's, and a second deploy
    // has nothing to do.
    CliResult r = runCli(base + QStringList{QStringLiteral("scripts"), QStringLiteral("status")});
    QVERIFY2(r.out.contains("library " + FunctionLibrary::instance().version().toUtf8() + " (this release)"), r.out.constData());
    r = runCli(deploy);
    QVERIFY2(r.exitCode == 0 && r.out.contains("already loaded"), r.err.constData());
    // Another release's, by the version its code states.
    Connection c(server.options());
    c.command({"FUNCTION", "LOAD", "REPLACE", libraryVariant(QStringLiteral("0.1.5"))});
    const ScriptsStatus status = readScriptsStatus(c);
    QVERIFY(status.masters[0].library);
    QCOMPARE(status.masters[0].library->version, QStringLiteral("0.1.5"));
    r = runCli(deploy);
    QVERIFY2(r.exitCode == 0 && r.out.contains("upgrade 0.1.5 to"), r.out.constData());
}

void TestFunctions::aLibraryLoadedWhileDeployingStays()
{
    // Checked, then another writer loads a newer library before ours goes: it is not replaced
    // (where none was, FUNCTION LOAD fails; where one was, it is put back at once).
    for (const bool noneBefore : {true, false}) {
        m_conn->command({"FUNCTION", "FLUSH"});
        if (!noneBefore)
            loadLibrary(*m_conn, libraryVariant(QStringLiteral("0.1.5")));
        const DeployPlan plan = planDeploy(readScriptsStatus(*m_conn), false);
        QVERIFY(plan.needsLoad());
        loadLibrary(*m_conn, libraryVariant(QStringLiteral("9.0.0")));
        try {
            deployLibrary(*m_conn, plan);
            QFAIL("deployed over a library it had not checked");
        } catch (const ReplyError &e) {
            QVERIFY2(e.message().contains(noneBefore ? "was loaded there while deploying" : "changed while deploying"),
                     qPrintable(e.message()));
        }
        QCOMPARE(m_conn->command({"FCALL_RO", "ratescope_version", "0"})[0].text(), QStringLiteral("9.0.0"));
    }
    // Unchanged since the check: loaded.
    loadLibrary(*m_conn, libraryVariant(QStringLiteral("0.1.5")));
    QCOMPARE(deployLibrary(*m_conn, planDeploy(readScriptsStatus(*m_conn), false)), 1);
    QCOMPARE(m_conn->command({"FCALL_RO", "ratescope_version", "0"})[0].text(), FunctionLibrary::instance().version());
}

#include "tst_functions.moc"
