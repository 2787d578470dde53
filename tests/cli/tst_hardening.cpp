// The CLI and core under hostile input and faults: replies this build cannot use, exit codes,
// mutations whose audit entry cannot be written, deletes of what no limiter is, loose input.
#include "builtpaths.h"
#include "admin/audit.h"
#include "redis/connection.h"
#include "base/errors.h"
#include "limiters/limiter.h"
#include "admin/policy.h"
#include "keys/keyscanner.h"
#include "keys/reset.h"
#include "redis/sandboxserver.h"
#include "testsupport.h"

#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <csignal>
#include <set>
#include <fcntl.h>
#include <functional>
#include <sys/stat.h>
#include <unistd.h>

Q_DECLARE_METATYPE(ratescope::Algorithm)

using namespace ratescope;
using namespace ratescope::test;

namespace {

const QString kNs = QStringLiteral("ratescope:");

QStringList args(std::initializer_list<const char *> list)
{
    QStringList out;
    for (const char *a : list)
        out << QString::fromUtf8(a);
    return out;
}

QJsonObject lastJsonLine(const QByteArray &out)
{
    const QList<QByteArray> lines = out.trimmed().split('\n');
    return QJsonDocument::fromJson(lines.last()).object();
}

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("(unreadable)");
}

void writeFile(const QString &path, const QByteArray &content, mode_t mode = 0644)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(content), content.size());
    f.close();
    QCOMPARE(::chmod(QFile::encodeName(path).constData(), mode), 0);
}

struct stat statOf(const QString &path)
{
    struct stat st = {};
    if (::lstat(QFile::encodeName(path).constData(), &st) != 0)
        st.st_mode = 0;
    return st;
}

// A simulate trace: `keys` keys of `each` requests, a millisecond apart.
QByteArray traceCsv(int keys, int each)
{
    QByteArray csv = "time,key\n";
    for (int k = 0; k < keys; ++k)
        for (int i = 0; i < each; ++i)
            csv += QByteArray::number(1795400000000000LL + i * 1000) + ",t:" + QByteArray::number(k) + '\n';
    return csv;
}

QStringList burstTo(const QString &timeline)
{
    return args({"burst", "fb:1", "--algo", "fixed-window", "--limit", "5", "--window", "1m", "--requests", "8", "--timeline"}) +
           QStringList{timeline};
}

QStringList simulateTo(const QString &trace, const QString &decisions)
{
    return QStringList{QStringLiteral("simulate"), QStringLiteral("--trace"), trace} +
           args({"--algo", "fixed-window", "--limit", "5", "--window", "1m", "--decisions"}) + QStringList{decisions};
}

// A folder's entries, hidden ones included: a temporary file left behind would show.
QStringList entries(const QString &dir)
{
    return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot, QDir::Name);
}

} // namespace

class TestHardening : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();

    // Errors in their classes, exit codes.
    void badPolicyRecordIsSkipped();
    void handWrittenPolicyRecordsAreSkipped();
    void skippedRecordsAreNamedWhereTheyMatter();
    void smallerWrongAnswers();
    void wrongFieldsExitTwo();
    void conflictsHaveTheirOwnExitCode();
    void exitCodesFollowTheTable_data();
    void exitCodesFollowTheTable();
    void peekFromFieldsMatchesTheScripts();
    void peekFromFieldsMatchesAfterTraffic_data();
    void peekFromFieldsMatchesAfterTraffic();
    void peekFromFieldsRefusesLikeTheScripts();
    void peekWithoutScriptPermission();
    void interruptedKeysSayIncomplete_data();
    void interruptedKeysSayIncomplete();

    // A mutation and its audit entry succeed or fail together.
    void noChangeWithoutAnAuditEntry_data();
    void noChangeWithoutAnAuditEntry();
    void namespaceCollidingWithAppKeys();
    void interruptedResetRecordsIntentAndConfirmedCount();
    void resetWhenTheServerDiesMatchesWhatItHolds_data();
    void resetWhenTheServerDiesMatchesWhatItHolds();
    void burstWhenTheServerDiesMatchesWhatItHolds();
    void clearingNothingIsNotAudited();
    void burstAndBoundaryNeedTheirRecord();

    // Deletes that must be asked for explicitly; broken globs.
    void resetRefusesNonLimiterTypes();
    void resetRefusesMetadata();
    void checkAndBurstWriteOnlyTheirOwnKeys();
    void noLimiterBesideAnotherServicesWindows();
    void boundaryKeyIsRefusedLikeCheck();
    void brokenGlobsAreRejected_data();
    void brokenGlobsAreRejected();
    void policyGlobMustNotCoverTheNamespace();
    void policyListAlignsByShownWidth();

    // Input taken strictly.
    void looseInputIsRefused_data();
    void looseInputIsRefused();
    void missingUnixSocketIsNamed();
    void urlParametersAreGivenOnce_data();
    void urlParametersAreGivenOnce();
    void traceRowsAreReadStrictly_data();
    void traceRowsAreReadStrictly();
    void aByteOrderMarkStartsNoRow();
    void anUnclosedQuoteIsReadOnce();
    void digitsPastTheMicrosecondAreNamed();
    void nowFarAheadOnAnExistingKey();

    // Files written (--timeline, --decisions): checked first, never destroying what they replace.
    void outputPathsAreCheckedFirst_data();
    void outputPathsAreCheckedFirst();
    void regularFilesAreReplacedWholeWithTheirMode();
    void devicesAndFifosAreWrittenInPlace();
    void dashIsStandardOutput();
    void theTraceIsNeverTheDecisions();
    void failedOrInterruptedRunsKeepTheOldFile();

    // Other services' numbers in 64-bit arithmetic.
    void hugeForeignCountersDoNotOverflow();
    void hugeForeignScoresDoNotOverflow();
    void overLimitStateIsShownAsItIs();
    void bucketWidthIsAnInteger();

    // A key of millions of fields costs a bounded read.
    void aGiantBucketHashIsReadBounded();

private:
    ConnectionOptions as(const char *user, const char *password) const
    {
        ConnectionOptions o = m_server->options();
        o.user = QString::fromLatin1(user);
        o.password = QString::fromLatin1(password);
        return o;
    }
    QStringList cli(const QStringList &a, const char *user = "admin", const char *password = "adminpw") const
    {
        return QStringList{QStringLiteral("--url"), as(user, password).toUrl(true)} + a;
    }
    qint64 auditLength(const QByteArray &stream = "ratescope:audit") { return m_conn->command({"XLEN", stream}).integer(); }
    QByteArray snapshot() { return keyspaceSnapshot(*m_conn); }

    std::unique_ptr<SandboxServer> m_server;
    std::unique_ptr<Connection> m_conn;
};

void TestHardening::initTestCase()
{
    m_server = std::make_unique<SandboxServer>(aclConfig());
    m_server->start();
    m_conn = std::make_unique<Connection>(as("admin", "adminpw"));
}

void TestHardening::init()
{
    m_conn->command({"FLUSHALL"});
}

void TestHardening::badPolicyRecordIsSkipped()
{
    m_conn->command(
        {"HSET", "ratescope:policies", "future", R"({"name":"future","match":"f:*","algorithm":"quantum","limit":5,"window_us":1000000})"});
    m_conn->command({"HSET", "ratescope:policies", "garbage", "not json at all"});
    Policy p;
    p.name = QStringLiteral("api");
    p.match = "api:*";
    p.spec = {Algorithm::Gcra, 5, 1000000, 1};
    PolicyStore(*m_conn, kNs).set(p, 0, QStringLiteral("t"));

    QStringList skipped;
    const auto policies = PolicyStore(*m_conn, kNs).list(&skipped);
    QCOMPARE(policies.size(), size_t(1));
    QCOMPARE(skipped.size(), 2);

    // The other policies keep working; the bad records are named on stderr.
    const CliResult check = runCli(cli({QStringLiteral("--json"), QStringLiteral("check"), QStringLiteral("api:1")}));
    QVERIFY2(check.exitCode == 0, check.err.constData());
    QVERIFY2(check.err.contains("warning: policy record 'future' skipped"), check.err.constData());
    QCOMPARE(lastJsonLine(check.out).value(QStringLiteral("limit")).toInt(), 5);
    const CliResult list = runCli(cli({QStringLiteral("policy"), QStringLiteral("list")}));
    QCOMPARE(list.exitCode, 0);
    QVERIFY(list.out.contains("api:*"));
    QVERIFY(list.err.contains("'garbage' skipped"));

    // Asking for the bad one itself: the server answered, with content this build cannot
    // use: exit 4, not a connection error (3).
    const CliResult get =
        runCli(cli({QStringLiteral("--json"), QStringLiteral("policy"), QStringLiteral("get"), QStringLiteral("future")}));
    QCOMPARE(get.exitCode, 4);
    QCOMPARE(lastJsonLine(get.out).value(QStringLiteral("error")).toObject().value(QStringLiteral("kind")).toString(),
             QStringLiteral("unexpected-reply"));
}

// A record this build cannot read is named where the command takes limits from the policies,
// once; not by burst, boundary or a check whose flags give every limit (they use no policy's
// limits: the policies are asked only whether one declares the key another library's).
void TestHardening::skippedRecordsAreNamedWhereTheyMatter()
{
    m_conn->command({"HSET", "ratescope:policies", "garbage", "not json at all"});
    Policy p;
    p.name = QStringLiteral("api");
    p.match = "api:*";
    p.spec = {Algorithm::FixedWindow, 50, 60000000, 1};
    PolicyStore(*m_conn, kNs).set(p, 0, QStringLiteral("t"));
    const QStringList limits = args({"--algo", "fixed-window", "--limit", "50", "--window", "1m"});
    const QList<QStringList> quiet = {
        args({"burst", "api:1", "--requests", "3"}) + limits,
        args({"burst", "api:2", "--requests", "3", "--shards", "3"}) + limits,
        args({"boundary", "--key", "api:3", "--algo", "fixed-window", "--limit", "50", "--window", "1s"}),
        args({"check", "api:4"}) + limits,
    };
    for (const QStringList &command : quiet) {
        const CliResult r = runCli(cli(command));
        QVERIFY2(r.exitCode == 0, qPrintable(command.join(QLatin1Char(' ')) + QLatin1Char(' ') + QString::fromUtf8(r.err)));
        QVERIFY2(!r.err.contains("warning"), qPrintable(command.join(QLatin1Char(' ')) + QLatin1Char(' ') + QString::fromUtf8(r.err)));
    }
    // Limits from the policies: the record is named, once.
    const CliResult check = runCli(cli(args({"check", "api:5"})));
    QVERIFY2(check.exitCode == 0, check.err.constData());
    QCOMPARE(check.err.count("warning: policy record 'garbage' skipped"), 1);

    // The policies are still asked: one declaring the key another library's refuses a burst.
    Policy foreign;
    foreign.name = QStringLiteral("flexible");
    foreign.match = "rlflx:*";
    foreign.format = QStringLiteral("rate-limiter-flexible");
    foreign.spec = {Algorithm::FixedWindow, 50, 60000000, 1};
    PolicyStore(*m_conn, kNs).set(foreign, 0, QStringLiteral("t"));
    const CliResult refused = runCli(cli(args({"burst", "rlflx:new", "--requests", "3"}) + limits));
    QVERIFY2(refused.exitCode == 2, refused.err.constData());
    QVERIFY2(!refused.err.contains("warning"), refused.err.constData());
    QCOMPARE(m_conn->command({"EXISTS", "rlflx:new"}).integer(), 0);
}

void TestHardening::handWrittenPolicyRecordsAreSkipped()
{
    // Records no `policy set` writes: each skipped with a warning naming it, never listed, never
    // breaking a check with a message that names no policy.
    const QList<QPair<QByteArray, QByteArray>> records = {
        {"neg", R"({"name":"neg","match":"n:*","algorithm":"gcra","limit":-5,"window_us":1000000})"},
        {"zero", R"({"name":"zero","match":"n:*","algorithm":"gcra","limit":5,"window_us":0})"},
        {"huge", R"({"name":"huge","match":"n:*","algorithm":"gcra","limit":1e30,"window_us":1000000})"},
        {"alias", R"({"name":"other","match":"n:*","algorithm":"gcra","limit":5,"window_us":1000000})"},
        {"text", "{not json"},
        {"array", "[1,2]"},
    };
    for (const auto &[field, value] : records)
        m_conn->command({"HSET", "ratescope:policies", field, value});
    QStringList skipped;
    QVERIFY(PolicyStore(*m_conn, kNs).list(&skipped).empty());
    QCOMPARE(skipped.size(), records.size());
    const CliResult list = runCli(cli(args({"policy", "list"})));
    QCOMPARE(list.exitCode, 0);
    QVERIFY2(!list.out.contains("n:*"), list.out.constData());
    for (const auto &[field, value] : records)
        QVERIFY2(list.err.contains("policy record '" + field + "' skipped"), list.err.constData());
    QVERIFY2(list.err.contains("its name 'other' is not the field 'alias'"), list.err.constData());
    // check: no policy covers n:1 (said so, exit 2); with the flags it decides.
    const CliResult check = runCli(cli(args({"check", "n:1"})));
    QCOMPARE(check.exitCode, 2);
    QVERIFY2(check.err.contains("no policy matches 'n:1'") && check.err.contains("warning: policy record 'neg' skipped"),
             check.err.constData());
    QCOMPARE(runCli(cli(args({"check", "n:1", "--algo", "gcra", "--limit", "5", "--window", "1s"}))).exitCode, 0);
    // get names the record (exit 4); a set replaces it; a policy that does not exist is exit 6.
    const CliResult get = runCli(cli(args({"policy", "get", "neg"})));
    QVERIFY2(get.exitCode == 4 && get.err.contains("limit"), get.err.constData());
    QCOMPARE(runCli(cli(args({"policy", "set", "neg", "--match", "n:*", "--algo", "gcra", "--limit", "5", "--window", "1s"}))).exitCode,
             0);
    QCOMPARE(runCli(cli(args({"policy", "get", "neg"}))).exitCode, 0);
    for (const char *action : {"get", "delete"}) {
        const CliResult missing = runCli(cli(args({"--json", "policy", action, "nothing-here"})));
        QVERIFY2(missing.exitCode == 6, missing.err.constData());
        QCOMPARE(lastJsonLine(missing.out).value(QStringLiteral("error")).toObject().value(QStringLiteral("kind")).toString(),
                 QStringLiteral("conflict"));
    }
}

void TestHardening::smallerWrongAnswers()
{
    // watch --algo naming another algorithm than the key's: refused as peek refuses it. (A
    // minute's window: a key of 1 s could expire before the next command under a sanitizer.)
    QCOMPARE(runCli(cli(args({"check", "g:1", "--algo", "gcra", "--limit", "5", "--window", "1m"}))).exitCode, 0);
    CliResult r = runCli(cli(args({"watch", "g:1", "--algo", "sliding-log", "--limit", "5", "--window", "1m", "--count", "1"})));
    QVERIFY2(r.exitCode == 2 && r.err.contains("'g:1' is a gcra; --algo sliding-log does not fit it"), r.err.constData());
    // inspect --now-us 0 reads at 0, not at the server's clock.
    r = runCli(cli(args({"--json", "inspect", "g:1", "--now-us", "0"})));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QCOMPARE(lastJsonLine(r.out).value(QStringLiteral("now_us")).toInteger(-1), 0);
    // A full sharded limiter, inspected by its base with the limits as flags: the group's answer.
    for (int i = 0; i < 4; ++i) {
        const QByteArray shard = "rl:{t}:" + QByteArray::number(i);
        QCOMPARE(runCli(cli(QStringList{QStringLiteral("burst"), QString::fromUtf8(shard)} +
                            args({"--algo", "sliding-log", "--limit", "10", "--window", "1h", "--requests", "10"})))
                     .exitCode,
                 0);
    }
    r = runCli(cli(args({"--json", "inspect", "rl:{t}", "--algo", "sliding-log", "--limit", "40", "--window", "1h"})));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject inspected = lastJsonLine(r.out);
    const QJsonObject decision = inspected.value(QStringLiteral("decision")).toObject();
    QCOMPARE(decision.value(QStringLiteral("allowed")).toBool(true), false);
    QCOMPARE(decision.value(QStringLiteral("used_now")).toInteger(), 40);
    QCOMPARE(decision.value(QStringLiteral("remaining")).toInteger(-1), 0);
    QCOMPARE(inspected.value(QStringLiteral("sharded")).toObject().value(QStringLiteral("used")).toInteger(), 40);
    // A key a policy declares redis-cell whose value is none: said so, not a Ratescope WRONGTYPE.
    QCOMPARE(runCli(cli(args({"policy", "set", "cell", "--match", "cell:*", "--format", "redis-cell", "--algo", "gcra", "--limit", "5",
                              "--window", "1s"})))
                 .exitCode,
             0);
    m_conn->command({"SET", "cell:x", "garbage"});
    for (const QStringList &a : {args({"peek", "cell:x"}), args({"watch", "cell:x", "--count", "1"})}) {
        r = runCli(cli(a));
        QVERIFY2(r.exitCode == 2 && r.err.contains("holds no redis-cell GCRA") && !r.err.contains("WRONGTYPE"), r.err.constData());
    }
    r = runCli(cli(args({"--json", "inspect", "cell:x"})));
    QVERIFY2(lastJsonLine(r.out).value(QStringLiteral("decision_error")).toString().contains(QStringLiteral("holds no redis-cell GCRA")),
             r.out.constData());
    // A geo set east of Greenwich is no log of times in 2080.
    m_conn->command({"GEOADD", "geo:sicily", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"});
    // Nor one west of it, whose cells read as times around now (New York's as October 2026),
    // but a few hundred kilometres read weeks apart; a log of this age is still a log.
    m_conn->command({"GEOADD", "geo:east-coast", "-74.0060", "40.7128", "New York", "-71.0589", "42.3601", "Boston"});
    const qint64 nowUs = serverTimeUs(*m_conn);
    m_conn->command({"ZADD", "log:old", QByteArray::number(nowUs - 86400000000LL), "a", QByteArray::number(nowUs - 3600000000LL), "b"});
    r = runCli(cli(args({"--json", "keys", "--match", "geo:*", "--all"})));
    QVERIFY2(r.exitCode == 0 && r.out.contains("geo:east-coast") && !r.out.contains("sliding-log"), r.out.constData());
    r = runCli(cli(args({"--json", "keys", "--match", "log:old"})));
    QVERIFY2(r.exitCode == 0 && r.out.contains("sliding-log"), r.out.constData());
    // simulate --key with a CSV trace (whose rows name their keys): refused, not ignored.
    QTemporaryDir dir;
    writeFile(dir.filePath(QStringLiteral("t.csv")), "time,key\n1795400000000000,a\n");
    r = runCli(cli(QStringList{QStringLiteral("simulate"), QStringLiteral("--trace"), dir.filePath(QStringLiteral("t.csv"))} +
                   args({"--algo", "gcra", "--limit", "5", "--window", "1s", "--key", "zz"})));
    QVERIFY2(r.exitCode == 2 && r.err.contains("is a CSV trace, whose rows name their keys"), r.err.constData());
    // boundary with a window whose next boundary is months away: refused before anything is sent.
    // (g:1, the GCRA above, could expire between the two snapshots on a slow machine: gone first.)
    m_conn->command({"DEL", "g:1"});
    const QByteArray before = snapshot();
    r = runCli(cli(args({"boundary", "--algo", "fixed-window", "--limit", "5", "--window", "366d"})));
    QVERIFY2(r.exitCode == 2 && r.err.contains("the scenario waits at most") && r.err.contains("nothing was sent"), r.err.constData());
    QCOMPARE(snapshot(), before);
}

void TestHardening::wrongFieldsExitTwo()
{
    m_conn->command({"HSET", "h:1", "foo", "bar"});
    m_conn->command({"SET", "s:1", "x"});
    // The wrong type and the right type with the wrong fields are the same mistake: exit 2.
    const CliResult type = runCli(cli(args({"check", "s:1", "--algo", "gcra", "--limit", "5", "--window", "1s"})));
    QCOMPARE(type.exitCode, 2);
    const CliResult fields = runCli(cli(args({"check", "h:1", "--algo", "gcra", "--limit", "5", "--window", "1s"})));
    QVERIFY2(fields.exitCode == 2, fields.err.constData());
    QVERIFY(fields.err.contains("is not a ratescope"));
}

void TestHardening::conflictsHaveTheirOwnExitCode()
{
    const QStringList set = args({"policy", "set", "p", "--match", "p:*", "--algo", "gcra", "--limit", "5", "--window", "1s"});
    // Based on a version of a policy that never existed: refused, without claiming someone deleted it.
    const CliResult never = runCli(cli(set + args({"--based-on", "999"})));
    QCOMPARE(never.exitCode, 6);
    QVERIFY2(never.err.contains("does not exist"), never.err.constData());
    QVERIFY(!never.err.contains("deleted"));
    QCOMPARE(m_conn->command({"EXISTS", "ratescope:policies"}).integer(), 0);

    QCOMPARE(runCli(cli(set)).exitCode, 0);
    QCOMPARE(runCli(cli(set)).exitCode, 0); // now version 2
    const CliResult stale = runCli(cli(QStringList{QStringLiteral("--json")} + set + args({"--based-on", "1"})));
    QCOMPARE(stale.exitCode, 6);
    QCOMPARE(lastJsonLine(stale.out).value(QStringLiteral("error")).toObject().value(QStringLiteral("kind")).toString(),
             QStringLiteral("conflict"));
    const CliResult exists = runCli(cli(set + args({"--based-on", "0"})));
    QCOMPARE(exists.exitCode, 6);
    QVERIFY(exists.err.contains("already exists"));
}

// docs/cli.md's table of exit codes, a row of commands for each of its codes, with the JSON
// error kind it names; every command of a row exits with that code.
void TestHardening::exitCodesFollowTheTable_data()
{
    QTest::addColumn<QStringList>("command");
    QTest::addColumn<QByteArray>("user");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("kind");
    const QByteArray admin = "admin", reader = "reader";
    const QString none;
    // 0: success, a denied decision too.
    QTest::newRow("0 allowed") << args({"check", "t:1", "--algo", "fixed-window", "--limit", "1", "--window", "1h"}) << admin << 0 << none;
    QTest::newRow("0 denied") << args({"check", "t:1", "--algo", "fixed-window", "--limit", "1", "--window", "1h"}) << admin << 0 << none;
    QTest::newRow("0 lookup finding nothing") << args({"lookup", "nobody"}) << admin << 0 << none;
    // 2: usage or validation, nothing sent; a key of the wrong type or shape.
    QTest::newRow("2 unknown option") << args({"keys", "--colour"}) << admin << 2 << QStringLiteral("usage");
    QTest::newRow("2 limit zero") << args({"check", "t:2", "--algo", "gcra", "--limit", "0", "--window", "1s"}) << admin << 2
                                  << QStringLiteral("usage");
    QTest::newRow("2 cost above limit") << args({"check", "t:2", "--algo", "gcra", "--limit", "2", "--window", "1s", "--cost", "3"})
                                        << admin << 2 << QStringLiteral("usage");
    QTest::newRow("2 wrong type") << args({"check", "s:1", "--algo", "sliding-log", "--limit", "5", "--window", "1s"}) << admin << 2
                                  << QStringLiteral("usage");
    QTest::newRow("2 not a ratescope key") << args({"peek", "h:1", "--algo", "token-bucket", "--limit", "5", "--window", "1s"})
                                           << admin << 2 << QStringLiteral("usage");
    QTest::newRow("2 reset without --yes, no terminal") << args({"reset", "--match", "t:*"}) << admin << 2 << QStringLiteral("usage");
    // 3: connection (a rejected password).
    QTest::newRow("3 wrong password") << args({"info"}) << QByteArray("nobody") << 3 << QStringLiteral("connection");
    // 4: a server error reply (NOPERM), a record this build cannot use.
    QTest::newRow("4 NOPERM") << args({"policy", "set", "p", "--match", "p:*", "--algo", "gcra", "--limit", "5", "--window", "1s"})
                              << reader << 4 << QStringLiteral("server");
    QTest::newRow("4 unreadable policy record") << args({"policy", "get", "garbage"}) << admin << 4 << QStringLiteral("unexpected-reply");
    // 5: read-only mode.
    QTest::newRow("5 read-only reset") << args({"--read-only", "reset", "t:1", "--yes"}) << admin << 5 << QStringLiteral("read-only");
    QTest::newRow("5 read-only check") << args({"--read-only", "check", "t:1", "--algo", "gcra", "--limit", "5", "--window", "1s"})
                                       << admin << 5 << QStringLiteral("read-only");
    // 6: an edit on another version; a policy or override that does not exist.
    QTest::newRow("6 based on a version never stored")
        << args({"policy", "set", "q", "--match", "q:*", "--algo", "gcra", "--limit", "5", "--window", "1s", "--based-on", "7"}) << admin
        << 6 << QStringLiteral("conflict");
    QTest::newRow("6 policy get missing") << args({"policy", "get", "nothing-here"}) << admin << 6 << QStringLiteral("conflict");
    QTest::newRow("6 policy delete missing") << args({"policy", "delete", "nothing-here"}) << admin << 6 << QStringLiteral("conflict");
    QTest::newRow("6 override get missing") << args({"override", "get", "t:9"}) << admin << 6 << QStringLiteral("conflict");

    // The rows cover exactly the codes the table documents.
    QFile doc(BuiltPaths::sourceDir() + QStringLiteral("/docs/cli.md"));
    QVERIFY(doc.open(QIODevice::ReadOnly));
    const QByteArray text = doc.readAll();
    const qsizetype table = text.indexOf("### Exit codes");
    QVERIFY(table >= 0);
    std::set<int> documented;
    for (const QByteArray &line : text.mid(table, text.indexOf("\n\n", text.indexOf("| Code", table)) - table).split('\n')) {
        bool ok = false;
        const int code = line.startsWith("| ") ? line.mid(2, line.indexOf(' ', 2) - 2).toInt(&ok) : -1;
        if (ok)
            documented.insert(code);
    }
    QCOMPARE(documented, (std::set<int>{0, 2, 3, 4, 5, 6}));
}

void TestHardening::exitCodesFollowTheTable()
{
    QFETCH(QStringList, command);
    QFETCH(QByteArray, user);
    QFETCH(int, code);
    QFETCH(QString, kind);
    m_conn->command({"SET", "s:1", "x"});
    m_conn->command({"HSET", "h:1", "a", "1"});
    m_conn->command({"HSET", "ratescope:policies", "garbage", "not json at all"});
    if (QByteArray(QTest::currentDataTag()) == "0 denied")
        QCOMPARE(runCli(cli(command)).exitCode, 0); // the first request fills the limit of 1
    const QByteArray password = user == "admin" ? "adminpw" : user == "reader" ? "readerpw" : "wrong";
    const CliResult r = runCli(cli(QStringList{QStringLiteral("--json")} + command, user.constData(), password.constData()));
    QVERIFY2(r.exitCode == code, qPrintable(QStringLiteral("exit %1: %2").arg(r.exitCode).arg(QString::fromUtf8(r.err))));
    if (kind.isEmpty())
        return;
    QCOMPARE(lastJsonLine(r.out).value(QStringLiteral("error")).toObject().value(QStringLiteral("kind")).toString(), kind);
}

// The plain-read peek gives exactly the scripts' answer, over states of every kind: current,
// previous and older windows, a window ahead of the clock, counts above a lowered limit.
void TestHardening::peekFromFieldsMatchesTheScripts()
{
    Limiter limiter(*m_conn);
    quint32 seed = 19;
    auto next = [&](quint32 n) {
        seed = seed * 1664525u + 1013904223u;
        return (seed >> 8) % n;
    };
    const qint64 base = 1795400000000000LL;
    int compared = 0;
    for (int i = 0; i < 600; ++i) {
        const bool sliding = i % 2;
        LimitSpec spec{sliding ? Algorithm::SlidingCounter : Algorithm::FixedWindow, qint64(1 + next(i % 7 == 0 ? 1000000 : 12)),
                       qint64(1000 + next(90000000)), 1};
        spec.cost = 1 + qint64(next(quint32(std::min<qint64>(spec.limit, 5))));
        const qint64 now = base + qint64(next(1000000000));
        const qint64 id = now / spec.windowUs;
        const QByteArray key = "pf:" + QByteArray::number(i);
        if (next(5) != 0) {
            const qint64 w = id - 2 + qint64(next(4)); // older, previous, current, ahead
            const QByteArray c = QByteArray::number(next(quint32(spec.limit + 4))), p = QByteArray::number(next(quint32(spec.limit + 4)));
            if (sliding)
                m_conn->command({"HSET", key, "w", QByteArray::number(w), "c", c, "p", p});
            else
                m_conn->command({"HSET", key, "w", QByteArray::number(w), "n", c});
        }
        const Decision script = limiter.peek(key, spec, now);
        const auto fields = limiter.peekFromFields(key, spec, now);
        QVERIFY(fields);
        QVERIFY2(*fields == script, qPrintable(QStringLiteral("%1: state %2, limit %3 window %4 cost %5 now %6")
                                                   .arg(QString::fromUtf8(key), m_conn->command({"HGETALL", key}).debugString())
                                                   .arg(spec.limit)
                                                   .arg(spec.windowUs)
                                                   .arg(spec.cost)
                                                   .arg(now)));
        ++compared;
    }
    QCOMPARE(compared, 600);
    // Refusals in the scripts' words.
    m_conn->command({"HSET", "pf:foreign", "w", "x1", "n", "2"});
    QVERIFY_THROWS_EXCEPTION(ReplyError, limiter.peekFromFields("pf:foreign", {Algorithm::FixedWindow, 5, 1000000, 1}, base));
    m_conn->command({"SET", "pf:string", "1"});
    QVERIFY_THROWS_EXCEPTION(ReplyError, limiter.peekFromFields("pf:string", {Algorithm::SlidingCounter, 5, 1000000, 1}, base));
    QVERIFY_THROWS_EXCEPTION(ReplyError, limiter.peekFromFields("pf:1", {Algorithm::Gcra, 5, 1000000, 1}, base));
}

void TestHardening::peekFromFieldsMatchesAfterTraffic_data()
{
    QTest::addColumn<Algorithm>("algorithm");
    for (const Algorithm a : kAllAlgorithms)
        QTest::newRow(qPrintable(algorithmName(a))) << a;
}

// States written by the scripts themselves (random costs, bursts, pauses, a clock that goes
// back), then peeked at a random moment with the writers' limits or others (a lowered limit,
// a shorter or longer window, a larger cost): the plain reads give the script's answer, field
// for field.
void TestHardening::peekFromFieldsMatchesAfterTraffic()
{
    QFETCH(Algorithm, algorithm);
    Limiter limiter(*m_conn);
    quint32 seed = 23 + quint32(algorithm);
    auto next = [&](quint32 n) {
        seed = seed * 1664525u + 1013904223u;
        return (seed >> 8) % n;
    };
    const qint64 base = 1795400000000000LL;
    int compared = 0, denied = 0, overLimit = 0;
    for (int i = 0; i < 160; ++i) {
        const QByteArray key = "pt:" + QByteArray::number(i);
        LimitSpec writer{algorithm, qint64(1 + next(i % 9 == 0 ? 400 : 14)), qint64(1000 + next(20000000)), 1};
        qint64 now = base + qint64(next(100000000));
        const int requests = int(next(i % 9 == 0 ? 600 : 40));
        for (int r = 0; r < requests; ++r) {
            writer.cost = next(4) == 0 ? 1 + qint64(next(quint32(std::min<qint64>(writer.limit, 6)))) : 1;
            const quint32 gap = next(10);
            now += gap < 6 ? 0 : gap < 9 ? qint64(next(quint32(writer.windowUs / 3))) : -qint64(next(50000));
            limiter.check(key, writer, now);
        }
        // The scripts set a real-time expiry from windows as short as 1 ms: kept, the state
        // could expire between the two reads compared below.
        m_conn->command({"PERSIST", key});
        LimitSpec reader = writer;
        switch (next(4)) {
        case 0:
            break;
        case 1:
            reader.limit = std::max<qint64>(1, writer.limit / 2);
            break;
        case 2:
            reader.windowUs = std::max<qint64>(1000, writer.windowUs / qint64(2 + next(3)));
            break;
        case 3:
            reader.windowUs = writer.windowUs * 2;
            break;
        }
        reader.cost = 1 + qint64(next(quint32(std::min<qint64>(reader.limit, 5))));
        const qint64 at = now - qint64(next(200000)) + qint64(next(quint32(2 * reader.windowUs)));
        const Decision script = limiter.peek(key, reader, at);
        const auto fields = limiter.peekFromFields(key, reader, at);
        QVERIFY(fields);
        QVERIFY2(
            *fields == script,
            qPrintable(QStringLiteral("%1: limit %2 window %3 cost %4 at %5: script %6/%7/%8/%9/%10/%11, reads %12/%13/%14/%15/%16/%17")
                           .arg(QString::fromUtf8(key))
                           .arg(reader.limit)
                           .arg(reader.windowUs)
                           .arg(reader.cost)
                           .arg(at)
                           .arg(script.allowed)
                           .arg(script.limit)
                           .arg(script.used)
                           .arg(script.remaining)
                           .arg(script.retryAfterUs)
                           .arg(script.resetAfterUs)
                           .arg(fields->allowed)
                           .arg(fields->limit)
                           .arg(fields->used)
                           .arg(fields->remaining)
                           .arg(fields->retryAfterUs)
                           .arg(fields->resetAfterUs)));
        ++compared;
        denied += !script.allowed;
        overLimit += script.used > script.limit;
    }
    QCOMPARE(compared, 160);
    // The comparison covered denials (retry-after) as well as admissions.
    QVERIFY2(denied >= 20, qPrintable(QString::number(denied)));
    if (algorithm == Algorithm::SlidingLog || algorithm == Algorithm::FixedWindow)
        QVERIFY2(overLimit >= 3, qPrintable(QString::number(overLimit)));
}

// States no script wrote are refused by the plain reads in the scripts' own words.
void TestHardening::peekFromFieldsRefusesLikeTheScripts()
{
    Limiter limiter(*m_conn);
    const qint64 now = 1795400000000000LL;
    struct Case {
        Algorithm algorithm;
        QByteArray key;
        std::vector<Command> setup;
    };
    const std::vector<Case> cases = {
        {Algorithm::SlidingLog, "bad:member", {{"ZADD", "bad:member", "1795399999999000", "uuid-1234"}}},
        {Algorithm::SlidingLog, "bad:score", {{"ZADD", "bad:score", "1795399999999000.5", "11"}}},
        {Algorithm::SlidingLog, "bad:cost0", {{"ZADD", "bad:cost0", "1795399999999000", "15:0"}}},
        {Algorithm::SlidingLog,
         "bad:order",
         {{"ZADD", "bad:order", "1795399999999000", "17"}, {"ZADD", "bad:order", "1795399999999500", "13"}}},
        {Algorithm::SlidingLog, "bad:hash", {{"HSET", "bad:hash", "a", "1"}}},
        {Algorithm::TokenBucket, "bad:tk", {{"HSET", "bad:tk", "tk", "5", "fr", "x", "ts", "1"}}},
        {Algorithm::TokenBucket, "bad:zeros", {{"HSET", "bad:zeros", "tk", "00000000000000005", "fr", "0", "ts", "1"}}},
        {Algorithm::TokenBucket, "bad:missing", {{"HSET", "bad:missing", "tk", "5", "fr", "0"}}},
        {Algorithm::Gcra, "bad:tat", {{"HSET", "bad:tat", "tat", "-5", "f", "0"}}},
        {Algorithm::Gcra, "bad:string", {{"SET", "bad:string", "1"}}},
    };
    for (const Case &c : cases) {
        for (const Command &cmd : c.setup)
            m_conn->command(cmd);
        const LimitSpec spec{c.algorithm, 10, 60000000, 1};
        QString scriptError, readError;
        try {
            limiter.peek(c.key, spec, now);
        } catch (const ReplyError &e) {
            scriptError = e.message();
        }
        try {
            limiter.peekFromFields(c.key, spec, now);
        } catch (const ReplyError &e) {
            readError = e.message();
        }
        QVERIFY2(!scriptError.isEmpty(), c.key.constData());
        QCOMPARE(readError, scriptError);
    }
}

// A user with +@read but no script commands: peek still answers for what plain reads can
// decide exactly, and says NOPERM for the rest.
void TestHardening::peekWithoutScriptPermission()
{
    m_conn->command({"ACL", "SETUSER", "plainreader", "reset", "on", ">plainpw", "~*", "&*", "-@all", "+@read", "+@connection"});
    // On an explicit clock, mid-window: on the server's, a minute's boundary between the check
    // and the peeks would start a new window.
    const QStringList fixed =
        args({"--json", "peek", "fw:1", "--algo", "fixed-window", "--limit", "5", "--window", "1m", "--now-us", "1795400010500000"});
    QCOMPARE(
        runCli(cli(args({"check", "fw:1", "--algo", "fixed-window", "--limit", "5", "--window", "1m", "--now-us", "1795400010000000"})))
            .exitCode,
        0);
    const CliResult asAdmin = runCli(cli(fixed));
    const CliResult asReader = runCli(cli(fixed, "plainreader", "plainpw"));
    QVERIFY2(asReader.exitCode == 0, asReader.err.constData());
    QCOMPARE(lastJsonLine(asReader.out).value(QStringLiteral("used")), lastJsonLine(asAdmin.out).value(QStringLiteral("used")));
    QCOMPARE(lastJsonLine(asReader.out).value(QStringLiteral("used")).toInt(), 2);
    // Every algorithm answers, with the admin's figures.
    for (const char *algo : {"sliding-log", "token-bucket", "gcra", "sliding-counter"}) {
        const QString key = QStringLiteral("pr:%1").arg(QLatin1String(algo));
        const QStringList spec = {QStringLiteral("--algo"),   QLatin1String(algo),  QStringLiteral("--limit"), QStringLiteral("5"),
                                  QStringLiteral("--window"), QStringLiteral("1m"), QStringLiteral("--now-us")};
        const QStringList peek =
            QStringList{QStringLiteral("--json"), QStringLiteral("peek"), key} + spec + QStringList{QStringLiteral("1795400000500000")};
        for (int i = 0; i < 7; ++i) // five admitted, two denied (a denial exits 0 too)
            QCOMPARE(
                runCli(cli(QStringList{QStringLiteral("check"), key} + spec + QStringList{QString::number(1795400000000000LL + i * 1000)}))
                    .exitCode,
                0);
        const CliResult admin = runCli(cli(peek));
        const CliResult reader = runCli(cli(peek, "plainreader", "plainpw"));
        QVERIFY2(reader.exitCode == admin.exitCode, reader.err.constData());
        QCOMPARE(lastJsonLine(reader.out), lastJsonLine(admin.out));
        QCOMPARE(lastJsonLine(reader.out).value(QStringLiteral("remaining")).toInt(), 0);
        QVERIFY(lastJsonLine(reader.out).value(QStringLiteral("retry_after_ms")).toDouble() > 0);
    }
    // Without script rights, a write is still refused.
    const CliResult check =
        runCli(cli(args({"check", "pr:gcra", "--algo", "gcra", "--limit", "5", "--window", "1m"}), "plainreader", "plainpw"));
    QCOMPARE(check.exitCode, 4);
    QVERIFY(check.err.contains("NOPERM"));
}

void TestHardening::interruptedKeysSayIncomplete_data()
{
    QTest::addColumn<bool>("json");
    QTest::addColumn<bool>("kill");
    QTest::newRow("ctrl-c human") << false << false;
    QTest::newRow("ctrl-c json") << true << false;
    QTest::newRow("server killed json") << true << true;
}

// A listing cut short by Ctrl-C or a lost server ends with a marker, never as if complete.
void TestHardening::interruptedKeysSayIncomplete()
{
    QFETCH(bool, json);
    QFETCH(bool, kill);
    SandboxServer server;
    server.start();
    Connection c(server.options());
    std::vector<Command> fill;
    for (int i = 0; i < 50; ++i) {
        Command mset{"MSET"};
        for (int j = 0; j < 1000; ++j)
            mset << "kk:" + QByteArray::number(i) + ":" + QByteArray::number(j) << "1";
        fill.push_back(mset);
    }
    c.pipeline(fill);
    QProcess cli;
    QStringList a{QStringLiteral("--url"), server.url()};
    if (json)
        a << QStringLiteral("--json");
    a << QStringLiteral("keys") << QStringLiteral("--all");
    cli.start(BuiltPaths::cli(), a);
    QVERIFY(cli.waitForStarted(10000));
    // Once the first rows are out, the scan is under way (50,000 keys take a while).
    QByteArray out;
    for (int i = 0; i < 200 && !out.contains('\n') && cli.state() == QProcess::Running; ++i) {
        cli.waitForReadyRead(50);
        out += cli.readAllStandardOutput();
    }
    QVERIFY2(cli.state() == QProcess::Running, "the listing ended before it could be interrupted");
    if (kill)
        server.kill();
    else
        ::kill(pid_t(cli.processId()), SIGINT);
    QVERIFY(cli.waitForFinished(30000));
    out += cli.readAllStandardOutput();
    const QByteArray err = cli.readAllStandardError();
    QCOMPARE(cli.exitStatus(), QProcess::NormalExit);
    QCOMPARE(cli.exitCode(), kill ? 3 : 130);
    QVERIFY2(err.trimmed().split('\n').last().startsWith("incomplete: "), err.constData());
    if (json) {
        const QJsonObject last = lastJsonLine(out);
        QCOMPARE(last.value(QStringLiteral("incomplete")).toBool(), true);
        QCOMPARE(last.value(QStringLiteral("reason")).toString(), kill ? QStringLiteral("error") : QStringLiteral("interrupted"));
        const qint64 rows = last.value(QStringLiteral("rows")).toInteger();
        QVERIFY2(rows > 0 && rows < 50000, out.right(200).constData());
        QCOMPARE(out.trimmed().split('\n').size(), rows + (kill ? 2 : 1)); // the rows, the error object, the marker
    }
}

void TestHardening::noChangeWithoutAnAuditEntry_data()
{
    QTest::addColumn<QStringList>("command");
    QTest::newRow("reset") << args({"reset", "nx:1", "--yes"});
    QTest::newRow("reset match") << args({"reset", "--match", "nx:*", "--yes"});
    QTest::newRow("policy set") << args({"policy", "set", "p2", "--match", "p2:*", "--algo", "gcra", "--limit", "5", "--window", "1s"});
    QTest::newRow("policy delete") << args({"policy", "delete", "p"});
    QTest::newRow("override set") << args({"override", "set", "nx:1", "--limit", "5", "--for", "1h"});
    QTest::newRow("override clear") << args({"override", "clear", "nx:2"});
}

void TestHardening::noChangeWithoutAnAuditEntry()
{
    QFETCH(QStringList, command);
    m_conn->command({"ACL", "SETUSER", "noxadd", "reset", "on", ">noxaddpw", "~*", "&*", "+@all", "-xadd"});
    m_conn->command({"SET", "nx:1", "1"});
    QCOMPARE(runCli(cli(args({"policy", "set", "p", "--match", "p:*", "--algo", "gcra", "--limit", "5", "--window", "1s"}))).exitCode, 0);
    QCOMPARE(runCli(cli(args({"override", "set", "nx:2", "--limit", "5", "--for", "1h"}))).exitCode, 0);
    const QByteArray before = snapshot();
    const CliResult r = runCli(cli(command, "noxadd", "noxaddpw"));
    QVERIFY2(r.exitCode == 4, qPrintable(QString::number(r.exitCode) + QLatin1Char(' ') + QString::fromUtf8(r.err)));
    QVERIFY2(r.err.contains("NOPERM") && r.err.contains("nothing was changed"), r.err.constData());
    QCOMPARE(snapshot(), before);
}

void TestHardening::namespaceCollidingWithAppKeys()
{
    m_conn->command({"SET", "app:audit", "the application's own string"});
    const QByteArray before = snapshot();
    const CliResult r = runCli(
        cli(args({"--namespace", "app:", "policy", "set", "p", "--match", "p:*", "--algo", "gcra", "--limit", "5", "--window", "1s"})));
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("'app:audit' is a string, not a stream"), r.err.constData());
    QCOMPARE(m_conn->command({"EXISTS", "app:policies"}).integer(), 0);
    QCOMPARE(snapshot(), before);
}

void TestHardening::interruptedResetRecordsIntentAndConfirmedCount()
{
    // A user that may delete a:* but only read b:*: the plan (sorted: a:* first) meets the
    // refusal in its third batch, after two batches (1000 keys) were deleted and confirmed.
    m_conn->command({"ACL", "SETUSER", "partial", "reset", "on", ">partialpw", "~a:*", "%R~b:*", "~ratescope:*", "&*", "+@all"});
    std::vector<Command> fill;
    for (int i = 0; i < 1200; ++i)
        fill.push_back({"SET", QByteArray("a:") + QByteArray::number(i).rightJustified(4, '0'), "1"});
    for (int i = 0; i < 300; ++i)
        fill.push_back({"SET", QByteArray("b:") + QByteArray::number(i).rightJustified(4, '0'), "1"});
    m_conn->pipeline(fill);
    const CliResult r = runCli(cli(args({"--json", "reset", "--match", "[ab]:*", "--yes", "--include-non-limiters"}), "partial", "partialpw"));
    QCOMPARE(r.exitCode, 4);
    QVERIFY2(r.err.contains("1000 deletions confirmed"), r.err.constData());
    const QJsonObject result = QJsonDocument::fromJson(r.out.split('\n').first()).object();
    QCOMPARE(result.value(QStringLiteral("deleted")).toInt(), 1000);
    QCOMPARE(result.value(QStringLiteral("complete")).toBool(true), false);
    QCOMPARE(m_conn->command({"DBSIZE"}).integer(), 500 + 1); // 200 a:*, 300 b:*, the audit stream
    const auto entries = AuditLog(*m_conn, kNs).list(10);
    QCOMPARE(entries.size(), size_t(2));
    QCOMPARE(entries[1].action, QStringLiteral("reset.intent"));
    QCOMPARE(entries[1].count, 1500);
    QCOMPARE(entries[0].action, QStringLiteral("reset"));
    QCOMPARE(entries[0].count, 1000);
    const QJsonObject after = QJsonDocument::fromJson(entries[0].after.toUtf8()).object();
    QCOMPARE(after.value(QStringLiteral("processed")).toInt(), 1000);
    QVERIFY(after.value(QStringLiteral("error")).toString().contains(QStringLiteral("NOPERM")));
}

namespace {

// A server that writes every change to its append-only file before answering: killed with
// SIGKILL and restarted, it holds at least everything it confirmed, and what it held besides
// was under way when it died.
SandboxServer::Config durableServer()
{
    SandboxServer::Config config;
    config.configLines = {QStringLiteral("appendonly yes"), QStringLiteral("appendfsync always")};
    return config;
}

// Waits (bounded) until `ready` holds while the CLI runs, then kills the server (or, with
// stall, stops it answering: SIGSTOP).
bool killWhen(SandboxServer &server, QProcess &cli, const std::function<bool()> &ready, bool stall = false)
{
    for (int i = 0; i < 20000 && cli.state() == QProcess::Running; ++i) {
        if (ready()) {
            if (stall)
                server.pause();
            else
                server.kill();
            return true;
        }
        QThread::usleep(200);
    }
    return false;
}

} // namespace

void TestHardening::resetWhenTheServerDiesMatchesWhatItHolds_data()
{
    QTest::addColumn<bool>("stall");
    QTest::newRow("killed") << false;
    QTest::newRow("stalled") << true;
}

// The server dies (or stops answering) in the middle of `reset --match`: the CLI reports the
// deletions confirmed and the batch in doubt, and the server agrees once it runs again
// (confirmed <= deleted <= processed + one batch); the intent entry was written before the
// first delete.
void TestHardening::resetWhenTheServerDiesMatchesWhatItHolds()
{
    QFETCH(bool, stall);
    SandboxServer server(durableServer());
    server.start();
    struct Resume { // whatever happens below, a stalled server runs again
        SandboxServer &server;
        ~Resume() { server.resume(); }
    } resume{server};
    constexpr int kKeys = 120000;
    {
        Connection c(server.options());
        std::vector<Command> fill;
        for (int i = 0; i < kKeys / 1000; ++i) {
            Command mset{"MSET"};
            for (int j = 0; j < 1000; ++j)
                mset << "dk:" + QByteArray::number(i * 1000 + j).rightJustified(6, '0') << "1";
            fill.push_back(mset);
        }
        c.pipeline(fill);
    }
    QProcess cli;
    cli.start(BuiltPaths::cli(),
              {QStringLiteral("--url"), server.url() + QStringLiteral("?timeout=500ms"), QStringLiteral("--json"), QStringLiteral("reset"),
               QStringLiteral("--match"), QStringLiteral("dk:*"), QStringLiteral("--yes"), QStringLiteral("--include-non-limiters")});
    QVERIFY(cli.waitForStarted(10000));
    Connection probe(server.options());
    // Once a few batches are gone (the plan is the whole SCAN first: the deletes start after it).
    const bool stopped = killWhen(
        server, cli, [&] { return probe.command({"DBSIZE"}).integer() < kKeys - 2000; }, stall);
    QVERIFY2(stopped, "the reset ended before the server could be stopped");
    QVERIFY(cli.waitForFinished(60000));
    const QByteArray err = cli.readAllStandardError();
    QCOMPARE(cli.exitCode(), 3);
    QVERIFY2(err.contains("deletions confirmed") && err.contains("may or may not have been deleted"), err.constData());
    const QJsonObject o = QJsonDocument::fromJson(cli.readAllStandardOutput().split('\n').first()).object();
    QCOMPARE(o.value(QStringLiteral("complete")).toBool(true), false);
    const qint64 confirmed = o.value(QStringLiteral("deleted")).toInteger(-1);
    const qint64 processed = o.value(QStringLiteral("processed")).toInteger(-1);
    QVERIFY2(confirmed >= 1000 && confirmed == processed && processed < kKeys, err.constData()); // every planned key existed

    if (stall)
        server.resume();
    else
        server.restart();
    Connection after(server.options());
    qint64 left = 0;
    QByteArray cursor = "0";
    for (int page = 0; page < 10000; ++page) { // bounded SCAN
        const Reply r = after.command({"SCAN", cursor, "MATCH", "dk:*", "COUNT", "5000"});
        cursor = r[0].bytes();
        left += qint64(r[1].size());
        if (cursor == "0")
            break;
    }
    const qint64 deleted = kKeys - left;
    QVERIFY2(deleted >= confirmed && deleted <= processed + Resetter::kBatchSize,
             qPrintable(QStringLiteral("server deleted %1, confirmed %2, processed %3").arg(deleted).arg(confirmed).arg(processed)));
    const auto entries = AuditLog(after, kNs).list(10);
    QVERIFY(!entries.empty());
    QCOMPARE(entries.back().action, QStringLiteral("reset.intent"));
    QCOMPARE(entries.back().count, kKeys);
}

// The server dies in the middle of a burst: what the restarted server holds is between the
// admissions the CLI reports and those plus the requests whose outcome it reports unknown;
// what was never written is counted apart, never as sent.
void TestHardening::burstWhenTheServerDiesMatchesWhatItHolds()
{
    SandboxServer server(durableServer());
    server.start();
    constexpr qint64 kRequests = 50000000;
    QProcess cli;
    cli.start(BuiltPaths::cli(),
              {QStringLiteral("--url"), server.url(), QStringLiteral("--json"), QStringLiteral("burst"), QStringLiteral("dying"),
               QStringLiteral("--algo"), QStringLiteral("sliding-log"), QStringLiteral("--limit"), QStringLiteral("1000000000"),
               QStringLiteral("--window"), QStringLiteral("1d"), QStringLiteral("--requests"), QString::number(kRequests),
               QStringLiteral("--connections"), QStringLiteral("4"), QStringLiteral("--pipeline"), QStringLiteral("32")});
    QVERIFY(cli.waitForStarted(10000));
    Connection probe(server.options());
    const bool killed = killWhen(server, cli, [&] { return probe.command({"ZCARD", "dying"}).integer() >= 3000; });

    QVERIFY2(killed, "the burst ended before the server could be killed");
    QVERIFY(cli.waitForFinished(60000));
    QCOMPARE(cli.exitCode(), 3);
    const QJsonObject o = QJsonDocument::fromJson(cli.readAllStandardOutput().split('\n').first()).object();
    const qint64 sent = o.value(QStringLiteral("sent")).toInteger(-1), allowed = o.value(QStringLiteral("allowed")).toInteger(-1),
                 unknown = o.value(QStringLiteral("unknown")).toInteger(-1), notSent = o.value(QStringLiteral("not_sent")).toInteger(-1);
    QVERIFY2(allowed > 0 && unknown > 0 && notSent > 0, QJsonDocument(o).toJson().constData());
    // It gave up on the dead server: every request it had not written is counted as such.
    QCOMPARE(o.value(QStringLiteral("gave_up")).toBool(), true);
    QCOMPARE(sent + notSent, kRequests);
    QCOMPARE(o.value(QStringLiteral("denied")).toInteger(), 0);
    QCOMPARE(sent, allowed + unknown + o.value(QStringLiteral("errors")).toInteger());

    server.restart();
    Connection after(server.options());
    const qint64 held = after.command({"ZCARD", "dying"}).integer();
    QVERIFY2(held >= allowed && held <= allowed + unknown,
             qPrintable(QStringLiteral("server holds %1, allowed %2, unknown %3").arg(held).arg(allowed).arg(unknown)));
}

void TestHardening::clearingNothingIsNotAudited()
{
    const CliResult r = runCli(cli(args({"override", "clear", "nothing:here"})));
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains("nothing audited"));
    QCOMPARE(auditLength(), 0);
    QCOMPARE(runCli(cli(args({"override", "set", "k", "--limit", "5", "--for", "1h"}))).exitCode, 0);
    QCOMPARE(runCli(cli(args({"override", "clear", "k"}))).exitCode, 0);
    QCOMPARE(auditLength(), 2);
}

void TestHardening::burstAndBoundaryNeedTheirRecord()
{
    m_conn->command({"ACL", "SETUSER", "noxadd", "reset", "on", ">noxaddpw", "~*", "&*", "+@all", "-xadd"});
    const CliResult burst =
        runCli(cli(args({"burst", "b:1", "--algo", "gcra", "--limit", "5", "--window", "1s", "--requests", "10"}), "noxadd", "noxaddpw"));
    QCOMPARE(burst.exitCode, 4);
    QCOMPARE(m_conn->command({"EXISTS", "b:1"}).integer(), 0);
    const CliResult boundary =
        runCli(cli(args({"boundary", "--algo", "gcra", "--limit", "5", "--window", "1s", "--key", "b:2"}), "noxadd", "noxaddpw"));
    QCOMPARE(boundary.exitCode, 4);
    QCOMPARE(m_conn->command({"DBSIZE"}).integer(), 0);
    // Nor a deploy of the functions library: refused before it is loaded, for a user who may not
    // append to the audit stream and for a namespace whose audit key is no stream.
    const auto libraryLoaded = [this] {
        const Reply r = m_conn->command({"FUNCTION", "LIST", "LIBRARYNAME", "ratescope"});
        return r.isArray() && r.size() > 0;
    };
    m_conn->command({"FUNCTION", "FLUSH"});
    const CliResult deploy = runCli(cli(args({"scripts", "deploy"}), "noxadd", "noxaddpw"));
    QVERIFY2(deploy.exitCode == 4 && deploy.err.contains("NOPERM"), deploy.err.constData());
    QVERIFY(!libraryLoaded());
    m_conn->command({"SET", "odd:audit", "a string"});
    const CliResult elsewhere = runCli(cli(args({"--namespace", "odd:", "scripts", "deploy"})));
    QVERIFY2(elsewhere.exitCode == 2, elsewhere.err.constData());
    QVERIFY(!libraryLoaded());
    QCOMPARE(runCli(cli(args({"scripts", "deploy"}))).exitCode, 0);
    QVERIFY(libraryLoaded());
    m_conn->command({"FUNCTION", "FLUSH"});
}

void TestHardening::resetRefusesNonLimiterTypes()
{
    // An application's keys beside the limiters: a stream, a list, a set, a flag string and a
    // session hash; and limiters: Ratescope's, another service's ms log, a counter window.
    m_conn->command({"XADD", "q:stream", "*", "a", "1"});
    m_conn->command({"RPUSH", "q:list", "a"});
    m_conn->command({"SADD", "q:set", "a"});
    m_conn->command({"SET", "q:flags", "on"});
    m_conn->command({"HSET", "q:session:1", "user", "alice", "cart", "3"});
    const qint64 nowUs = m_conn->command({"TIME"})[0].toInteger() * 1000000;
    QVERIFY(Limiter(*m_conn).check("q:limiter", LimitSpec{Algorithm::FixedWindow, 5, 60000000, 1}).allowed);
    m_conn->command({"ZADD", "q:log", QByteArray::number(nowUs / 1000), QByteArray::number(nowUs / 1000) + "-0.5"});
    m_conn->command({"SET", "q:api:" + QByteArray::number(nowUs / 60000000), "4"});
    const QByteArray before = snapshot();
    // Named keys of a type no limiter uses need --force.
    for (const QStringList &a : {args({"reset", "q:list", "--yes"}), args({"reset", "q:stream", "q:limiter", "--yes"})}) {
        const CliResult r = runCli(cli(a));
        QVERIFY2(r.exitCode == 2, qPrintable(a.join(QLatin1Char(' '))));
        QVERIFY2(r.err.contains("--force") && r.err.contains("no limiter uses"), r.err.constData());
    }
    QCOMPARE(snapshot(), before);
    // A pattern deletes the limiters only; the rest is listed apart, held back.
    const QList<QByteArray> others = {"q:flags", "q:list", "q:session:1", "q:set", "q:stream"};
    const CliResult preview = runCli(cli(args({"--json", "reset", "--match", "q:*", "--dry-run"})));
    QVERIFY2(preview.exitCode == 0, preview.err.constData());
    const QJsonObject planned = QJsonDocument::fromJson(preview.out).object();
    QCOMPARE(planned.value(QStringLiteral("keys")).toArray().size(), 3);
    QList<QByteArray> held;
    for (const QJsonValue &v : planned.value(QStringLiteral("held_back")).toArray())
        held << v.toObject().value(QStringLiteral("key")).toString().toUtf8();
    std::sort(held.begin(), held.end());
    QCOMPARE(held, others);
    const CliResult human = runCli(cli(args({"reset", "--match", "q:*", "--dry-run"})));
    QVERIFY2(human.out.contains("5 keys match but are no limiters, held back"), human.out.constData());
    QVERIFY2(human.out.contains("q:session:1 (hash)") && human.out.contains("--include-non-limiters"), human.out.constData());
    const CliResult limitersOnly = runCli(cli(args({"--json", "reset", "--match", "q:*", "--yes"})));
    QVERIFY2(limitersOnly.exitCode == 0, limitersOnly.err.constData());
    QCOMPARE(QJsonDocument::fromJson(limitersOnly.out).object().value(QStringLiteral("deleted")).toInt(), 3);
    for (const QByteArray &k : others)
        QVERIFY2(m_conn->command({"EXISTS", k}).integer() == 1, k.constData());
    QCOMPARE(m_conn->command({"EXISTS", "q:limiter", "q:log"}).integer(), 0);
    // Asked for explicitly, the others go too.
    QCOMPARE(runCli(cli(args({"reset", "--match", "q:*", "--yes", "--include-non-limiters"}))).exitCode, 0);
    QCOMPARE(m_conn->command({"KEYS", "q:*"}).size(), size_t(0));
}

void TestHardening::checkAndBurstWriteOnlyTheirOwnKeys()
{
    // Ratescope's own records: a limiter written there would break `override get`.
    QCOMPARE(runCli(cli(args({"override", "set", "k", "--limit", "5", "--for", "1h"}))).exitCode, 0);
    const QByteArray before = snapshot();
    for (const QStringList &a : {args({"check", "ratescope:override:zz", "--algo", "gcra", "--limit", "5", "--window", "1s"}),
                                 args({"check", "ratescope:override:k", "--algo", "gcra", "--limit", "5", "--window", "1s"}),
                                 args({"check", "ratescope:policies", "--algo", "fixed-window", "--limit", "5", "--window", "1s"}),
                                 args({"burst", "ratescope:audit", "--algo", "gcra", "--limit", "5", "--window", "1s", "--requests", "3"})}) {
        const CliResult r = runCli(cli(a));
        QVERIFY2(r.exitCode == 2, qPrintable(a.join(QLatin1Char(' '))));
        QVERIFY2(r.err.contains("one of Ratescope's own records"), r.err.constData());
    }
    QCOMPARE(snapshot(), before);
    // A prefix a policy declares another library's: new keys there are that library's too.
    QVERIFY(runCli(cli(args({"policy", "set", "cell", "--match", "cell:*", "--format", "redis-cell", "--algo", "gcra", "--limit", "5",
                             "--window", "1s"})))
                .exitCode == 0);
    const QByteArray declared = snapshot();
    for (const QStringList &a : {args({"check", "cell:new", "--algo", "gcra", "--limit", "5", "--window", "1s"}),
                                 args({"burst", "cell:other", "--algo", "gcra", "--limit", "5", "--window", "1s", "--requests", "3"})}) {
        const CliResult r = runCli(cli(a));
        QVERIFY2(r.exitCode == 2, qPrintable(a.join(QLatin1Char(' '))));
        QVERIFY2(r.err.contains("which declares its keys redis-cell limiters"), r.err.constData());
    }
    QCOMPARE(snapshot(), declared);
    QCOMPARE(runCli(cli(args({"check", "api:new", "--algo", "gcra", "--limit", "5", "--window", "1s"}))).exitCode, 0);
}

void TestHardening::noLimiterBesideAnotherServicesWindows()
{
    // Another service counts api:acme in one key per minute: api:acme is their limiter's base,
    // whatever time or window a check names.
    const qint64 serverS = m_conn->command({"TIME"})[0].toInteger();
    m_conn->command({"SET", "api:acme:" + QByteArray::number(serverS / 60), "7"});
    m_conn->command({"SET", "api:acme:" + QByteArray::number(serverS / 60 - 1), "3"});
    const QByteArray before = snapshot();
    const QStringList check = args({"check", "api:acme", "--algo", "fixed-window", "--limit", "10", "--now-us"});
    for (const QStringList &a :
         {check + QStringList{QString::number((serverS + 3600) * 1000000)}, check + QStringList{QString::number((serverS - 86400) * 1000000)},
          args({"check", "api:acme", "--algo", "fixed-window", "--limit", "10", "--window", "1s"}),
          args({"check", "api:acme", "--algo", "gcra", "--limit", "10", "--window", "1h"}),
          args({"burst", "api:acme", "--algo", "fixed-window", "--limit", "5", "--window", "1s", "--requests", "3"})}) {
        const CliResult r = runCli(cli(a + (a.contains(QStringLiteral("--now-us")) ? args({"--window", "1m"}) : QStringList{})));
        QVERIFY2(r.exitCode == 2, qPrintable(a.join(QLatin1Char(' ')) + QLatin1Char(' ') + QString::fromUtf8(r.err)));
        QVERIFY2(r.err.contains("counter window (60s) limiter that another service keeps"), r.err.constData());
    }
    QCOMPARE(snapshot(), before);
    // A key of its own beside them is still ours.
    QCOMPARE(runCli(cli(args({"check", "api:acme2", "--algo", "gcra", "--limit", "5", "--window", "1s"}))).exitCode, 0);
}

void TestHardening::boundaryKeyIsRefusedLikeCheck()
{
    QVERIFY(runCli(cli(args({"policy", "set", "cell", "--match", "cell:*", "--format", "redis-cell", "--algo", "gcra", "--limit", "5",
                             "--window", "1s"})))
                .exitCode == 0);
    const QByteArray before = snapshot();
    for (const char *key : {"ratescope:override:b", "ratescope:policies", "cell:b"}) {
        const CliResult r = runCli(cli(args({"boundary", "--algo", "fixed-window", "--limit", "5", "--window", "1s", "--key", key})));
        QVERIFY2(r.exitCode == 2, key);
        QVERIFY2(r.err.contains("Ratescope's own records") || r.err.contains("declares its keys redis-cell"), r.err.constData());
    }
    QCOMPARE(snapshot(), before);
    // A sharded burst: every shard is asked, not only the first.
    m_conn->command({"SET", "sh:3:" + QByteArray::number(m_conn->command({"TIME"})[0].toInteger() / 60), "1"});
    const CliResult r = runCli(cli(args({"burst", "sh", "--algo", "gcra", "--limit", "8", "--window", "1s", "--requests", "4", "--shards",
                                         "4"})));
    QVERIFY2(r.exitCode == 2 && r.err.contains("'sh:3' is a counter window"), r.err.constData());
}

void TestHardening::resetRefusesMetadata()
{
    QCOMPARE(runCli(cli(args({"override", "set", "k", "--limit", "5", "--for", "1h"}))).exitCode, 0);
    QCOMPARE(auditLength(), 1);
    const QByteArray before = snapshot();
    for (const QStringList &a : {args({"reset", "ratescope:audit", "--yes"}), args({"reset", "--match", "ratescope:*", "--yes"}),
                                 args({"--namespace", "other:", "reset", "other:audit", "ratescope:override:k", "--yes"})}) {
        const CliResult r = runCli(cli(a));
        if (a.contains(
                QStringLiteral("other:"))) { // another namespace's audit trail does not exist: only ratescope's keys are limiters there
            QCOMPARE(r.exitCode, 0);
            continue;
        }
        QVERIFY2(r.exitCode == 2, qPrintable(a.join(QLatin1Char(' '))));
        QVERIFY2(r.err.contains("--include-metadata") && r.err.contains("ratescope:audit"), r.err.constData());
    }
    Q_UNUSED(before);
    QCOMPARE(m_conn->command({"EXISTS", "ratescope:audit"}).integer(), 1);
    // Asked for explicitly, it goes (and the reset's own entries start a new trail).
    const CliResult r = runCli(cli(args({"reset", "ratescope:audit", "--yes", "--include-metadata", "--force"})));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QCOMPARE(auditLength(), 1); // the outcome; the intent went with the old trail
}

void TestHardening::brokenGlobsAreRejected_data()
{
    QTest::addColumn<QStringList>("command");
    QTest::addColumn<QByteArray>("message");
    QTest::newRow("reset [") << args({"reset", "--match", "a[^", "--yes"}) << QByteArray("unbalanced '['");
    QTest::newRow("reset \\") << args({"reset", "--match", "a\\", "--yes"}) << QByteArray("trailing");
    QTest::newRow("reset dry [") << args({"reset", "--match", "a[", "--dry-run"}) << QByteArray("unbalanced '['");
    QTest::newRow("keys [") << args({"keys", "--match", "a[b"}) << QByteArray("unbalanced '['");
    QTest::newRow("keys \\") << args({"keys", "--match", "a\\"}) << QByteArray("trailing");
    QTest::newRow("policy [") << args({"policy", "set", "p", "--match", "a[^", "--algo", "gcra", "--limit", "5", "--window", "1s"})
                              << QByteArray("unbalanced '['");
}

void TestHardening::brokenGlobsAreRejected()
{
    QFETCH(QStringList, command);
    QFETCH(QByteArray, message);
    for (const char *k : {"a", "a*", "a\\", "ab", "a["})
        m_conn->command({"SET", k, "1"});
    const QByteArray before = snapshot();
    const CliResult r = runCli(cli(command));
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(message), r.err.constData());
    QCOMPARE(snapshot(), before);
}

void TestHardening::policyGlobMustNotCoverTheNamespace()
{
    // Exactly: any glob that some key under the namespace matches, not three sample names.
    for (const char *glob : {"*", "ratescope:*", "rate*", "ratescope:pol?cies", "ratescope:override:a*", "*:a3b:x", "ratescope:ov*b*",
                             "[q-s]atescope:*", "*scope:*x", "r*e:\\*"}) {
        const CliResult r = runCli(cli(args({"policy", "set", "p", "--match", glob, "--algo", "gcra", "--limit", "5", "--window", "1s"})));
        QVERIFY2(r.exitCode == 2, glob);
        QVERIFY2(r.err.contains("where Ratescope keeps its own records"), r.err.constData());
    }
    QCOMPARE(m_conn->command({"EXISTS", "ratescope:policies"}).integer(), 0);
    int n = 0;
    for (const char *glob : {"api:*", "rate:*", "ratescopf*", "ratescope", "[^r]*", "?atescopex*"}) {
        const QByteArray name = "p" + QByteArray::number(++n);
        const CliResult r =
            runCli(cli(args({"policy", "set", name.constData(), "--match", glob, "--algo", "gcra", "--limit", "5", "--window", "1s"})));
        QVERIFY2(r.exitCode == 0, glob);
    }
}

// policy list's columns line up on a terminal whatever the names: a name longer than the column,
// wide characters (two columns each), combining marks (none).
void TestHardening::policyListAlignsByShownWidth()
{
    const QList<QPair<QString, QByteArray>> policies = {
        {QStringLiteral("plain"), "p:*"},
        {QStringLiteral("a-policy-name-longer-than-the-column"), "l:*"},
        {QStringLiteral("東京の顧客"), "tokyo:*"},
        {QStringLiteral("cafe\u0301-\U0001F600"), "cafe:*"},
    };
    for (const auto &[name, match] : policies) {
        Policy p;
        p.name = name;
        p.match = match;
        p.spec = {Algorithm::Gcra, 5, 1000000, 1};
        PolicyStore(*m_conn, kNs).set(p, 0, QStringLiteral("t"));
    }
    const CliResult r = runCli(cli(args({"policy", "list"})));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    // Columns as a terminal counts them (the characters used here only).
    const auto columns = [](const QString &text) {
        int width = 0;
        for (const char32_t c : text.toUcs4())
            width += (c >= 0x300 && c <= 0x36F) ? 0 : ((c >= 0x3040 && c <= 0x9FFF) || c >= 0x1F300) ? 2 : 1;
        return width;
    };
    const QStringList lines = QString::fromUtf8(r.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), policies.size());
    for (const auto &[name, match] : policies) {
        const auto line = std::find_if(lines.begin(), lines.end(), [&](const QString &l) { return l.startsWith(name + QLatin1Char(' ')); });
        QVERIFY2(line != lines.end(), qPrintable(name));
        const qsizetype at = line->indexOf(QLatin1Char(' ') + QString::fromUtf8(match) + QLatin1Char(' '));
        QVERIFY2(at > 0, qPrintable(*line));
        // The match column starts one column after the widest name, on every row.
        QCOMPARE(columns(line->left(at + 1)), int(QStringLiteral("a-policy-name-longer-than-the-column").size()) + 1);
        // And the algorithm column 32 columns after it.
        QCOMPARE(columns(line->left(line->indexOf(QStringLiteral(" gcra ")) + 1)), 37 + 33);
    }
}

void TestHardening::looseInputIsRefused_data()
{
    QTest::addColumn<QStringList>("command");
    QTest::addColumn<QByteArray>("message");
    const QStringList check = args({"check", "k", "--algo", "gcra", "--window", "1s"});
    QTest::newRow("namespace empty") << args({"--namespace", "", "keys"}) << QByteArray("--namespace must be 1 to 64");
    QTest::newRow("namespace glob") << args({"--namespace", "*", "keys"}) << QByteArray("--namespace may hold only");
    QTest::newRow("namespace newline") << args({"--namespace", "a\nb:", "keys"}) << QByteArray("--namespace may hold only");
    QTest::newRow("namespace 5000") << QStringList{QStringLiteral("--namespace"), QString(5000, QLatin1Char('a')), QStringLiteral("keys")}
                                    << QByteArray("--namespace must be 1 to 64");
    QTest::newRow("operator escape") << args({"--operator", "root\x1b[2J", "override", "set", "k", "--limit", "5", "--for", "1h"})
                                     << QByteArray("--operator contains a control character (U+001B)");
    QTest::newRow("operator newline") << args({"--operator", "x\nroot", "override", "set", "k", "--limit", "5", "--for", "1h"})
                                      << QByteArray("control character (U+000A)");
    QTest::newRow("operator bidi") << args({"--operator", "\u202Eeman", "override", "set", "k", "--limit", "5", "--for", "1h"})
                                   << QByteArray("invisible formatting character (U+202E)");
    QTest::newRow("operator long") << QStringList{QStringLiteral("--operator"), QString(101, QLatin1Char('o')),
                                                  QStringLiteral("override"),   QStringLiteral("set"),
                                                  QStringLiteral("k"),          QStringLiteral("--limit"),
                                                  QStringLiteral("5"),          QStringLiteral("--for"),
                                                  QStringLiteral("1h")}
                                   << QByteArray("too long");
    QTest::newRow("policy name control") << args({"policy", "set", "a\tb", "--match", "p:*", "--algo", "gcra", "--limit", "5", "--window",
                                                  "1s"})
                                         << QByteArray("control character (U+0009)");
    QTest::newRow("description newline") << args({"policy", "set", "p", "--match", "p:*", "--algo", "gcra", "--limit", "5", "--window",
                                                  "1s", "--description", "one\nFAKE"})
                                         << QByteArray("description contains a control character");
    QTest::newRow("limit space") << check + args({"--limit", " 5"}) << QByteArray("--limit must be an integer");
    QTest::newRow("limit plus") << check + args({"--limit", "+5"}) << QByteArray("--limit must be an integer");
    QTest::newRow("window inner space") << args({"check", "k", "--algo", "gcra", "--limit", "5", "--window", "60 s"})
                                        << QByteArray("invalid duration");
    QTest::newRow("window newline") << args({"check", "k", "--algo", "gcra", "--limit", "5", "--window", "60s\n"})
                                    << QByteArray("invalid duration");
    QTest::newRow("limit twice") << check + args({"--limit", "5", "--limit", "6"}) << QByteArray("--limit given twice");
    QTest::newRow("flag twice") << args({"--json", "--json", "keys"}) << QByteArray("--json given twice");
    QTest::newRow("override window 0") << args({"override", "set", "k", "--limit", "5", "--window", "0", "--for", "1h"})
                                       << QByteArray("--window must be between 1ms");
    QTest::newRow("keys type set") << args({"keys", "--type", "set"}) << QByteArray("--type must be");
    // Options that would be ignored, and an empty glob that would match everything.
    QTest::newRow("keys match empty") << args({"keys", "--match", ""}) << QByteArray("--match: the glob is empty");
    // reset refuses it in the same words, and before asking for --yes.
    QTest::newRow("reset match empty") << args({"reset", "--match", "", "--yes"}) << QByteArray("--match: the glob is empty");
    QTest::newRow("reset match empty no yes") << args({"reset", "--match", ""}) << QByteArray("--match: the glob is empty");
    QTest::newRow("reset match empty dry") << args({"reset", "--match", "", "--dry-run"}) << QByteArray("--match: the glob is empty");
    QTest::newRow("show replace") << args({"scripts", "show", "gcra", "--replace"}) << QByteArray("--replace goes with scripts deploy");
    QTest::newRow("help extra") << args({"help", "extra"}) << QByteArray("help takes --man");
    QTest::newRow("inspect sub-buckets") << args({"inspect", "k", "--sub-buckets", "7"}) << QByteArray("--sub-buckets goes with --algo");
    QTest::newRow("simulate key from-keys") << args({"simulate", "--from-keys", "a:*", "--algo", "gcra", "--limit", "5", "--window", "1s",
                                                     "--key", "zz"})
                                            << QByteArray("--key names the key a burst timeline");
    QTest::newRow("simulate base64") << args({"simulate", "--from-keys", "a:*", "--algo", "gcra", "--limit", "5", "--window", "1s",
                                              "--base64-keys"})
                                     << QByteArray("--base64-keys goes with --key");
    QTest::newRow("now beyond 2^52") << args({"check", "k", "--algo", "gcra", "--limit", "5", "--window", "1s", "--now-us",
                                              "4503599627370497"})
                                     << QByteArray("--now-us must be between 0 and 4503599627370496");
    QTest::newRow("peek now beyond 2^52") << args({"peek", "k", "--algo", "gcra", "--limit", "5", "--window", "1s", "--now-us",
                                                   "9000000000000000"})
                                          << QByteArray("--now-us must be between");
    QTest::newRow("rate space") << args({"burst", "k", "--algo", "gcra", "--limit", "5", "--window", "1s", "--requests", "1", "--rate",
                                         " 5"})
                                << QByteArray("--rate must be");
}

void TestHardening::looseInputIsRefused()
{
    QFETCH(QStringList, command);
    QFETCH(QByteArray, message);
    const CliResult r = runCli(cli(command));
    QVERIFY2(r.exitCode == 2, qPrintable(QString::number(r.exitCode) + QLatin1Char(' ') + QString::fromUtf8(r.err)));
    QVERIFY2(r.err.contains(message), r.err.constData());
    QCOMPARE(m_conn->command({"DBSIZE"}).integer(), 0); // nothing written, under any name
}

// Trace rows that were taken loosely (trimmed, an empty field read as absent, a fraction cut to
// the µs) or expanded without bound: refused, naming the line and the field, before anything runs.
void TestHardening::traceRowsAreReadStrictly_data()
{
    QTest::addColumn<QByteArray>("trace");
    QTest::addColumn<QByteArray>("message");
    QTest::newRow("time leading space") << QByteArray("time,key\n1795400000000000,a\n 1795400000000001,a\n")
                                        << QByteArray("trace.csv line 3: the time field ' 1795400000000001' has spaces around it");
    QTest::newRow("time trailing space") << QByteArray("1795400000000000 ,a\n")
                                         << QByteArray("trace.csv line 1: the time field '1795400000000000 ' has spaces around it");
    QTest::newRow("empty cost") << QByteArray("time,key,cost\n1795400000000000,a,2\n1795400000000001,a,\n")
                                << QByteArray("trace.csv line 3: the cost field is empty");
    QTest::newRow("quoted key then text") << QByteArray("1795400000000000,\"a\"\rx\n") << QByteArray("line 1: text after a closing quote");
    QTest::newRow("timeline 10^9") << QByteArray("elapsed_ms,allowed,denied,errors,unknown\n100,1000000000,0,0,0\n")
                                   << QByteArray("trace.csv line 2: the slices up to here hold 1,000,000,000 requests, more than a "
                                                 "replay takes (100,000,000 at most)");
    QTest::newRow("timeline total") << QByteArray("elapsed_ms,allowed,denied,errors,unknown\n100,60000000,0,0,0\n200,0,40000000,0,0\n"
                                                  "300,1,0,0,0\n")
                                    << QByteArray("trace.csv line 4: the slices up to here hold 100,000,001 requests");
}

void TestHardening::traceRowsAreReadStrictly()
{
    QFETCH(QByteArray, trace);
    QFETCH(QByteArray, message);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("trace.csv"));
    writeFile(path, trace);
    QElapsedTimer timer;
    timer.start();
    const CliResult r = runCli(cli(QStringList{QStringLiteral("simulate"), QStringLiteral("--trace"), path} +
                                   args({"--algo", "fixed-window", "--limit", "5", "--window", "1m"})));
    QVERIFY2(r.exitCode == 2, qPrintable(QString::number(r.exitCode) + QLatin1Char(' ') + QString::fromUtf8(r.out + r.err)));
    QVERIFY2(r.err.contains(message), r.err.constData());
    QVERIFY2(timer.elapsed() < 10000, "refused before anything was expanded or replayed");
}

// A byte order mark (spreadsheets write one) before a CSV header or a burst timeline's header is
// skipped: the header is still the header.
void TestHardening::aByteOrderMarkStartsNoRow()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("trace.csv"));
    const QStringList limits = args({"--json", "simulate", "--algo", "fixed-window", "--limit", "5", "--window", "1m", "--trace"});
    writeFile(path, "\xEF\xBB\xBFtime,key,cost\n1795400000000000,a,2\n1795400000000001,\"b\"\r\n");
    CliResult r = runCli(cli(limits + QStringList{path}));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QCOMPARE(lastJsonLine(r.out).value(QStringLiteral("requests")).toInteger(), 2);
    QCOMPARE(lastJsonLine(r.out).value(QStringLiteral("keys")).toInteger(), 2);
    // The quoted key before the line's CR is b, not "b\r".
    const QString decisions = dir.filePath(QStringLiteral("decisions.csv"));
    r = runCli(cli(limits + QStringList{path, QStringLiteral("--decisions"), decisions}));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(readAll(decisions).contains("\n1795400000000001,b,1,"), readAll(decisions).constData());

    writeFile(path, "\xEF\xBB\xBF" "elapsed_ms,allowed,denied,errors,unknown\n100,3,1,0,0\n");
    r = runCli(cli(limits + QStringList{path}));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QCOMPARE(lastJsonLine(r.out).value(QStringLiteral("requests")).toInteger(), 4);
    QVERIFY(lastJsonLine(r.out).value(QStringLiteral("trace")).toString().startsWith(QStringLiteral("burst timeline")));
}

// An unclosed quote near the top of a big trace: the rest of the file is one open field, read
// once (it was split again for every line after it: quadratic, minutes for a few MB).
void TestHardening::anUnclosedQuoteIsReadOnce()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("trace.csv"));
    QByteArray csv = "time,key\n1795400000000000,a\n1795400000000000,\"open\n";
    for (int i = 0; i < 200000; ++i)
        csv += "1795400000000001,k" + QByteArray::number(i) + '\n';
    writeFile(path, csv);
    QElapsedTimer timer;
    timer.start();
    const CliResult r = runCli(cli(QStringList{QStringLiteral("simulate"), QStringLiteral("--trace"), path} +
                                   args({"--algo", "fixed-window", "--limit", "5", "--window", "1m"})),
                               {}, 30000);
    QVERIFY2(r.exitCode == 2, qPrintable(QString::number(r.exitCode) + QLatin1Char(' ') + QString::fromUtf8(r.err)));
    QVERIFY2(r.err.contains("trace.csv line 3: a quoted field is not closed"), r.err.constData());
    QVERIFY2(timer.elapsed() < 10000, qPrintable(QStringLiteral("%1 ms").arg(timer.elapsed())));
}

// ISO times with more than 6 digits after the second (.NET's round-trip format writes 7): read
// to the µs as before, but said so on stderr, naming the first such line and the count.
void TestHardening::digitsPastTheMicrosecondAreNamed()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("trace.csv"));
    const QString decisions = dir.filePath(QStringLiteral("decisions.csv"));
    writeFile(path, "time,key\n2026-11-23T10:15:00.25Z,a\n2026-11-23T10:15:00.1234567Z,a\n"
                    "2026-11-23T11:15:00.999999999012+01:00,a\n");
    const CliResult r = runCli(cli(QStringList{QStringLiteral("--json"), QStringLiteral("simulate"), QStringLiteral("--trace"), path,
                                               QStringLiteral("--decisions"), decisions} +
                                   args({"--algo", "fixed-window", "--limit", "5", "--window", "1m"})));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.err.contains("ratescope-cli: warning: trace.csv line 3: time '2026-11-23T10:15:00.1234567Z' has 7 digits after the second: "
                            "times are read to the microsecond, the digits past the 6th are dropped (2 times in all)"),
             r.err.constData());
    QCOMPARE(lastJsonLine(r.out).value(QStringLiteral("requests")).toInteger(), 3);
    const QByteArray written = readAll(decisions);
    QVERIFY2(written.contains("\n1795428900123456,a,") && written.contains("\n1795428900999999,a,"), written.constData());

    // Six digits or fewer: nothing to say.
    writeFile(path, "time,key\n2026-11-23T10:15:00.123456Z,a\n");
    const CliResult exact = runCli(cli(QStringList{QStringLiteral("simulate"), QStringLiteral("--trace"), path} +
                                       args({"--algo", "fixed-window", "--limit", "5", "--window", "1m"})));
    QVERIFY2(exact.exitCode == 0, exact.err.constData());
    QVERIFY2(!exact.err.contains("warning"), exact.err.constData());
}

// A query parameter given twice, in any case, is refused (names are case-insensitive: TIMEOUT
// and timeout are one), never last-wins; every URL error says "invalid connection URL:" once.
void TestHardening::urlParametersAreGivenOnce_data()
{
    QTest::addColumn<QString>("query");
    QTest::addColumn<QByteArray>("message");
    QTest::newRow("timeout cases") << QStringLiteral("TIMEOUT=1s&timeout=2s")
                                   << QByteArray("invalid connection URL: 'timeout' is given twice (as 'TIMEOUT' and 'timeout')");
    QTest::newRow("same twice") << QStringLiteral("timeout=1s&timeout=1s") << QByteArray("invalid connection URL: 'timeout' is given twice");
    QTest::newRow("name") << QStringLiteral("name=a&connect_timeout=1s&Name=b")
                          << QByteArray("invalid connection URL: 'name' is given twice (as 'name' and 'Name')");
    QTest::newRow("timeout range") << QStringLiteral("timeout=0s") << QByteArray("invalid connection URL: timeout must be between 1ms and 1h");
    QTest::newRow("connect_timeout range") << QStringLiteral("connect_timeout=2h")
                                           << QByteArray("invalid connection URL: connect_timeout must be between 1ms and 1h");
    QTest::newRow("timeout not a duration") << QStringLiteral("timeout=abc")
                                            << QByteArray("invalid connection URL: timeout: invalid duration 'abc'");
}

void TestHardening::urlParametersAreGivenOnce()
{
    QFETCH(QString, query);
    QFETCH(QByteArray, message);
    const QString url = as("admin", "adminpw").toUrl(true) + QStringLiteral("?") + query;
    const CliResult r = runCli({QStringLiteral("--url"), url, QStringLiteral("--json"), QStringLiteral("info")});
    QVERIFY2(r.exitCode == 2, qPrintable(QString::number(r.exitCode) + QLatin1Char(' ') + QString::fromUtf8(r.err)));
    QVERIFY2(r.err.contains("ratescope-cli: " + message), r.err.constData());
    QCOMPARE(r.err.count("invalid connection URL"), 1);
    QCOMPARE(lastJsonLine(r.out).value(QStringLiteral("error")).toObject().value(QStringLiteral("kind")).toString(), QStringLiteral("usage"));
}

void TestHardening::missingUnixSocketIsNamed()
{
    const QString path = m_server->dir() + QStringLiteral("/nothing-here.sock");
    const CliResult r = runCli({QStringLiteral("--url"), QStringLiteral("unix://") + path, QStringLiteral("info")});
    QCOMPARE(r.exitCode, 3);
    QVERIFY2(r.err.contains("no such socket: " + path.toUtf8()), r.err.constData());
}

void TestHardening::nowFarAheadOnAnExistingKey()
{
    const qint64 serverNow = m_conn->command({"TIME"})[0].toInteger() * 1000000;
    const QStringList check = args({"--json", "check", "g:1", "--algo", "gcra", "--limit", "5", "--window", "1s"});
    const QString farAhead = QString::number(serverNow + 3600LL * 1000000);
    // A new key may be decided at any time (replays, tests).
    QCOMPARE(runCli(cli(check + QStringList{QStringLiteral("--now-us"), farAhead})).exitCode, 0);
    const QByteArray state = m_conn->command({"DUMP", "g:1"}).bytes();
    // An existing one only within a minute of the server's clock, or forced.
    const CliResult refused = runCli(cli(check + QStringList{QStringLiteral("--now-us"), farAhead}));
    QCOMPARE(refused.exitCode, 2);
    QVERIFY2(refused.err.contains("ahead of the server's clock") && refused.err.contains("--force"), refused.err.constData());
    QCOMPARE(m_conn->command({"DUMP", "g:1"}).bytes(), state);
    QCOMPARE(runCli(cli(check + QStringList{QStringLiteral("--now-us"), QString::number(serverNow + 30 * 1000000)})).exitCode, 0);
    QCOMPARE(runCli(cli(check + QStringList{QStringLiteral("--now-us"), farAhead, QStringLiteral("--force")})).exitCode, 0);
}

void TestHardening::hugeForeignCountersDoNotOverflow()
{
    const qint64 nowUs = m_conn->command({"TIME"})[0].toInteger() * 1000000;
    const QByteArray id = QByteArray::number(nowUs / 60000000);
    // A counter at INT64_MAX: curr + cost overflowed into "allowed".
    m_conn->command({"SET", "legacy:api:" + id, "9223372036854775807"});
    for (const char *algo : {"fixed-window", "sliding-counter"}) {
        const CliResult r =
            runCli(cli(args({"--json", "peek", "legacy:api", "--algo", algo, "--limit", "10", "--window", "60s", "--now-us"}) +
                       QStringList{QString::number(nowUs + 1000)}));
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject o = lastJsonLine(r.out);
        QVERIFY2(!o.value(QStringLiteral("allowed")).toBool(true), r.out.constData());
        // Shown as it is (within the 2^61 every foreign counter is capped at), never negative room.
        QCOMPARE(o.value(QStringLiteral("used")).toInteger(), qint64(1) << 61);
        QCOMPARE(o.value(QStringLiteral("remaining")).toInteger(), 0);
        QVERIFY2(o.value(QStringLiteral("retry_after_ms")).toInteger() > 0, r.out.constData());
    }
    // A negative counter reads as empty, not as credit.
    m_conn->command({"SET", "legacy:api:" + id, "-9223372036854775808"});
    const CliResult r =
        runCli(cli(args({"--json", "peek", "legacy:api", "--algo", "fixed-window", "--limit", "10", "--window", "60s", "--now-us"}) +
                   QStringList{QString::number(nowUs + 1000)}));
    QCOMPARE(lastJsonLine(r.out).value(QStringLiteral("used")).toInteger(), 1);
}

void TestHardening::hugeForeignScoresDoNotOverflow()
{
    // A foreign log with an absurd score in the window: the wait is huge, never negative or 0.
    m_conn->command({"ZADD", "partner:x", "1e300", "m"});
    const CliResult r = runCli(
        cli(args({"--json", "peek", "partner:x", "--algo", "sliding-log", "--limit", "1", "--window", "60s", "--score-unit", "ms"})));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject o = lastJsonLine(r.out);
    QVERIFY2(!o.value(QStringLiteral("allowed")).toBool(true), r.out.constData());
    QVERIFY2(o.value(QStringLiteral("reset_after_ms")).toInteger() > 1000000000000LL, r.out.constData());
    const CliResult inspect = runCli(cli(args({"--json", "inspect", "partner:x", "--score-unit", "ms"})));
    QVERIFY2(inspect.exitCode == 0, inspect.err.constData());
    QVERIFY(lastJsonLine(inspect.out)
                .value(QStringLiteral("state"))
                .toObject()
                .value(QStringLiteral("newest"))
                .toObject()
                .value(QStringLiteral("time_us"))
                .toInteger() > 0);
}

// Another service's log that keeps denied attempts (14 entries against a limit of 10, as
// rolling-rate-limiter writes them) and a counter that counts denials (14 of 10): used 14,
// remaining 0 (never negative, never clamped) in keys and peek alike, and the retry is the
// one that library tells.
void TestHardening::overLimitStateIsShownAsItIs()
{
    const qint64 now = 1795400000000000LL;
    std::vector<Command> fill;
    for (int i = 0; i < 14; ++i)
        fill.push_back({"ZADD", "rrl:u1", QByteArray::number(now - 14000 + i * 1000),
                        "5f0c6d1e-0000-4000-8000-" + QByteArray::number(100000000000LL + i)});
    m_conn->pipeline(fill);
    const qint64 windowId = now / 60000000;
    m_conn->command({"SET", "cnt:u1:" + QByteArray::number(windowId), "14"});
    for (const char *match : {"rrl:*", "cnt:*"}) {
        Policy p;
        p.name = QString::fromLatin1(match).left(3);
        p.match = match;
        p.spec = {match[0] == 'r' ? Algorithm::SlidingLog : Algorithm::FixedWindow, 10, 60000000, 1};
        PolicyStore(*m_conn, kNs).set(p, 0, QStringLiteral("t"));
    }
    const QStringList at{QStringLiteral("--now-us"), QString::number(now)};
    const CliResult keys = runCli(cli(QStringList{QStringLiteral("--json"), QStringLiteral("keys")} + at));
    QVERIFY2(keys.exitCode == 0, keys.err.constData());
    int rows = 0;
    for (const QByteArray &line : keys.out.trimmed().split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        QCOMPARE(o.value(QStringLiteral("used")).toInt(), 14);
        QCOMPARE(o.value(QStringLiteral("remaining")).toInt(), 0);
        ++rows;
    }
    QCOMPARE(rows, 2);
    const CliResult log = runCli(cli(QStringList{QStringLiteral("--json"), QStringLiteral("peek"), QStringLiteral("rrl:u1")} + at));
    const QJsonObject d = lastJsonLine(log.out);
    QCOMPARE(d.value(QStringLiteral("used")).toInt(), 14);
    QCOMPARE(d.value(QStringLiteral("remaining")).toInt(), 0);
    QCOMPARE(d.value(QStringLiteral("allowed")).toBool(), false);
    // Read by the rolling-rate-limiter reader (µs scores, UUID members): the library stores the
    // refused attempt too and has it wait for timestamps[15 - 10], the 6th oldest (now - 9 ms),
    // one window after it: 60 s - 9 ms from now.
    QCOMPARE(d.value(QStringLiteral("retry_after_ms")).toInt(), 59991);
    const CliResult counter = runCli(cli(QStringList{QStringLiteral("--json"), QStringLiteral("peek"), QStringLiteral("cnt:u1")} + at));
    QCOMPARE(lastJsonLine(counter.out).value(QStringLiteral("used")).toInt(), 14);
    QCOMPARE(lastJsonLine(counter.out).value(QStringLiteral("remaining")).toInt(), 0);
}

// Times in the JSON are integers: a sliding-buckets limiter of 1m / 7 has buckets of
// 8571428.57... µs, printed rounded down, as the part of the current bucket elapsed.
void TestHardening::bucketWidthIsAnInteger()
{
    const QStringList limits = args({"--algo", "sliding-buckets", "--limit", "5", "--window", "1m", "--sub-buckets", "7", "--now-us"});
    const qint64 now = 1795400000012345; // 2,869,487.57 µs into its bucket (the script counts in 1/7 µs)
    QCOMPARE(runCli(cli(args({"check", "sb:1"}) + limits + QStringList{QString::number(now)})).exitCode, 0);
    const CliResult r = runCli(cli(args({"--json", "inspect", "sb:1"}) + limits + QStringList{QString::number(now)}));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.out.contains("\"bucket_width_us\":8571428,"), r.out.constData());
    QVERIFY2(r.out.contains("\"elapsed_us\":"), r.out.constData());
    const QJsonObject state = lastJsonLine(r.out).value(QStringLiteral("state")).toObject();
    const QJsonValue elapsed = state.value(QStringLiteral("elapsed_us"));
    QCOMPARE(elapsed.toDouble(), double(elapsed.toInteger()));
    QCOMPARE(elapsed.toInteger(), (now % 60000000 * 7 % 60000000) / 7);
    const CliResult human = runCli(cli(args({"inspect", "sb:1"}) + limits + QStringList{QString::number(now)}));
    QVERIFY2(human.out.contains("state.bucket_width_us     8571428 (8.572s)\n"), human.out.constData());
    QVERIFY2(human.out.contains("state.elapsed_us          2869487 (2.87s)\n"), human.out.constData());
}

void TestHardening::outputPathsAreCheckedFirst_data()
{
    QTest::addColumn<QString>("what");
    QTest::addColumn<QString>("shown"); // in the message
    QTest::newRow("empty") << QString() << QStringLiteral("the path is empty");
    QTest::newRow("missing folder") << QStringLiteral("no/such/folder/out.csv") << QStringLiteral("no/such/folder");
    QTest::newRow("read-only file") << QStringLiteral("readonly.csv") << QStringLiteral("is read-only (mode 0444)");
    QTest::newRow("folder") << QStringLiteral("folder") << QStringLiteral("is a folder");
    QTest::newRow("dangling link") << QStringLiteral("dangling.csv") << QStringLiteral("symbolic link to nothing");
    QTest::newRow("unwritable folder") << QStringLiteral("locked/out.csv") << QStringLiteral("no new file can be made");
}

// Whatever the path's trouble, it is named (option and path) before anything is sent: against
// a port where nothing listens the command says 2, not 3 (it never connected), and against the
// server nothing was written: no key, no audit entry. The file there is left as it was.
void TestHardening::outputPathsAreCheckedFirst()
{
    QFETCH(QString, what);
    QFETCH(QString, shown);
    if (what.startsWith(QLatin1String("locked")) && ::geteuid() == 0)
        QSKIP("root writes into any folder");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    writeFile(dir.filePath(QStringLiteral("readonly.csv")), "old\n", 0444);
    QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("folder")));
    QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("locked")));
    QCOMPARE(::chmod(QFile::encodeName(dir.filePath(QStringLiteral("locked"))).constData(), 0555), 0);
    QVERIFY(QFile::link(dir.filePath(QStringLiteral("nowhere/x.csv")), dir.filePath(QStringLiteral("dangling.csv"))));
    const QString path = what.isEmpty() ? QString() : dir.filePath(what);
    const QString trace = dir.filePath(QStringLiteral("trace.csv"));
    writeFile(trace, traceCsv(2, 3));
    const QStringList before = entries(dir.path());
    const QString dead = QStringLiteral("redis://127.0.0.1:1/0");

    for (const bool live : {false, true}) {
        for (const QString &option : {QStringLiteral("timeline"), QStringLiteral("decisions")}) {
            const QStringList command =
                option == QLatin1String("timeline")
                    ? burstTo(path)
                    : QStringList{QStringLiteral("simulate"), QStringLiteral("--from-keys"), QStringLiteral("t:*")} +
                          args({"--algo", "gcra", "--limit", "5", "--window", "1m", "--decisions"}) + QStringList{path};
            const CliResult r = live ? runCli(cli(command)) : runCli(QStringList{QStringLiteral("--url"), dead} + command);
            QVERIFY2(r.exitCode == 2, r.err.constData());
            QVERIFY2(r.err.contains(("--" + option).toUtf8()), r.err.constData());
            QVERIFY2(r.err.contains(shown.toUtf8()), r.err.constData());
            if (!what.isEmpty())
                QVERIFY2(r.err.contains(path.toUtf8()) || r.err.contains(QFileInfo(path).path().toUtf8()), r.err.constData());
        }
    }
    QCOMPARE(snapshot(), QByteArray());
    QCOMPARE(auditLength(), 0);
    QCOMPARE(entries(dir.path()), before);
    QCOMPARE(readAll(dir.filePath(QStringLiteral("readonly.csv"))), QByteArray("old\n"));
    QCOMPARE(statOf(dir.filePath(QStringLiteral("readonly.csv"))).st_mode & 07777, mode_t(0444));
    // The trace given as a --decisions file that cannot be written: refused before it is read.
    const CliResult sim = runCli(cli(simulateTo(trace, dir.filePath(QStringLiteral("readonly.csv")))));
    QCOMPARE(sim.exitCode, 2);
}

// A regular file is replaced whole: its mode stays (not the 0600 of a temporary file, not the
// umask's), a symbolic link to it stays a link, and no temporary file is left beside it.
void TestHardening::regularFilesAreReplacedWholeWithTheirMode()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString timeline = dir.filePath(QStringLiteral("timeline.csv"));
    writeFile(timeline, "old\n", 0640);
    const CliResult burst = runCli(cli(burstTo(timeline)));
    QVERIFY2(burst.exitCode == 0, burst.err.constData());
    QVERIFY2(readAll(timeline).startsWith("elapsed_ms,allowed,denied,errors,unknown\n"), readAll(timeline).constData());
    QCOMPARE(statOf(timeline).st_mode & 07777, mode_t(0640));

    // Through a symbolic link: the file it names gets the content, the link stays.
    const QString link = dir.filePath(QStringLiteral("link.csv"));
    const QString decisions = dir.filePath(QStringLiteral("decisions.csv"));
    writeFile(decisions, "old\n", 0604);
    QVERIFY(QFile::link(decisions, link));
    const QString trace = dir.filePath(QStringLiteral("trace.csv"));
    writeFile(trace, traceCsv(2, 7));
    const CliResult sim = runCli(cli(simulateTo(trace, link)));
    QVERIFY2(sim.exitCode == 0, sim.err.constData());
    QVERIFY(S_ISLNK(statOf(link).st_mode));
    const QByteArray written = readAll(decisions);
    QVERIFY2(written.startsWith("time_us,key,allowed,used,remaining,retry_after_us\n"), written.constData());
    QCOMPARE(written.count('\n'), 1 + 14);
    QCOMPARE(statOf(decisions).st_mode & 07777, mode_t(0604));

    // A new file: 0666 less the umask (022 here, as the tests run).
    const QString fresh = dir.filePath(QStringLiteral("fresh.csv"));
    const mode_t umask = ::umask(0);
    ::umask(umask);
    QCOMPARE(runCli(cli(burstTo(fresh))).exitCode, 0);
    QCOMPARE(statOf(fresh).st_mode & 07777, mode_t(0666 & ~umask));
    QCOMPARE(entries(dir.path()), (QStringList{QStringLiteral("decisions.csv"), QStringLiteral("fresh.csv"), QStringLiteral("link.csv"),
                                               QStringLiteral("timeline.csv"), QStringLiteral("trace.csv")}));
}

// A character device or a FIFO is written, never replaced by a regular file. The FIFO's reader
// is this test, opened read-write first (so the command's open does not wait) and read once the
// command is done: what it wrote is in the pipe's buffer, far below its 64 KiB.
void TestHardening::devicesAndFifosAreWrittenInPlace()
{
    const CliResult null = runCli(cli(burstTo(QStringLiteral("/dev/null"))));
    QVERIFY2(null.exitCode == 0, null.err.constData());
    QVERIFY(S_ISCHR(statOf(QStringLiteral("/dev/null")).st_mode));

    // A device that refuses the bytes: said after the summary (exit 2), and still a device.
    if (QFileInfo::exists(QStringLiteral("/dev/full"))) {
        const CliResult full = runCli(cli(burstTo(QStringLiteral("/dev/full"))));
        QCOMPARE(full.exitCode, 2);
        QVERIFY2(full.err.contains("--timeline '/dev/full' was not written"), full.err.constData());
        QVERIFY(full.out.contains("sent"));
        QVERIFY(S_ISCHR(statOf(QStringLiteral("/dev/full")).st_mode));
    }

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString fifo = dir.filePath(QStringLiteral("pipe"));
    QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
    const int reader = ::open(QFile::encodeName(fifo).constData(), O_RDWR | O_NONBLOCK);
    QVERIFY(reader >= 0);
    auto drain = [reader] {
        QByteArray got;
        char buffer[4096];
        for (int i = 0; i < 64; ++i) { // 256 KiB at most: bounded
            const ssize_t n = ::read(reader, buffer, sizeof buffer);
            if (n <= 0)
                break;
            got.append(buffer, n);
        }
        return got;
    };
    const CliResult burst = runCli(cli(burstTo(fifo)));
    QVERIFY2(burst.exitCode == 0, burst.err.constData());
    QVERIFY2(drain().startsWith("elapsed_ms,allowed,denied,errors,unknown\n"), "the timeline did not come through the FIFO");
    const QString trace = dir.filePath(QStringLiteral("trace.csv"));
    writeFile(trace, traceCsv(1, 6));
    const CliResult sim = runCli(cli(simulateTo(trace, fifo)));
    QVERIFY2(sim.exitCode == 0, sim.err.constData());
    const QByteArray decisions = drain();
    QCOMPARE(decisions.count('\n'), 1 + 6);
    QCOMPARE(decisions.count(",t:0,0,"), 1); // the sixth request, denied
    ::close(reader);
    QVERIFY(S_ISFIFO(statOf(fifo).st_mode));
}

// `-` (and /dev/stdout, standard output under another name) is standard output: the CSV has it
// to itself, and what the command reports goes to standard error.
void TestHardening::dashIsStandardOutput()
{
    const CliResult burst = runCli(cli(burstTo(QStringLiteral("-"))));
    QVERIFY2(burst.exitCode == 0, burst.err.constData());
    QVERIFY2(burst.out.startsWith("elapsed_ms,allowed,denied,errors,unknown\n"), burst.out.constData());
    QVERIFY(!burst.out.contains("sent"));
    QVERIFY2(burst.err.contains("allowed     5"), burst.err.constData());

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString trace = dir.filePath(QStringLiteral("trace.csv"));
    writeFile(trace, traceCsv(3, 7));
    for (const QString &target : {QStringLiteral("-"), QStringLiteral("/dev/stdout")}) {
        const CliResult sim = runCli(cli(QStringList{QStringLiteral("--json")} + simulateTo(trace, target)));
        QVERIFY2(sim.exitCode == 0, sim.err.constData());
        QVERIFY2(sim.out.startsWith("time_us,key,allowed,used,remaining,retry_after_us\n"), sim.out.constData());
        QCOMPARE(sim.out.count('\n'), 1 + 21);
        QCOMPARE(lastJsonLine(sim.err).value(QStringLiteral("denied")).toInt(), 6); // the summary, on stderr
    }
}

// The trace given as --decisions, by its name, a symbolic link or a hard link: refused before
// anything runs, the trace intact.
void TestHardening::theTraceIsNeverTheDecisions()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString trace = dir.filePath(QStringLiteral("trace.csv"));
    const QByteArray csv = traceCsv(2, 3);
    writeFile(trace, csv);
    QVERIFY(QFile::link(trace, dir.filePath(QStringLiteral("symlink.csv"))));
    QCOMPARE(::link(QFile::encodeName(trace).constData(), QFile::encodeName(dir.filePath(QStringLiteral("hardlink.csv"))).constData()), 0);
    for (const QString &name : {QStringLiteral("trace.csv"), QStringLiteral("symlink.csv"), QStringLiteral("hardlink.csv")}) {
        const CliResult r = runCli(cli(simulateTo(trace, dir.filePath(name))));
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("is the --trace file"), r.err.constData());
        QCOMPARE(readAll(trace), csv);
    }
    QCOMPARE(entries(dir.path()).size(), 3);
}

// A run that fails once the file is open, or is interrupted, leaves the old file as it was and
// nothing beside it.
void TestHardening::failedOrInterruptedRunsKeepTheOldFile()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString decisions = dir.filePath(QStringLiteral("decisions.csv"));
    writeFile(decisions, "old\n", 0640);
    const QString trace = dir.filePath(QStringLiteral("trace.csv"));

    // Failed: no redis-server on PATH for the sandbox, after the decisions file was opened.
    writeFile(trace, traceCsv(2, 3));
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("PATH"), dir.filePath(QStringLiteral("nothing-here")));
        p.setProcessEnvironment(env);
        p.start(BuiltPaths::cli(), cli(simulateTo(trace, decisions)));
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 3);
        QCOMPARE(readAll(decisions), QByteArray("old\n"));
        QCOMPARE(entries(dir.path()), (QStringList{QStringLiteral("decisions.csv"), QStringLiteral("trace.csv")}));
    }

    // Interrupted: once the first key's line is out the replay is under way; Ctrl-C ends it.
    writeFile(trace, traceCsv(40000, 2));
    QProcess p;
    p.start(BuiltPaths::cli(), cli(QStringList{QStringLiteral("--json")} + simulateTo(trace, decisions) + args({"--per-key"})));
    QVERIFY(p.waitForStarted(10000));
    QByteArray out;
    for (int i = 0; i < 1200 && !out.contains('\n') && p.state() == QProcess::Running; ++i) {
        p.waitForReadyRead(50);
        out += p.readAllStandardOutput();
    }
    QVERIFY2(p.state() == QProcess::Running, "the replay ended before it could be interrupted");
    ::kill(pid_t(p.processId()), SIGINT);
    QVERIFY(p.waitForFinished(30000));
    out += p.readAllStandardOutput();
    const QByteArray err = p.readAllStandardError();
    QCOMPARE(p.exitCode(), 130);
    QVERIFY2(err.contains("--decisions '" + QFile::encodeName(decisions) + "' was not written (interrupted)"), err.constData());
    QCOMPARE(lastJsonLine(out).value(QStringLiteral("cancelled")).toBool(), true);
    QCOMPARE(readAll(decisions), QByteArray("old\n"));
    QCOMPARE(statOf(decisions).st_mode & 07777, mode_t(0640));
    QCOMPARE(entries(dir.path()), (QStringList{QStringLiteral("decisions.csv"), QStringLiteral("trace.csv")}));
}

QTEST_GUILESS_MAIN(TestHardening)
void TestHardening::aGiantBucketHashIsReadBounded()
{
    // Shaped like a sliding-buckets hash (window 1m, B = 60: one-second buckets), 300,000 bucket
    // fields ahead of its newest; the script still decides on it, reading the few it needs.
    const qint64 nowS = m_conn->command({"TIME"})[0].toInteger();
    const QByteArray h = QByteArray::number(nowS - 3);
    m_conn->command({"EVAL",
                     "local h = tonumber(ARGV[1]) "
                     "redis.call('HSET', KEYS[1], 'ws', '60000000', 'bn', '60', 't', '7', 'l', h - 10, 'h', h, 'b' .. (h - 10), '2', "
                     "'b' .. h, '5') "
                     "for i = 1, 300000, 1000 do local f = {} for j = i, i + 999 do f[#f + 1] = 'b' .. (h + j) f[#f + 1] = '5' end "
                     "redis.call('HSET', KEYS[1], unpack(f)) end",
                     "1", "giant", h});
    QCOMPARE(m_conn->command({"HLEN", "giant"}).integer(), 300007);
    const QStringList limits = args({"--algo", "sliding-buckets", "--limit", "100", "--window", "1m"});
    const qint64 at = (nowS - 1) * 1000000 + 500000;
    const QStringList now{QStringLiteral("--now-us"), QString::number(at)};
    // inspect: a page of the fields, their number, and the script's own answer.
    const CliResult inspected = runCli(cli(args({"--json", "inspect", "giant"}) + limits + now));
    QVERIFY2(inspected.exitCode == 0, inspected.err.constData());
    const QJsonObject o = lastJsonLine(inspected.out);
    const QJsonObject state = o[QLatin1String("state")].toObject();
    QCOMPARE(state[QLatin1String("fields_total")].toInteger(), 300007);
    QVERIFY2(state[QLatin1String("fields")].toObject().size() < 20000, qPrintable(QString::number(state[QLatin1String("fields")].toObject().size())));
    const Decision script = Limiter(*m_conn).peek("giant", {Algorithm::SlidingBuckets, 100, 60000000, 1, 60}, at);
    const QJsonObject decision = o[QLatin1String("decision")].toObject();
    QCOMPARE(decision[QLatin1String("used")].toInteger(), script.used);
    QCOMPARE(decision[QLatin1String("retry_after_us")].toInteger(), script.retryAfterUs);
    QCOMPARE(decision[QLatin1String("reset_after_us")].toInteger(), script.resetAfterUs);
    QCOMPARE(state[QLatin1String("bucket_counts")].toArray().size(), 61);
    // The plain-read peek of a user who may not run scripts reads the same, by name.
    const auto fields = Limiter(*m_conn).peekFromFields("giant", {Algorithm::SlidingBuckets, 100, 60000000, 1, 60}, at);
    QVERIFY(fields);
    QVERIFY(*fields == script);
    // A clock behind its newest bucket: the script reads there, and so does the plain read.
    const qint64 behind = (nowS - 30) * 1000000;
    QVERIFY(*Limiter(*m_conn).peekFromFields("giant", {Algorithm::SlidingBuckets, 100, 60000000, 1, 60}, behind) ==
            Limiter(*m_conn).peek("giant", {Algorithm::SlidingBuckets, 100, 60000000, 1, 60}, behind));
    // top: read a page at a time, its rate is not known (never the sum of the buckets ahead).
    const CliResult top = runCli(cli(args({"--json", "top", "--interval", "10ms"})));
    QVERIFY2(top.exitCode == 0, top.err.constData());
    const QJsonObject row = QJsonDocument::fromJson(top.out.split('\n').first()).object();
    QCOMPARE(row[QLatin1String("key")].toString(), QStringLiteral("giant"));
    QVERIFY2(row[QLatin1String("rate")].isNull(), top.out.constData());
}

#include "tst_hardening.moc"
