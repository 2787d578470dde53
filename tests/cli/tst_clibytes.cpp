// Keys are bytes, and the CLI treats them so: a KEY argument is the exact bytes given (u:\xff
// and u:\xfe stay two keys), --base64-keys takes keys no command line can carry (a NUL), the
// JSON output carries key_base64 for every key that is not plain text, and a key listed by
// `keys --json` can always be reset from that output. Human output escapes keys, members,
// names and error messages, so server-supplied text cannot retitle or clear a terminal or
// forge a row.
#include "admin/audit.h"
#include "redis/connection.h"
#include "limiters/limiter.h"
#include "redis/sandboxserver.h"
#include "testsupport.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace ratescope;
using namespace ratescope::test;

namespace {

constexpr qint64 kMinuteUs = 60LL * 1000000;

// Keys of every awkward kind: NUL, invalid UTF-8, a newline, spaces, non-Latin text, terminal
// escapes, a bidi override and a forged table row.
const QList<QByteArray> kAwkwardKeys = {
    QByteArray("bin\x00\xff\nkey", 9),
    "u:\xff",
    "u:\xfe",
    "u:\xc3",
    "with spaces in it",
    "клиент:東京:😀",
    "o:\x1b]0;title\x07",
    "o:\x1b[2J",
    "o:nl\nFAKE-ROW  gcra  0 0 0 none",
    "user\xe2\x80\xaegnp.exe",
};

QList<QJsonObject> jsonLines(const QByteArray &out)
{
    QList<QJsonObject> lines;
    for (const QByteArray &line : out.split('\n'))
        if (!line.isEmpty())
            lines << QJsonDocument::fromJson(line).object();
    return lines;
}

// The exact key a JSON object names: key_base64 when present, else key as text.
QByteArray keyOf(const QJsonObject &o)
{
    const QJsonValue b = o.value(QStringLiteral("key_base64"));
    return b.isString() ? QByteArray::fromBase64(b.toString().toLatin1()) : o.value(QStringLiteral("key")).toString().toUtf8();
}

bool hasRawControl(const QByteArray &text)
{
    for (const char c : text)
        if ((uchar(c) < 0x20 && c != '\n') || uchar(c) == 0x7f)
            return true;
    return text.contains("\xe2\x80\xae") || text.contains("\xc2\x85");
}

} // namespace

class TestCliBytes : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { m_server.start(); }
    void init() { Connection(m_server.options()).command({"FLUSHALL"}); }

    void keyArgumentsAreTheBytesGiven();
    void base64KeysCarryWhatArgvCannot();
    void keysJsonRoundTripsThroughReset();
    void matchTakesBytes();
    void humanOutputIsEscaped();
    void standInsNeverCollide();
    void badBase64IsAUsageError();
    void textMustBeUtf8();
    void policyGlobMustBeUtf8();
    void pathsAreBytes();
    void serverErrorsEscapeKeyBytes();
    void inspectShowsMembersAsKeysShowKeys();

private:
    QList<QByteArray> args(const QList<QByteArray> &rest) const { return QList<QByteArray>{"--url", m_server.url().toUtf8()} + rest; }
    SandboxServer m_server;
};

void TestCliBytes::keyArgumentsAreTheBytesGiven()
{
    for (const QByteArray &key : {QByteArray("u:\xff"), QByteArray("u:\xfe")}) {
        const CliResult r = runCliBytes(args({"check", key, "--algo", "fixed-window", "--limit", "5", "--window", "60s"}));
        QVERIFY2(r.exitCode == 0, r.err.constData());
    }
    Connection c(m_server.options());
    QCOMPARE(c.command({"EXISTS", "u:\xff"}).toInteger(), 1);
    QCOMPARE(c.command({"EXISTS", "u:\xfe"}).toInteger(), 1);
    QCOMPARE(c.command({"EXISTS", "u:\xef\xbf\xbd"}).toInteger(), 0); // never the replacement character
    QCOMPARE(c.command({"DBSIZE"}).toInteger(), 2);

    // inspect sees the key that exists; reset --dry-run offers exactly it.
    const CliResult inspect =
        runCliBytes(args({"--json", "inspect", "u:\xff", "--algo", "fixed-window", "--limit", "5", "--window", "60s"}));
    QCOMPARE(inspect.exitCode, 0);
    const QJsonObject state = QJsonDocument::fromJson(inspect.out).object();
    QCOMPARE(state.value(QStringLiteral("exists")).toBool(), true);
    QCOMPARE(keyOf(state), QByteArray("u:\xff"));

    c.command({"ZADD", "u:\xc3", "1", "m"});
    const CliResult dry = runCliBytes(args({"--json", "reset", "u:\xc3", "--dry-run"}));
    QVERIFY2(dry.exitCode == 0, dry.err.constData());
    const QJsonObject plan = QJsonDocument::fromJson(dry.out).object();
    QCOMPARE(plan.value(QStringLiteral("matched")).toInt(), 1);
    QCOMPARE(plan.value(QStringLiteral("keys_base64")).toArray().at(0).toString().toLatin1(), QByteArray("u:\xc3").toBase64());
}

void TestCliBytes::base64KeysCarryWhatArgvCannot()
{
    const QByteArray key("bin\x00\xff\nkey", 9);
    const CliResult r = runCli({QStringLiteral("--url"), m_server.url(), QStringLiteral("check"), QStringLiteral("--base64-keys"),
                                QString::fromLatin1(key.toBase64()), QStringLiteral("--algo"), QStringLiteral("sliding-log"),
                                QStringLiteral("--limit"), QStringLiteral("3"), QStringLiteral("--window"), QStringLiteral("60s")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    Connection c(m_server.options());
    QCOMPARE(c.command({"ZCARD", key}).toInteger(), 1);
    QCOMPARE(c.command({"DBSIZE"}).toInteger(), 1);
}

void TestCliBytes::keysJsonRoundTripsThroughReset()
{
    Connection c(m_server.options());
    const LimitSpec spec{Algorithm::SlidingLog, 10, kMinuteUs, 1};
    for (const QByteArray &key : kAwkwardKeys)
        Limiter(c).check(key, spec);
    // Neighbours that a lossy decoding would confuse with the keys above: they must survive.
    const QList<QByteArray> survivors = {"u:\xef\xbf\xbd", "bin", "o:", "u:"};
    for (const QByteArray &key : survivors)
        Limiter(c).check(key, spec);

    const CliResult listed = runCli({QStringLiteral("--url"), m_server.url(), QStringLiteral("--json"), QStringLiteral("keys")});
    QVERIFY2(listed.exitCode == 0, listed.err.constData());
    QList<QByteArray> fromJson;
    for (const QJsonObject &o : jsonLines(listed.out))
        fromJson << keyOf(o);
    QCOMPARE(fromJson.size(), kAwkwardKeys.size() + survivors.size());
    for (const QByteArray &key : kAwkwardKeys + survivors)
        QVERIFY2(fromJson.contains(key), qPrintable(QString::fromLatin1(key.toBase64())));

    QStringList resetArgs{QStringLiteral("--url"),         m_server.url(),         QStringLiteral("--json"), QStringLiteral("reset"),
                          QStringLiteral("--base64-keys"), QStringLiteral("--yes")};
    for (const QByteArray &key : fromJson)
        if (!survivors.contains(key))
            resetArgs << QString::fromLatin1(key.toBase64());
    const CliResult reset = runCli(resetArgs);
    QVERIFY2(reset.exitCode == 0, reset.err.constData());
    QCOMPARE(QJsonDocument::fromJson(reset.out).object().value(QStringLiteral("deleted")).toInt(), kAwkwardKeys.size());
    for (const QByteArray &key : kAwkwardKeys)
        QCOMPARE(c.command({"EXISTS", key}).toInteger(), 0);
    for (const QByteArray &key : survivors)
        QCOMPARE(c.command({"EXISTS", key}).toInteger(), 1);
}

void TestCliBytes::matchTakesBytes()
{
    Connection c(m_server.options());
    for (const QByteArray &key : {QByteArray("u:\xff"
                                             "1"),
                                  QByteArray("u:\xff"
                                             "2"),
                                  QByteArray("u:\xfe"
                                             "1"),
                                  QByteArray("u:\xef\xbf\xbd"
                                             "1")})
        c.command({"ZADD", key, "1", "m"});
    const CliResult r = runCliBytes(args({"--json", "keys", "--all", "--match", "u:\xff*"}));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QList<QByteArray> keys;
    for (const QJsonObject &o : jsonLines(r.out))
        keys << keyOf(o);
    std::sort(keys.begin(), keys.end());
    QCOMPARE(keys, (QList<QByteArray>{"u:\xff"
                                      "1",
                                      "u:\xff"
                                      "2"}));
    // The --opt=VALUE form too.
    const CliResult eq = runCliBytes(args({"--json", "reset", "--dry-run", "--include-non-limiters", "--match=u:\xfe*"}));
    QVERIFY2(eq.exitCode == 0, eq.err.constData());
    QCOMPARE(QJsonDocument::fromJson(eq.out).object().value(QStringLiteral("matched")).toInt(), 1);
}

void TestCliBytes::humanOutputIsEscaped()
{
    Connection c(m_server.options());
    const LimitSpec spec{Algorithm::SlidingLog, 10, kMinuteUs, 1};
    for (const QByteArray &key : kAwkwardKeys)
        Limiter(c).check(key, spec);
    // A partner's log in milliseconds whose members are terminal escapes and a forged line.
    const QByteArray nowMs = QByteArray::number(QDateTime::currentMSecsSinceEpoch());
    c.command({"ZADD", "o:members", nowMs, "\x1b]0;pwned\x07", nowMs, "row\nFAKE"});

    // keys: one line per key plus the header; no control byte reaches the terminal.
    const CliResult keys = runCli({QStringLiteral("--url"), m_server.url(), QStringLiteral("keys")});
    QVERIFY2(keys.exitCode == 0, keys.err.constData());
    QVERIFY(!hasRawControl(keys.out));
    const CliResult keysJson = runCli({QStringLiteral("--url"), m_server.url(), QStringLiteral("--json"), QStringLiteral("keys")});
    QCOMPARE(keysJson.out.count('\n'), kAwkwardKeys.size() + 1); // and the partner's log
    QCOMPARE(keys.out.count('\n'), keysJson.out.count('\n') + 1);
    QVERIFY(keys.out.contains("\"o:\\x1b[2J\""));
    QVERIFY(keys.out.contains("\"o:nl\\nFAKE-ROW  gcra  0 0 0 none\""));
    QVERIFY(keys.out.contains("клиент:東京:😀"));

    // inspect: the key and the members, escaped.
    const CliResult inspect = runCliBytes(args({"inspect", "o:members", "--algo", "sliding-log", "--limit", "5", "--window", "60s"}));
    QVERIFY2(inspect.exitCode == 0, inspect.err.constData());
    QVERIFY(!hasRawControl(inspect.out));
    QVERIFY(inspect.out.contains("\"\\x1b]0;pwned\\a\""));
    QVERIFY(inspect.out.contains("\"row\\nFAKE\""));
    const CliResult inspectKey = runCliBytes(args({"inspect", "o:\x1b[2J", "--algo", "sliding-log", "--limit", "5", "--window", "60s"}));
    QVERIFY2(inspectKey.exitCode == 0, inspectKey.err.constData());
    QVERIFY(!hasRawControl(inspectKey.out));
    QVERIFY(inspectKey.out.contains("\"o:\\x1b[2J\""));

    // Error messages quoting a key (no policy covers it) and a name as given.
    const CliResult noPolicy = runCliBytes(args({"check", "o:\x1b]0;title\x07"}));
    QCOMPARE(noPolicy.exitCode, 2);
    QVERIFY(!hasRawControl(noPolicy.err));
    QVERIFY(noPolicy.err.contains("\"o:\\x1b]0;title\\a\"")); // as redis-cli writes BEL
    const CliResult noName = runCliBytes(args({"policy", "get", "\x1b[2J\x1b]0;x\x07"}));
    QCOMPARE(noName.exitCode, 6); // a policy that does not exist
    QVERIFY(!hasRawControl(noName.err));
    QVERIFY(noName.err.contains("\\x1b[2J"));

    // The audit trail as another writer may have left it: actor, host and target with escapes.
    AuditEntry forged;
    forged.action = QStringLiteral("reset");
    forged.target = QStringLiteral("x\nFAKE  root  reset  everything");
    AuditLog(c, QStringLiteral("ratescope:")).append(forged, QStringLiteral("\x1b[2Jroot"));
    const CliResult audit = runCli({QStringLiteral("--url"), m_server.url(), QStringLiteral("audit")});
    QVERIFY2(audit.exitCode == 0, audit.err.constData());
    QVERIFY(!hasRawControl(audit.out));
    QCOMPARE(audit.out.count('\n'), 1);
}

void TestCliBytes::standInsNeverCollide()
{
    // A valid key spelled like the stand-in an undecodable argument would get must stay itself.
    Connection c(m_server.options());
    const QByteArray lookalike = QString(QChar(0xFDD0) + QStringLiteral("5") + QChar(0xFDD1)).toUtf8();
    c.command({"ZADD", lookalike, "1", "m"});
    c.command({"ZADD", "u:\xff", "1", "m"});
    // argv: [0] bash's exec name, then --url URL --json reset --dry-run LOOKALIKE u:\xff
    const CliResult r = runCliBytes(args({"--json", "reset", "--dry-run", lookalike, "u:\xff"}));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject plan = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(plan.value(QStringLiteral("matched")).toInt(), 2);
    QList<QByteArray> planned;
    for (const QJsonValue v : plan.value(QStringLiteral("keys_base64")).toArray())
        planned << QByteArray::fromBase64(v.toString().toLatin1());
    std::sort(planned.begin(), planned.end());
    QList<QByteArray> expected{lookalike, "u:\xff"};
    std::sort(expected.begin(), expected.end());
    QCOMPARE(planned, expected);
}

void TestCliBytes::badBase64IsAUsageError()
{
    for (const QString &bad : {QStringLiteral("abc!"), QStringLiteral("dTr"), QString()}) {
        const CliResult r = runCli({QStringLiteral("--url"), m_server.url(), QStringLiteral("peek"), QStringLiteral("--base64-keys"), bad,
                                    QStringLiteral("--algo"), QStringLiteral("gcra"), QStringLiteral("--limit"), QStringLiteral("1"),
                                    QStringLiteral("--window"), QStringLiteral("1s")});
        QCOMPARE(r.exitCode, 2);
    }
    // A command without KEY arguments does not take the option.
    const CliResult keys = runCli({QStringLiteral("--url"), m_server.url(), QStringLiteral("keys"), QStringLiteral("--base64-keys")});
    QCOMPARE(keys.exitCode, 2);
}

// Names, descriptions, the operator and the namespace are text: a value that is not UTF-8 is
// refused before anything is sent, never recorded as a stand-in or a replacement character.
void TestCliBytes::textMustBeUtf8()
{
    Connection c(m_server.options());
    c.command({"ZADD", "u:1", "1", "m"});
    const QList<QByteArray> policy = {"--match", "p:*", "--algo", "gcra", "--limit", "5", "--window", "1s"};
    const struct {
        QList<QByteArray> command;
        QByteArray message;
    } cases[] = {
        {{"--operator", "ops\xff", "reset", "u:1", "--yes"}, "--operator: not valid UTF-8 (\"ops\\xff\")"},
        {{"--operator=ops\xfe", "reset", "u:1", "--yes"}, "--operator: not valid UTF-8"},
        {{"--namespace", "ns\xff:", "reset", "u:1", "--yes"}, "--namespace: not valid UTF-8"},
        {QList<QByteArray>{"policy", "set", "p", "--description", "d\xff"} + policy, "--description: not valid UTF-8"},
        {QList<QByteArray>{"policy", "set", "p\xff"} + policy, "policy: the argument \"p\\xff\" is not valid UTF-8"},
        {{"policy", "delete", "p\xff"}, "is not valid UTF-8"},
        {{"check", "u:2", "--algo", "gcra\xff", "--limit", "5", "--window", "1s"}, "--algo: not valid UTF-8"},
        // An action word before a KEY: unknown, named by its bytes.
        {{"override", "s\xff", "u:1"}, "unknown override action '\"s\\xff\"'"},
        {{"scripts", "s\xff"}, "scripts: the argument \"s\\xff\" is not valid UTF-8"},
    };
    for (const auto &k : cases) {
        const CliResult r = runCliBytes(args(k.command));
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(k.message), r.err.constData());
        QVERIFY2(!r.err.contains("\xef\xb7\x90"), r.err.constData()); // no stand-in (U+FDD0) shown
    }
    QCOMPARE(c.command({"EXISTS", "u:1"}).toInteger(), 1);
    QCOMPARE(c.command({"DBSIZE"}).toInteger(), 1); // no policy, no audit entry, no u:2
}

// A policy is stored as JSON text: a glob that is not UTF-8 would come back with U+FFFD and
// match other keys than those meant, so it is refused; ? matches any one byte instead.
void TestCliBytes::policyGlobMustBeUtf8()
{
    Connection c(m_server.options());
    const CliResult bad =
        runCliBytes(args({"policy", "set", "k", "--match", "k:\xff*", "--algo", "gcra", "--limit", "5", "--window", "1m"}));
    QCOMPARE(bad.exitCode, 2);
    QVERIFY2(bad.err.contains("key pattern: not valid UTF-8 (\"k:\\xff*\")"), bad.err.constData());
    QCOMPARE(c.command({"DBSIZE"}).toInteger(), 0);

    const CliResult good = runCliBytes(args({"policy", "set", "k", "--match", "k:?*", "--algo", "gcra", "--limit", "5", "--window", "1m"}));
    QVERIFY2(good.exitCode == 0, good.err.constData());
    const CliResult check = runCliBytes(args({"--json", "check", "k:\xff"}));
    QVERIFY2(check.exitCode == 0, check.err.constData());
    QCOMPARE(QJsonDocument::fromJson(check.out).object().value(QStringLiteral("limit")).toInt(), 5);
}

// File paths are bytes: the timeline is written to the file of exactly the name given (not one
// with U+FFFD, not one named after the stand-in in the current folder), read back as a trace by
// that name, and the decisions written beside it by theirs.
void TestCliBytes::pathsAreBytes()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QByteArray folder = QFile::encodeName(dir.path());
    const QByteArray timeline = folder + "/t\xff.csv";
    const QByteArray decisions = folder + "/d\xfe.csv";
    // QDir cannot name these files (it decodes their names to U+FFFD): they are counted and
    // removed by their bytes.
    const auto names = [&folder] {
        QList<QByteArray> found;
        if (DIR *d = ::opendir(folder.constData())) {
            while (const dirent *e = ::readdir(d))
                if (qstrcmp(e->d_name, ".") != 0 && qstrcmp(e->d_name, "..") != 0)
                    found << QByteArray(e->d_name);
            ::closedir(d);
        }
        std::sort(found.begin(), found.end());
        return found;
    };
    const auto cleanup = qScopeGuard([&] {
        ::unlink(timeline.constData());
        ::unlink(decisions.constData());
    });
    const CliResult burst = runCliBytes(
        args({"burst", "b:1", "--algo", "fixed-window", "--limit", "3", "--window", "1m", "--requests", "5", "--timeline", timeline}));
    QVERIFY2(burst.exitCode == 0, burst.err.constData());
    struct stat st = {};
    QCOMPARE(::stat(timeline.constData(), &st), 0);
    QVERIFY(S_ISREG(st.st_mode) && st.st_size > 0);
    QCOMPARE(names(), QList<QByteArray>{"t\xff.csv"});

    const CliResult sim = runCliBytes(
        args({"simulate", "--trace", timeline, "--algo", "fixed-window", "--limit", "3", "--window", "1m", "--decisions=" + decisions}));
    QVERIFY2(sim.exitCode == 0, sim.err.constData());
    QVERIFY2(sim.out.contains("t\\xff.csv"), sim.out.constData()); // the trace named, escaped
    QCOMPARE(::stat(decisions.constData(), &st), 0);
    QCOMPARE(names(), (QList<QByteArray>{"d\xfe.csv", "t\xff.csv"}));

    // A missing one is named as given, escaped.
    const CliResult missing =
        runCliBytes(args({"simulate", "--trace", folder + "/n\xff.csv", "--algo", "gcra", "--limit", "3", "--window", "1m"}));
    QCOMPARE(missing.exitCode, 2);
    QVERIFY2(missing.err.contains("--trace: cannot read \"" + folder + "/n\\xff.csv\": No such file or directory"),
             missing.err.constData());
}

// A server's error reply quoting a key that is not UTF-8 (the scripts' "key '...' is not a
// ratescope ...", a WRONGTYPE): the bytes escaped as \xNN, as keys are everywhere else, never
// U+FFFD, so u:\xff and u:\xfe stay two keys in the message too.
void TestCliBytes::serverErrorsEscapeKeyBytes()
{
    Connection c(m_server.options());
    for (const QByteArray &key : {QByteArray("u:\xff"), QByteArray("u:\xfe")}) {
        c.command({"HSET", key, "x", "1"});
        const QByteArray shown = key == "u:\xff" ? "u:\\xff" : "u:\\xfe";
        const QList<QPair<QByteArray, QByteArray>> cases = {
            {"token-bucket", "ERR ratescope: key '" + shown + "' is not a ratescope token bucket (field tk is missing)"}, // the script's
            {"sliding-log", "WRONGTYPE key '" + shown + "' holds a hash, sliding-log needs a zset"},                  // this side's
        };
        for (const auto &[algo, message] : cases) {
            const CliResult r = runCliBytes(args({"--json", "check", key, "--algo", algo, "--limit", "5", "--window", "1s"}));
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(r.err.contains("ratescope-cli: " + message + '\n'), r.err.constData());
            QVERIFY2(!r.err.contains("\xef\xbf\xbd") && !r.out.contains("\xef\xbf\xbd"), r.err.constData());
            const QJsonObject error = QJsonDocument::fromJson(r.out).object().value(QStringLiteral("error")).toObject();
            QCOMPARE(error.value(QStringLiteral("message")).toString().toUtf8(), message);
        }
    }
}

// A sliding log's members in inspect's human output: shown as `keys` shows the same bytes as a
// key (plain text as itself, anything else quoted and escaped), not some quoted (invalid UTF-8)
// and others bare with \xNN escapes (a newline).
void TestCliBytes::inspectShowsMembersAsKeysShowKeys()
{
    Connection c(m_server.options());
    const qint64 t = 1795400000000000;
    const QList<QByteArray> members = {"m\xff" "1", "x\ny", "a b", "\"q", "tab\there"};
    for (int i = 0; i < members.size(); ++i) {
        c.command({"ZADD", "log:m", QByteArray::number(t + i), members[i]});
        c.command({"ZADD", members[i], QByteArray::number(t), "m"}); // the same bytes as a key, for keys
    }
    const CliResult keys = runCli({QStringLiteral("--url"), m_server.url(), QStringLiteral("keys")});
    QVERIFY2(keys.exitCode == 0, keys.err.constData());
    const CliResult inspect =
        runCliBytes(args({"inspect", "log:m", "--algo", "sliding-log", "--limit", "10", "--window", "1m", "--now-us", "1795400000000010"}));
    QVERIFY2(inspect.exitCode == 0, inspect.err.constData());
    const QList<QByteArray> shown = {"\"m\\xff1\"", "\"x\\ny\"", "a b", "\"\\\"q\"", "\"tab\\there\""};
    for (int i = 0; i < members.size(); ++i) {
        const QByteArray line = "state.entries[" + QByteArray::number(i) + "].member";
        QVERIFY2(inspect.out.contains(QByteArray(line).leftJustified(26) + shown[i] + '\n'), inspect.out.constData());
        QVERIFY2(keys.out.contains('\n' + shown[i] + ' '), keys.out.constData());
    }
    QVERIFY2(inspect.out.contains("state.oldest.member       \"m\\xff1\"\n"), inspect.out.constData());
    QVERIFY2(inspect.out.contains("state.newest.member       \"tab\\there\"\n"), inspect.out.constData());
}

QTEST_GUILESS_MAIN(TestCliBytes)
#include "tst_clibytes.moc"
