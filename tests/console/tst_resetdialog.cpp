// The console's reset dialog against a real redis-server: a pattern reset deletes exactly the
// previewed keys while another client keeps creating matching ones, the typed count above 10
// keys (and not at 10), read-only sends nothing, one audit entry per reset and the same one
// the CLI writes, metadata never offered, keys with odd bytes previewed escaped and reset
// exactly, Cancel mid-way and a server lost mid-way reporting the confirmed count, and NOPERM
// explained.
#include "admin/audit.h"
#include "redis/connection.h"
#include "base/keytext.h"
#include "limiters/limiter.h"
#include "limiters/limiterscript.h"
#include "admin/policy.h"
#include "redisclient.h"
#include "refusal.h"
#include "resetdialog.h"
#include "resetpreviewmodel.h"
#include "redis/sandboxserver.h"
#include "testsupport.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QCheckBox>
#include <QLabel>
#include <QLineEdit>
#include <QPalette>
#include <QPushButton>
#include <QSignalSpy>
#include <QStyle>
#include <QTest>
#include <QTimer>

#include <set>

using namespace ratescope;
using namespace ratescope::ui;

namespace {

constexpr int kWaitMs = 60000;
const QByteArray kNs = "ratescope:";
constexpr qint64 kLimit = 100;
constexpr qint64 kWindowUs = 366LL * 86400 * 1000000; // nothing refills while the test looks

using Stage = ResetDialog::Stage;

// Sliding-log limiters under a policy, each used i % 5 + 1 times, at an explicit now.
void makeLimiters(Connection &c, const QByteArray &prefix, int n, int first = 0)
{
    Policy p;
    p.name = QString::fromUtf8(prefix).remove(QLatin1Char(':'));
    p.match = prefix + "*";
    p.spec = {Algorithm::SlidingLog, kLimit, kWindowUs, 1};
    PolicyStore store(c, QString::fromUtf8(kNs));
    if (!store.get(p.name))
        store.set(p, 0, QStringLiteral("test"));
    const LimiterScript &script = LimiterScript::forAlgorithm(Algorithm::SlidingLog);
    script.load(c);
    const qint64 nowUs = 1767225600000000; // 2026-01-01
    std::vector<Command> batch;
    for (int i = first; i < first + n; ++i) {
        const QByteArray key = prefix + "c" + QByteArray::number(i);
        for (int u = 0; u < i % 5 + 1; ++u)
            batch.push_back(script.command(key, Limiter::arguments(key, p.spec, nowUs + u, false), false));
    }
    for (const Reply &r : c.pipeline(batch))
        QVERIFY2(!r.isError(), qPrintable(r.text()));
}

// Limiters to reset, each the hash of a Ratescope GCRA limiter (a pattern holds back the
// keys that are no limiter: heldBackNonLimiters tests that).
void setKeys(Connection &c, const QByteArrayList &keys)
{
    std::vector<Command> batch;
    for (const QByteArray &k : keys)
        batch.push_back({"HSET", k, "tat", "1", "f", "0"});
    for (size_t i = 0; i < batch.size(); i += 5000) {
        const std::vector<Command> part(batch.begin() + qsizetype(i), batch.begin() + qsizetype(std::min(batch.size(), i + 5000)));
        for (const Reply &r : c.pipeline(part))
            QVERIFY(!r.isError());
    }
}

std::set<QByteArray> allKeys(Connection &c, const QByteArray &pattern = "*")
{
    std::set<QByteArray> keys;
    QByteArray cursor = "0";
    int rounds = 0;
    do {
        const Reply page = c.command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
        cursor = page[0].bytes();
        for (const Reply &k : page[1].elements())
            keys.insert(k.bytes());
    } while (cursor != "0" && ++rounds < 100000);
    return keys;
}

// Every key with its DUMP: "nothing changed" means this is equal.
QByteArray snapshot(Connection &c)
{
    QByteArray all;
    for (const QByteArray &k : allKeys(c)) {
        const Reply d = c.command({"DUMP", k});
        all += k + '\0' + (d.isNil() ? QByteArray("nil") : d.bytes()) + '\n';
    }
    return all;
}

qint64 commandCalls(Connection &c, const QByteArray &command)
{
    const QByteArray info = c.command({"INFO", "commandstats"}).bytes();
    const QByteArray tag = "cmdstat_" + command + ":calls=";
    const qsizetype at = info.indexOf(tag);
    if (at < 0)
        return 0;
    const qsizetype from = at + tag.size();
    return info.mid(from, info.indexOf(',', from) - from).toLongLong();
}

qint64 auditLength(Connection &c)
{
    return c.command({"XLEN", kNs + "audit"}).toInteger();
}

AuditEntry newestAudit(Connection &c)
{
    const auto entries = AuditLog(c, QString::fromUtf8(kNs)).list(1);
    return entries.empty() ? AuditEntry{} : entries.front();
}

QPushButton *button(ResetDialog &d, const char *name)
{
    return d.findChild<QPushButton *>(QString::fromLatin1(name));
}

QLineEdit *confirmField(ResetDialog &d)
{
    return d.findChild<QLineEdit *>(QStringLiteral("confirmCount"));
}

QString labelText(ResetDialog &d, const char *name)
{
    const QLabel *l = d.findChild<QLabel *>(QString::fromLatin1(name));
    return l && l->isVisible() ? l->text() : QString();
}

bool waitStage(ResetDialog &d, Stage stage)
{
    QElapsedTimer t;
    t.start();
    while (d.stage() != stage && t.elapsed() < kWaitMs)
        QTest::qWait(5);
    return d.stage() == stage;
}

bool waitDetails(ResetDialog &d, qsizetype rows)
{
    QElapsedTimer t;
    t.start();
    while (d.previewModel()->detailedRows() < rows && t.elapsed() < kWaitMs)
        QTest::qWait(5);
    return d.previewModel()->detailedRows() >= rows;
}

void shoot(QWidget &w, const QString &name)
{
    const QString dir = qEnvironmentVariable("RATESCOPE_SHOTS");
    if (dir.isEmpty())
        return;
    QCoreApplication::processEvents();
    w.grab().save(dir + QLatin1Char('/') + name);
}

QPalette darkPalette()
{
    QPalette p;
    p.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
    p.setColor(QPalette::WindowText, QColor(0xe6, 0xe6, 0xe6));
    p.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
    p.setColor(QPalette::AlternateBase, QColor(0x27, 0x27, 0x27));
    p.setColor(QPalette::Text, QColor(0xe6, 0xe6, 0xe6));
    p.setColor(QPalette::Button, QColor(0x3a, 0x3a, 0x3a));
    p.setColor(QPalette::ButtonText, QColor(0xe6, 0xe6, 0xe6));
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x65, 0xca));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::PlaceholderText, QColor(0x9a, 0x9a, 0x9a));
    p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x80, 0x80, 0x80));
    p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(0x80, 0x80, 0x80));
    p.setColor(QPalette::Disabled, QPalette::Text, QColor(0x80, 0x80, 0x80));
    return p;
}

} // namespace

class TestResetDialog : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void patternResetDeletesExactlyThePreviewWhileKeysKeepComing();
    void typedCountAboveTenNotAtTen();
    void readOnlySendsNothing();
    void oneAuditEntrySameAsCli();
    void reasonTypedIsAuditedAndRequiredWhereSaid();
    void metadataNeverOffered();
    void oddKeysPreviewedEscapedAndResetExactly();
    void cancelMidWayReportsConfirmedCount();
    void nopermExplained();
    void lostConnectionReportsConfirmedCount();
    void heldBackNonLimiters();
    void previewInNaturalOrder();

private:
    std::unique_ptr<RedisClient> client(const QString &user = {}, const QString &password = {});

    SandboxServer m_server{[] {
        SandboxServer::Config c;
        c.configLines = {QStringLiteral("user support on >supportpw ~* &* -@all +@read +@connection +evalsha_ro +eval_ro")};
        return c;
    }()};
    std::unique_ptr<Connection> m_conn;
};

void TestResetDialog::initTestCase()
{
    m_server.start();
    m_conn = std::make_unique<Connection>(m_server.options());
}

void TestResetDialog::init()
{
    m_conn->command({"FLUSHALL"});
}

std::unique_ptr<RedisClient> TestResetDialog::client(const QString &user, const QString &password)
{
    ConnectionOptions o = m_server.options();
    o.user = user;
    o.password = password;
    auto c = std::make_unique<RedisClient>(o);
    c->open();
    return c;
}

void TestResetDialog::patternResetDeletesExactlyThePreviewWhileKeysKeepComing()
{
    makeLimiters(*m_conn, "api:trial:", 37);
    makeLimiters(*m_conn, "api:paid:", 20);
    const std::set<QByteArray> before = allKeys(*m_conn, "api:trial:*");
    QCOMPARE(before.size(), size_t(37));

    // Another client keeps creating matching keys through the preview and the reset.
    Connection other(m_server.options());
    std::set<QByteArray> late;
    QTimer writer;
    writer.setInterval(1);
    connect(&writer, &QTimer::timeout, &writer, [&] {
        if (late.size() >= 3000)
            return writer.stop(); // bounded
        const QByteArray k = "api:trial:late" + QByteArray::number(qulonglong(late.size()));
        other.command({"SET", k, "1"});
        late.insert(k);
    });
    writer.start();

    auto c = client();
    const qint64 audits = auditLength(*m_conn);
    ResetDialog dialog(c.get(), kNs, {{}, "api:trial:*"});
    QAbstractItemModelTester tester(dialog.previewModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy finished(&dialog, &ResetDialog::finished);
    dialog.open();
    QVERIFY(waitStage(dialog, Stage::Preview));
    const QList<QByteArray> previewed = dialog.previewedKeys();
    const std::set<QByteArray> previewedSet(previewed.begin(), previewed.end());
    for (const QByteArray &k : before)
        QVERIFY2(previewedSet.count(k), k.constData()); // SCAN returns every key there all along
    for (const QByteArray &k : previewed)
        QVERIFY(k.startsWith("api:trial:"));
    const qint64 n = previewed.size();
    QCOMPARE(dialog.heading(), QStringLiteral("Reset %1 keys").arg(n));
    QVERIFY(waitDetails(dialog, std::min<qint64>(n, ResetDialog::kDetailedRows)));

    // More matching keys arrive after the snapshot, before Reset is pressed.
    const size_t lateAtPreview = late.size();
    for (int i = 0; i < 10000 && late.size() < lateAtPreview + 20 && writer.isActive(); ++i)
        QTest::qWait(1);
    QVERIFY(late.size() >= lateAtPreview + 20);
    QVERIFY(!button(dialog, "resetButton")->isEnabled()); // more than 10: the count must be typed
    QTest::keyClicks(confirmField(dialog), QString::number(n));
    QVERIFY(button(dialog, "resetButton")->isEnabled());
    QTest::mouseClick(button(dialog, "resetButton"), Qt::LeftButton);
    QVERIFY(waitStage(dialog, Stage::Done));
    writer.stop();

    QCOMPARE(dialog.result().deleted, n);
    QCOMPARE(dialog.result().processed, n);
    QVERIFY(!dialog.result().cancelled);
    QCOMPARE(dialog.heading(), QStringLiteral("Deleted %1 of %1 keys").arg(n));
    QCOMPARE(finished.size(), 1);
    QCOMPARE(finished.front().front().toLongLong(), n);

    // Exactly the previewed keys are gone: every other key, made before or since, is there.
    std::set<QByteArray> expected = before;
    expected.insert(late.begin(), late.end());
    for (const QByteArray &k : previewed)
        expected.erase(k);
    QCOMPARE(allKeys(*m_conn, "api:trial:*"), expected);
    QCOMPARE(allKeys(*m_conn, "api:paid:*").size(), size_t(20));
    QVERIFY(late.size() > 0);

    // Two audit entries: the intent, then the outcome with the count.
    QCOMPARE(auditLength(*m_conn), audits + 2);
    const AuditEntry e = newestAudit(*m_conn);
    QCOMPARE(e.action, QStringLiteral("reset"));
    QCOMPARE(e.target, QStringLiteral("match:api:trial:*"));
    QCOMPARE(e.count, n);
    QCOMPARE(QJsonDocument::fromJson(e.before.toUtf8()).object().value(QStringLiteral("count")).toInteger(), n);
    QCOMPARE(QJsonDocument::fromJson(e.after.toUtf8()).object().value(QStringLiteral("deleted")).toInteger(), n);
}

void TestResetDialog::typedCountAboveTenNotAtTen()
{
    makeLimiters(*m_conn, "api:trial:", 37);
    makeLimiters(*m_conn, "api:ten:", 10);
    makeLimiters(*m_conn, "api:eleven:", 11);
    auto c = client();

    {
        // 37 keys: the screen an operator sees, in both palettes.
        ResetDialog dialog(c.get(), kNs, {{}, "api:trial:*"});
        QAbstractItemModelTester tester(dialog.previewModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        dialog.open();
        QVERIFY(waitStage(dialog, Stage::Preview));
        QCOMPARE(dialog.previewedKeys().size(), 37);
        QCOMPARE(dialog.heading(), QStringLiteral("Reset 37 keys"));
        QVERIFY(waitDetails(dialog, 37));
        const QModelIndex usage = dialog.previewModel()->index(0, ResetPreviewModel::UsageColumn);
        QCOMPARE(usage.data().toString(), QStringLiteral("1 / 100")); // api:trial:c0, used once
        QCOMPARE(dialog.previewModel()->index(0, ResetPreviewModel::AlgorithmColumn).data().toString(), QStringLiteral("sliding-log"));
        QVERIFY(confirmField(dialog)->isVisible());
        QTest::keyClicks(confirmField(dialog), QStringLiteral("3"));
        shoot(dialog, QStringLiteral("reset-preview-37.png"));
        QApplication::setPalette(darkPalette());
        shoot(dialog, QStringLiteral("reset-preview-37-dark.png"));
        QApplication::setPalette(QApplication::style()->standardPalette());
    }

    {
        ResetDialog dialog(c.get(), kNs, {{}, "api:eleven:*"});
        QAbstractItemModelTester tester(dialog.previewModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        dialog.open();
        QVERIFY(waitStage(dialog, Stage::Preview));
        QCOMPARE(dialog.previewedKeys().size(), 11);
        QPushButton *reset = button(dialog, "resetButton");
        QVERIFY(confirmField(dialog)->isVisible());
        QVERIFY(!reset->isEnabled());
        QTest::mouseClick(reset, Qt::LeftButton); // disabled: nothing happens
        QCOMPARE(dialog.stage(), Stage::Preview);
        QTest::keyClicks(confirmField(dialog), QStringLiteral("12"));
        QVERIFY(!reset->isEnabled());
        QVERIFY(reset->toolTip().contains(QStringLiteral("Type 11")));
        confirmField(dialog)->clear();
        QTest::keyClicks(confirmField(dialog), QStringLiteral("11"));
        QVERIFY(reset->isEnabled());
        QTest::keyClick(confirmField(dialog), Qt::Key_Return); // Enter alone never resets
        QCOMPARE(dialog.stage(), Stage::Preview);
        QCOMPARE(allKeys(*m_conn, "api:eleven:*").size(), size_t(11));
    }

    {
        ResetDialog dialog(c.get(), kNs, {{}, "api:ten:*"});
        QAbstractItemModelTester tester(dialog.previewModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        dialog.open();
        QVERIFY(waitStage(dialog, Stage::Preview));
        QCOMPARE(dialog.previewedKeys().size(), 10);
        QVERIFY(!confirmField(dialog)->isVisible()); // 10: a plain confirmation
        QVERIFY(button(dialog, "resetButton")->isEnabled());
        QCOMPARE(button(dialog, "resetButton")->text(), QStringLiteral("Reset 10 keys"));
        QTest::mouseClick(button(dialog, "resetButton"), Qt::LeftButton);
        QVERIFY(waitStage(dialog, Stage::Done));
        QCOMPARE(dialog.heading(), QStringLiteral("Deleted 10 of 10 keys"));
        QVERIFY(labelText(dialog, "summary").contains(QStringLiteral("Recorded in the audit log.")));
        shoot(dialog, QStringLiteral("reset-result.png"));
        QApplication::setPalette(darkPalette());
        shoot(dialog, QStringLiteral("reset-result-dark.png"));
        QApplication::setPalette(QApplication::style()->standardPalette());
        QCOMPARE(allKeys(*m_conn, "api:ten:*").size(), size_t(0));
        QCOMPARE(allKeys(*m_conn, "api:eleven:*").size(), size_t(11));
    }
}

void TestResetDialog::readOnlySendsNothing()
{
    makeLimiters(*m_conn, "api:trial:", 37);
    setKeys(*m_conn, {"plain:a", "plain:b"});
    auto c = client();
    c->setReadOnly(true);
    const QByteArray before = snapshot(*m_conn);
    const qint64 unlinks = commandCalls(*m_conn, "unlink");
    const qint64 xadds = commandCalls(*m_conn, "xadd");

    ResetDialog dialog(c.get(), kNs, {{}, "*"});
    QAbstractItemModelTester tester(dialog.previewModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy finished(&dialog, &ResetDialog::finished);
    dialog.open();
    QVERIFY(waitStage(dialog, Stage::Preview));
    QCOMPARE(dialog.previewedKeys().size(), 39); // the limiters and plain keys; not the policy
    QVERIFY(waitDetails(dialog, 39));
    QPushButton *reset = button(dialog, "resetButton");
    QTest::keyClicks(confirmField(dialog), QStringLiteral("39"));
    QVERIFY(!reset->isEnabled());
    QVERIFY(reset->toolTip().contains(QStringLiteral("read-only")));
    QVERIFY(labelText(dialog, "readOnlyNote").contains(QStringLiteral("read-only")));
    QTest::mouseClick(reset, Qt::LeftButton);
    QTest::keyClick(confirmField(dialog), Qt::Key_Return);
    QCOMPARE(dialog.stage(), Stage::Preview);
    shoot(dialog, QStringLiteral("reset-readonly.png"));

    // Lifting the lock enables Reset; setting it again disables it at once.
    c->setReadOnly(false);
    QVERIFY(reset->isEnabled());
    c->setReadOnly(true);
    QVERIFY(!reset->isEnabled());
    QTest::mouseClick(reset, Qt::LeftButton);

    dialog.reject();
    QCOMPARE(finished.size(), 0);
    QCOMPARE(snapshot(*m_conn), before);
    QCOMPARE(commandCalls(*m_conn, "unlink"), unlinks);
    QCOMPARE(commandCalls(*m_conn, "xadd"), xadds);
}

void TestResetDialog::oneAuditEntrySameAsCli()
{
    setKeys(*m_conn, {"acme:minute", "acme:hour", "beta:minute", "beta:hour"});
    auto c = client();
    const qint64 audits = auditLength(*m_conn);
    ResetDialog dialog(c.get(), kNs, {{"acme:minute", "acme:hour", "acme:gone"}, {}});
    QAbstractItemModelTester tester(dialog.previewModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    dialog.setOperatorName(QStringLiteral("Dana (support)"));
    dialog.open();
    QVERIFY(waitStage(dialog, Stage::Preview));
    QCOMPARE(dialog.previewedKeys(), (QList<QByteArray>{"acme:hour", "acme:minute"}));
    QTest::mouseClick(button(dialog, "resetButton"), Qt::LeftButton);
    QVERIFY(waitStage(dialog, Stage::Done));
    QCOMPARE(dialog.result().deleted, 2);
    QCOMPARE(auditLength(*m_conn), audits + 2);
    const AuditEntry fromDialog = newestAudit(*m_conn);

    const test::CliResult r = test::runCli({QStringLiteral("--url"), m_server.url(), QStringLiteral("--operator"),
                                            QStringLiteral("Dana (support)"), QStringLiteral("reset"), QStringLiteral("beta:minute"),
                                            QStringLiteral("beta:hour"), QStringLiteral("beta:gone"), QStringLiteral("--yes")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QCOMPARE(auditLength(*m_conn), audits + 4);
    const AuditEntry fromCli = newestAudit(*m_conn);

    // The same entry, but for the names.
    QCOMPARE(fromDialog.action, fromCli.action);
    QCOMPARE(fromDialog.actor, QStringLiteral("Dana (support)"));
    QCOMPARE(fromDialog.actor, fromCli.actor);
    QCOMPARE(fromDialog.osUser, fromCli.osUser);
    QCOMPARE(fromDialog.host, fromCli.host);
    QCOMPARE(fromDialog.count, fromCli.count);
    QCOMPARE(fromDialog.target, QStringLiteral("acme:minute acme:hour acme:gone"));
    QCOMPARE(QString(fromDialog.target).replace(QStringLiteral("acme"), QStringLiteral("beta")), fromCli.target);
    QCOMPARE(QString(fromDialog.before).replace(QStringLiteral("acme"), QStringLiteral("beta")), fromCli.before);
    QCOMPARE(fromDialog.after, fromCli.after);
    QCOMPARE(fromDialog.after, QStringLiteral("{\"deleted\":2}"));
}

void TestResetDialog::reasonTypedIsAuditedAndRequiredWhereSaid()
{
    setKeys(*m_conn, {"acme:minute", "beta:minute"});
    auto c = client();
    // The namespace requires a reason: without one the reset is refused, nothing deleted.
    m_conn->command({"HSET", kNs + "settings", "require-reason", "1"});
    const qint64 audits = auditLength(*m_conn);
    {
        ResetDialog dialog(c.get(), kNs, {{"acme:minute"}, {}});
        dialog.open();
        QVERIFY(waitStage(dialog, Stage::Preview));
        QTest::mouseClick(button(dialog, "resetButton"), Qt::LeftButton);
        QVERIFY(waitStage(dialog, Stage::Done));
        QCOMPARE(dialog.result().deleted, 0);
        QVERIFY2(dialog.result().problem.contains(QStringLiteral("requires a reason")), qPrintable(dialog.result().problem));
        QCOMPARE(m_conn->command({"EXISTS", "acme:minute"}).toInteger(), 1);
        QCOMPARE(auditLength(*m_conn), audits);
    }
    // Typed in the dialog, it goes with both entries.
    ResetDialog dialog(c.get(), kNs, {{"acme:minute"}, {}});
    dialog.open();
    QVERIFY(waitStage(dialog, Stage::Preview));
    auto *reason = dialog.findChild<QLineEdit *>(QStringLiteral("reason"));
    QVERIFY(reason);
    reason->setText(QStringLiteral("TICKET-7 acme gets 429s"));
    QTest::mouseClick(button(dialog, "resetButton"), Qt::LeftButton);
    QVERIFY(waitStage(dialog, Stage::Done));
    QCOMPARE(dialog.result().deleted, 1);
    QCOMPARE(auditLength(*m_conn), audits + 2);
    QCOMPARE(newestAudit(*m_conn).reason, QStringLiteral("TICKET-7 acme gets 429s"));
    m_conn->command({"DEL", kNs + "settings"});
}

void TestResetDialog::metadataNeverOffered()
{
    makeLimiters(*m_conn, "api:trial:", 5); // a policy: ratescope:policies
    Connection &c0 = *m_conn;
    Override o;
    o.key = "api:trial:c1";
    o.limit = 200;
    OverrideStore(c0, QString::fromUtf8(kNs)).set(o, 3600LL * 1000000, QStringLiteral("test")); // ratescope:override:api:trial:c1
    AuditLog(c0, QString::fromUtf8(kNs)).append(AuditEntry{});                                  // ratescope:audit
    const std::set<QByteArray> metadata = allKeys(c0, kNs + "*");
    QCOMPARE(metadata.size(), size_t(3));
    auto c = client();

    {
        ResetDialog dialog(c.get(), kNs, {{}, "*"});
        QAbstractItemModelTester tester(dialog.previewModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        dialog.open();
        QVERIFY(waitStage(dialog, Stage::Preview));
        QCOMPARE(dialog.previewedKeys().size(), 5);
        for (const QByteArray &k : dialog.previewedKeys())
            QVERIFY(!k.startsWith(kNs));
        QCOMPARE(dialog.metadataLeftOut(), 3);
        QVERIFY2(labelText(dialog, "notes").contains(QStringLiteral("Left out: 3 keys of Ratescope's own under ratescope: (policies")),
                 qPrintable(labelText(dialog, "notes")));
        shoot(dialog, QStringLiteral("reset-metadata.png"));
        QTest::mouseClick(button(dialog, "resetButton"), Qt::LeftButton);
        QVERIFY(waitStage(dialog, Stage::Done));
        QCOMPARE(dialog.result().deleted, 5);
    }
    QCOMPARE(allKeys(c0, "api:*").size(), size_t(0));
    QVERIFY(allKeys(c0, kNs + "*") == metadata);

    {
        // Even a pattern naming the namespace offers nothing.
        ResetDialog dialog(c.get(), kNs, {{}, kNs + "*"});
        QAbstractItemModelTester tester(dialog.previewModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        dialog.open();
        QVERIFY(waitStage(dialog, Stage::Preview));
        QVERIFY(dialog.previewedKeys().isEmpty());
        QCOMPARE(dialog.heading(), QStringLiteral("Nothing to reset"));
        QCOMPARE(
            labelText(dialog, "subheading"),
            QStringLiteral("Only Ratescope's own keys were found for keys matching ratescope:*, and those are never reset from here."));
        QVERIFY(!button(dialog, "resetButton")->isEnabled());
    }
    {
        // And so does a selection holding metadata.
        setKeys(c0, {"api:x"});
        ResetDialog dialog(c.get(), kNs, {{kNs + "policies", "api:x"}, {}});
        QAbstractItemModelTester tester(dialog.previewModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        dialog.open();
        QVERIFY(waitStage(dialog, Stage::Preview));
        QCOMPARE(dialog.previewedKeys(), QList<QByteArray>{"api:x"});
        QCOMPARE(dialog.metadataLeftOut(), 1);
    }
    QVERIFY(allKeys(c0, kNs + "*") == metadata);
}

void TestResetDialog::oddKeysPreviewedEscapedAndResetExactly()
{
    const QByteArrayList odd = {QByteArray("odd:nul\0byte", 12),
                                "odd:\xff\xfe",
                                "odd:line\nbreak",
                                "odd:with space",
                                "odd:клиент",
                                "odd:顧客",
                                "odd:*literal?",
                                "odd:\"quoted\""};
    // Neighbours that differ only where the odd bytes are: they must stay.
    const QByteArrayList neighbours = {"odd:nulbyte", "odd:",          "odd:line",  "odd:linebreak",
                                       "odd:with",    "odd:withspace", "odd:клиен", "odd:literal"};
    setKeys(*m_conn, odd + neighbours);
    auto c = client();

    // The pattern's preview shows every name escaped, one line each.
    {
        ResetDialog dialog(c.get(), kNs, {{}, "odd:*"});
        QAbstractItemModelTester tester(dialog.previewModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        dialog.open();
        QVERIFY(waitStage(dialog, Stage::Preview));
        QCOMPARE(dialog.previewedKeys().size(), odd.size() + neighbours.size());
        const ResetPreviewModel *m = dialog.previewModel();
        QStringList shown;
        for (int r = 0; r < m->rowCount(); ++r) {
            const QModelIndex i = m->index(r, ResetPreviewModel::KeyColumn);
            const QByteArray raw = i.data(ResetPreviewModel::KeyBytesRole).toByteArray();
            QCOMPARE(i.data().toString(), displayKey(raw));
            QVERIFY(!i.data().toString().contains(QLatin1Char('\n')));
            shown << i.data().toString();
        }
        QVERIFY(shown.contains(QStringLiteral("\"odd:nul\\x00byte\"")));
        QVERIFY(shown.contains(QStringLiteral("\"odd:\\xff\\xfe\"")));
        QVERIFY(shown.contains(QStringLiteral("\"odd:line\\nbreak\"")));
        QVERIFY(shown.contains(QStringLiteral("odd:клиент")));
        QVERIFY(waitDetails(dialog, m->rowCount()));
        shoot(dialog, QStringLiteral("reset-oddkeys.png"));
    }

    // The exact names, reset exactly: glob characters literal, bytes as they are.
    ResetDialog dialog(c.get(), kNs, {odd, {}});
    QAbstractItemModelTester tester(dialog.previewModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    dialog.open();
    QVERIFY(waitStage(dialog, Stage::Preview));
    QByteArrayList sorted = odd;
    std::sort(sorted.begin(), sorted.end());
    QCOMPARE(dialog.previewedKeys(), sorted);
    QTest::mouseClick(button(dialog, "resetButton"), Qt::LeftButton);
    QVERIFY(waitStage(dialog, Stage::Done));
    QCOMPARE(dialog.result().deleted, odd.size());
    for (const QByteArray &k : odd)
        QCOMPARE(m_conn->command({"EXISTS", k}).toInteger(), 0);
    for (const QByteArray &k : neighbours)
        QCOMPARE(m_conn->command({"EXISTS", k}).toInteger(), 1);
    const AuditEntry e = newestAudit(*m_conn);
    QVERIFY2(e.target.contains(QStringLiteral("\"odd:nul\\x00byte\"")), qPrintable(e.target));

    // The CLI's preview escapes names the same way: a key cannot forge a line of it.
    setKeys(*m_conn, {"odd:line\nbreak"});
    const test::CliResult r = test::runCli({QStringLiteral("--url"), m_server.url(), QStringLiteral("reset"), QStringLiteral("--match"),
                                            QStringLiteral("odd:line?break"), QStringLiteral("--dry-run")});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("  \"odd:line\\nbreak\"\n1 key would be deleted"), r.out.constData());
}

void TestResetDialog::cancelMidWayReportsConfirmedCount()
{
    constexpr int kKeys = 40000;
    QByteArrayList keys;
    for (int i = 0; i < kKeys; ++i)
        keys << "big:" + QByteArray::number(i);
    setKeys(*m_conn, keys);
    setKeys(*m_conn, {"small:1"});
    auto c = client();
    const qint64 audits = auditLength(*m_conn);

    ResetDialog dialog(c.get(), kNs, {{}, "big:*"});
    QAbstractItemModelTester tester(dialog.previewModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy finished(&dialog, &ResetDialog::finished);
    dialog.open();
    QCOMPARE(dialog.stage(), Stage::Planning);
    shoot(dialog, QStringLiteral("reset-planning.png"));
    QVERIFY(waitStage(dialog, Stage::Preview));
    QCOMPARE(dialog.previewedKeys().size(), kKeys);
    QCOMPARE(dialog.heading(), QStringLiteral("Reset 40,000 keys"));
    QVERIFY(labelText(dialog, "notes").contains(QStringLiteral("first 2,000 keys")));
    QTest::keyClicks(confirmField(dialog), QStringLiteral("40,000"));
    QVERIFY(button(dialog, "resetButton")->isEnabled());

    // Cancel is pressed (on the GUI thread) once 12,000 deletions are confirmed; the worker
    // waits for the click, so the stop lands exactly between two batches.
    std::atomic<bool> pressed{false};
    dialog.setAfterBatchHook([&](qint64 processed) {
        if (processed == 12000) {
            QMetaObject::invokeMethod(
                &dialog,
                [&] {
                    shoot(dialog, QStringLiteral("reset-running.png"));
                    QTest::mouseClick(button(dialog, "cancelButton"), Qt::LeftButton);
                },
                Qt::BlockingQueuedConnection);
            pressed = true;
        }
    });
    QTest::mouseClick(button(dialog, "resetButton"), Qt::LeftButton);
    QVERIFY(waitStage(dialog, Stage::Done));
    QVERIFY(pressed.load());
    QVERIFY(dialog.result().cancelled);
    QCOMPARE(dialog.result().processed, 12000);
    QCOMPARE(dialog.result().deleted, 12000);
    QCOMPARE(dialog.heading(), QStringLiteral("Cancelled after 12,000 of 40,000: 12,000 deleted"));
    QVERIFY(dialog.isVisible()); // Cancel while deleting stops the reset; the summary stays
    const ResetPreviewModel *m = dialog.previewModel();
    QCOMPARE(m->index(11999, ResetPreviewModel::OutcomeColumn).data().toString(), QStringLiteral("reset"));
    QCOMPARE(m->index(12000, ResetPreviewModel::OutcomeColumn).data().toString(), QStringLiteral("left as it is"));
    shoot(dialog, QStringLiteral("reset-cancelled.png"));
    QCOMPARE(finished.size(), 1);
    QCOMPARE(finished.front().front().toLongLong(), 12000);

    // The first 12,000 previewed keys are gone, the rest and everything else stay.
    const QList<QByteArray> previewed = dialog.previewedKeys();
    std::set<QByteArray> expected(previewed.begin() + 12000, previewed.end());
    QCOMPARE(allKeys(*m_conn, "big:*"), expected);
    QCOMPARE(m_conn->command({"EXISTS", "small:1"}).toInteger(), 1);

    QCOMPARE(auditLength(*m_conn), audits + 2);
    const AuditEntry e = newestAudit(*m_conn);
    QCOMPARE(e.count, 12000);
    const QJsonObject after = QJsonDocument::fromJson(e.after.toUtf8()).object();
    QCOMPARE(after.value(QStringLiteral("processed")).toInteger(), 12000);
    QVERIFY(after.value(QStringLiteral("cancelled")).toBool());
}

void TestResetDialog::nopermExplained()
{
    setKeys(*m_conn, {"cust:1", "cust:2"});
    const qint64 audits = auditLength(*m_conn);
    auto c = client(QStringLiteral("support"), QStringLiteral("supportpw"));
    ResetDialog dialog(c.get(), kNs, {{}, "cust:*"});
    QAbstractItemModelTester tester(dialog.previewModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy finished(&dialog, &ResetDialog::finished);
    dialog.open();
    QVERIFY(waitStage(dialog, Stage::Preview)); // reading is allowed
    QCOMPARE(dialog.previewedKeys().size(), 2);
    QTest::mouseClick(button(dialog, "resetButton"), Qt::LeftButton);
    QVERIFY(waitStage(dialog, Stage::Done));
    QCOMPARE(dialog.heading(), QStringLiteral("Reset refused: nothing deleted"));
    QVERIFY2(labelText(dialog, "summary")
                 .contains(QStringLiteral("user 'support' may not run XADD; ask for +xadd or use a profile with write access")),
             qPrintable(labelText(dialog, "summary")));
    shoot(dialog, QStringLiteral("reset-noperm.png"));
    QCOMPARE(dialog.result().deleted, 0);
    QCOMPARE(finished.size(), 0);
    QCOMPARE(m_conn->command({"EXISTS", "cust:1", "cust:2"}).toInteger(), 2);
    QCOMPARE(auditLength(*m_conn), audits);

    QCOMPARE(
        explainRefusal(QStringLiteral("NOPERM this user has no permissions to access one of the keys used as arguments"), {}),
        QStringLiteral("user 'default' may not write these keys (its ACL key patterns leave them out); ask for access to them or use a "
                       "profile with write access"));
    QCOMPARE(explainRefusal(QStringLiteral("WRONGTYPE x"), QStringLiteral("a")), QStringLiteral("WRONGTYPE x"));
}

void TestResetDialog::heldBackNonLimiters()
{
    // A group reset over a service's prefix: its limiters, and its application data beside them.
    makeLimiters(*m_conn, "demo:api:", 3);
    m_conn->command({"SET", "demo:feature-flags", "{\"beta\":true}"});
    m_conn->command({"HSET", "demo:session:7f3a", "user", "alice", "cart", "3"});
    m_conn->command({"SADD", "demo:admins", "alice"});
    const QList<QByteArray> others = {"demo:admins", "demo:feature-flags", "demo:session:7f3a"};
    auto c = client();
    {
        ResetDialog dialog(c.get(), kNs, {{}, "demo:*"});
        QAbstractItemModelTester tester(dialog.previewModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        dialog.open();
        QVERIFY(waitStage(dialog, Stage::Preview));
        QCOMPARE(dialog.previewedKeys().size(), 3);
        for (const QByteArray &k : dialog.previewedKeys())
            QVERIFY2(k.startsWith("demo:api:"), k.constData());
        QCOMPARE(dialog.heldBackKeys(), others);
        QCheckBox *box = dialog.includeNonLimitersBox();
        QVERIFY(box->isVisible() && !box->isChecked());
        QCOMPARE(box->text(), QStringLiteral("Also delete the 3 matching keys that are no limiter"));
        QVERIFY2(labelText(dialog, "notes").contains(QStringLiteral("Held back: 3 keys that are no limiter: demo:admins (set)")),
                 qPrintable(labelText(dialog, "notes")));
        QCOMPARE(button(dialog, "resetButton")->text(), QStringLiteral("Reset 3 keys"));
        shoot(dialog, QStringLiteral("reset-heldback.png"));
        // Ticked, they join the preview; unticked again, they leave it.
        box->setChecked(true);
        QCOMPARE(dialog.previewedKeys().size(), 6);
        box->setChecked(false);
        QCOMPARE(dialog.previewedKeys().size(), 3);
        QTest::mouseClick(button(dialog, "resetButton"), Qt::LeftButton);
        QVERIFY(waitStage(dialog, Stage::Done));
        QCOMPARE(dialog.result().deleted, 3);
    }
    for (const QByteArray &k : others)
        QCOMPARE(m_conn->command({"EXISTS", k}).toInteger(), 1);
    {
        // Asked for explicitly, they go.
        ResetDialog dialog(c.get(), kNs, {{}, "demo:*"});
        dialog.open();
        QVERIFY(waitStage(dialog, Stage::Preview));
        QVERIFY(dialog.previewedKeys().isEmpty());
        QCOMPARE(labelText(dialog, "subheading"), QStringLiteral("No limiter matches demo:*; what it matches is held back below."));
        dialog.includeNonLimitersBox()->setChecked(true);
        QCOMPARE(dialog.previewedKeys(), others);
        QTest::mouseClick(button(dialog, "resetButton"), Qt::LeftButton);
        QVERIFY(waitStage(dialog, Stage::Done));
        QCOMPARE(dialog.result().deleted, 3);
    }
    QCOMPARE(allKeys(*m_conn, "demo:*").size(), size_t(0));
}

void TestResetDialog::previewInNaturalOrder()
{
    // c0 .. c11 and two keys that are no limiter: listed as the keys panel lists them (c2 before
    // c10), not in byte order (c1, c10, c11, c2).
    makeLimiters(*m_conn, "api:trial:", 12);
    m_conn->command({"SET", "api:trial:note10", "x"});
    m_conn->command({"SET", "api:trial:note9", "x"});
    QList<QByteArray> limiters;
    for (int i = 0; i < 12; ++i)
        limiters << "api:trial:c" + QByteArray::number(i);
    auto rows = [](ResetDialog &d) {
        QList<QByteArray> shown;
        for (int r = 0; r < d.previewModel()->rowCount(); ++r)
            shown << d.previewModel()->index(r, ResetPreviewModel::KeyColumn).data(ResetPreviewModel::KeyBytesRole).toByteArray();
        return shown;
    };
    auto c = client();
    {
        ResetDialog dialog(c.get(), kNs, {{}, "api:trial:*"});
        QAbstractItemModelTester tester(dialog.previewModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        dialog.open();
        QVERIFY(waitStage(dialog, Stage::Preview));
        QCOMPARE(dialog.previewedKeys(), limiters);
        QCOMPARE(rows(dialog), limiters);
        QCOMPARE(dialog.heldBackKeys(), (QList<QByteArray>{"api:trial:note9", "api:trial:note10"}));
        // Ticked, the keys held back join the list in its order.
        dialog.includeNonLimitersBox()->setChecked(true);
        QList<QByteArray> all = limiters;
        all.insert(12, "api:trial:note9");
        all.insert(13, "api:trial:note10");
        QCOMPARE(dialog.previewedKeys(), all);
        QCOMPARE(rows(dialog), all);
    }
    {
        // Exact keys (a selection in the keys panel) too; the reset deletes them, row by row.
        ResetDialog dialog(c.get(), kNs, {{"api:trial:c10", "api:trial:c2", "api:trial:c1"}, {}});
        QAbstractItemModelTester tester(dialog.previewModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        dialog.open();
        QVERIFY(waitStage(dialog, Stage::Preview));
        const QList<QByteArray> expected = {"api:trial:c1", "api:trial:c2", "api:trial:c10"};
        QCOMPARE(dialog.previewedKeys(), expected);
        QCOMPARE(rows(dialog), expected);
        QTest::mouseClick(button(dialog, "resetButton"), Qt::LeftButton);
        QVERIFY(waitStage(dialog, Stage::Done));
        QCOMPARE(dialog.result().deleted, 3);
        for (int r = 0; r < 3; ++r)
            QCOMPARE(dialog.previewModel()->index(r, ResetPreviewModel::OutcomeColumn).data().toString(), QStringLiteral("reset"));
    }
    for (const QByteArray k : {"api:trial:c1", "api:trial:c2", "api:trial:c10"})
        QCOMPARE(m_conn->command({"EXISTS", k}).toInteger(), 0);
    QCOMPARE(m_conn->command({"EXISTS", "api:trial:c11"}).toInteger(), 1);
}

void TestResetDialog::lostConnectionReportsConfirmedCount()
{
    // A server of its own: it is killed half way.
    SandboxServer server;
    server.start();
    Connection conn(server.options());
    QByteArrayList keys;
    for (int i = 0; i < 20000; ++i)
        keys << "big:" + QByteArray::number(i);
    setKeys(conn, keys);
    RedisClient client(server.options());
    client.open();

    ResetDialog dialog(&client, kNs, {{}, "big:*"});
    QAbstractItemModelTester tester(dialog.previewModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy finished(&dialog, &ResetDialog::finished);
    dialog.open();
    QVERIFY(waitStage(dialog, Stage::Preview));
    QCOMPARE(dialog.previewedKeys().size(), 20000);
    QTest::keyClicks(confirmField(dialog), QStringLiteral("20000"));
    // The server dies between the 10th and the 11th batch: the 11th gets no answer.
    dialog.setAfterBatchHook([&](qint64 processed) {
        if (processed == 5000) // on the GUI thread, which owns the server's process
            QMetaObject::invokeMethod(
                &dialog, [&] { server.kill(); }, Qt::BlockingQueuedConnection);
    });
    QTest::mouseClick(button(dialog, "resetButton"), Qt::LeftButton);
    QVERIFY(waitStage(dialog, Stage::Done));
    const ResetDialog::Result &r = dialog.result();
    QVERIFY(r.interrupted);
    QVERIFY(!r.cancelled);
    QCOMPARE(r.processed, 5000);
    QCOMPARE(r.deleted, 5000);
    QCOMPARE(dialog.heading(), QStringLiteral("Interrupted after 5,000 of 20,000: 5,000 deleted"));
    const QString summary = labelText(dialog, "summary");
    QVERIFY2(summary.contains(QStringLiteral("may or may not have been deleted; it is not sent again")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("The audit entry could not be written")), qPrintable(summary));
    const ResetPreviewModel *m = dialog.previewModel();
    QCOMPARE(m->index(4999, ResetPreviewModel::OutcomeColumn).data().toString(), QStringLiteral("reset"));
    QCOMPARE(m->index(5000, ResetPreviewModel::OutcomeColumn).data().toString(), QStringLiteral("no answer"));
    QCOMPARE(m->index(5499, ResetPreviewModel::OutcomeColumn).data().toString(), QStringLiteral("no answer"));
    QCOMPARE(m->index(5500, ResetPreviewModel::OutcomeColumn).data().toString(), QStringLiteral("left as it is"));
    QCOMPARE(finished.size(), 1);
    shoot(dialog, QStringLiteral("reset-interrupted.png"));
}

QTEST_MAIN(TestResetDialog)
#include "tst_resetdialog.moc"
