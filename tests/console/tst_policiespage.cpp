// The Policies tab driving its real widgets against a real redis-server: a policy created and
// edited in the editor is what `ratescope-cli policy get --json` returns; a stale edit is
// refused with its author and reapplied on top; the glob preview lists and counts (and says
// when its bound stopped it); the effect line for a known set of keys; validation in place;
// overrides granted with an expiry, counted down and cleared; read-only changes nothing;
// exactly one audit entry per change, the same the CLI writes; NOPERM explained.
#include "admin/audit.h"
#include "redis/connection.h"
#include "limiters/limiter.h"
#include "overrideeditor.h"
#include "overridetablemodel.h"
#include "policiespage.h"
#include "policyeditor.h"
#include "policytablemodel.h"
#include "redisclient.h"
#include "testsupport.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QStyleFactory>
#include <QTableView>
#include <QSpinBox>
#include <QTest>

using namespace ratescope;
using namespace ratescope::test;
using namespace ratescope::ui;

namespace {

constexpr qint64 kSecond = 1000000;
const QString kNs = QStringLiteral("ratescope:");
// A fixed clock for the limiters written here and for the page's effect line and countdowns.
constexpr qint64 kNowUs = 1767225600LL * kSecond; // 2026-01-01 00:00:00 UTC
constexpr int kWaitMs = 15000;

Policy makePolicy(const QString &name, const QByteArray &match, qint64 limit, qint64 windowUs = 60 * kSecond)
{
    Policy p;
    p.name = name;
    p.match = match;
    p.spec = {Algorithm::SlidingLog, limit, windowUs, 1};
    return p;
}

void setText(QLineEdit *e, const QString &text)
{
    e->selectAll();
    QTest::keyClicks(e, text); // typed: every keystroke goes through the editor's validation
    if (e->text() != text)
        e->setText(text);
}

} // namespace

class TestPoliciesPage : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void createThenEditIsWhatTheCliReads();
    void staleEditIsRefusedAndReapplied();
    void globPreviewListsAndCounts();
    void effectLineForKnownKeys();
    void validationInPlace();
    void overridesWithExpiryAndCountdown();
    void changeKeyLimitAndEditPolicyOf();
    void readOnlyChangesNothing();
    void oneAuditEntryPerChangeLikeTheCli();
    void nopermIsExplained();
    void disconnectedSendsNothing();
    void saveGrantDeleteAskFirst();
    void shardsField();
    void screenshots();

private:
    ConnectionOptions as(const char *user, const char *password) const
    {
        ConnectionOptions o = m_server->options();
        o.user = QString::fromLatin1(user);
        o.password = QString::fromLatin1(password);
        return o;
    }
    QStringList cli(const QStringList &args) const
    {
        return QStringList{QStringLiteral("--url"), as("admin", "adminpw").toUrl(true)} + args;
    }
    qint64 auditLength() { return m_conn->command({"XLEN", "ratescope:audit"}).integer(); }
    // Every metadata key and its DUMP: "nothing changed" means this is equal.
    QByteArray metadataSnapshot()
    {
        QByteArray all;
        const Reply keys = m_conn->command({"KEYS", "ratescope:*"}); // test-only, tiny keyspace
        QByteArrayList names;
        for (const Reply &k : keys.elements())
            names << k.bytes();
        std::sort(names.begin(), names.end());
        for (const QByteArray &k : names)
            all += k + "=" + m_conn->command({"DUMP", k}).bytes().toHex() + ";";
        return all;
    }
    // A page on its own client, loaded, its models under QAbstractItemModelTester.
    void openPage(const char *user = "admin", const char *password = "adminpw")
    {
        m_client = std::make_unique<RedisClient>(as(user, password));
        m_client->open();
        QTRY_COMPARE_WITH_TIMEOUT(m_client->state(), RedisClient::State::Connected, kWaitMs);
        m_page = std::make_unique<PoliciesPage>();
        m_page->setOperatorName(QStringLiteral("Dana (support)"));
        m_page->setNowUs(kNowUs);
        m_policyTester =
            std::make_unique<QAbstractItemModelTester>(m_page->policyModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        m_overrideTester =
            std::make_unique<QAbstractItemModelTester>(m_page->overrideModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        m_page->resize(1280, 800);
        m_page->show();
        m_page->setClient(m_client.get(), kNs.toUtf8());
        QTRY_VERIFY_WITH_TIMEOUT(m_page->isLoaded(), kWaitMs);
    }
    // The change asked for is confirmed with Enter on the strip that asks first.
    void confirm()
    {
        QTRY_VERIFY_WITH_TIMEOUT(m_page->isAsking(), kWaitMs);
        QTest::keyClick(m_page->confirmButton(), Qt::Key_Return);
        QVERIFY(!m_page->isAsking());
    }
    void waitIdle() { QTRY_VERIFY_WITH_TIMEOUT(!m_page->busy() && !m_page->previewPending() && !m_page->effectPending(), kWaitMs); }
    void fillPolicy(const QString &name, const QString &match, const QString &algo, const QString &limit, const QString &window,
                    const QString &cost = QStringLiteral("1"))
    {
        PolicyEditor *e = m_page->policyEditor();
        if (!e->nameEdit()->isReadOnly())
            setText(e->nameEdit(), name);
        setText(e->matchEdit(), match);
        e->algorithmBox()->setCurrentIndex(e->algorithmBox()->findText(algo));
        setText(e->limitEdit(), limit);
        setText(e->windowEdit(), window);
        setText(e->costEdit(), cost);
    }
    std::optional<Policy> stored(const QString &name) { return PolicyStore(*m_conn, kNs).get(name); }

    std::unique_ptr<SandboxServer> m_server;
    std::unique_ptr<Connection> m_conn;
    std::unique_ptr<RedisClient> m_client;
    std::unique_ptr<PoliciesPage> m_page;
    std::unique_ptr<QAbstractItemModelTester> m_policyTester, m_overrideTester;
};

void TestPoliciesPage::initTestCase()
{
    SandboxServer::Config config = aclConfig();
    // A support user who may read and peek but not run EVAL (what policy writes need).
    config.configLines << QStringLiteral("user support on >supportpw ~* &* -@all +@read +@connection +evalsha_ro +eval_ro +set +xadd");
    m_server = std::make_unique<SandboxServer>(config);
    m_server->start();
    m_conn = std::make_unique<Connection>(as("admin", "adminpw"));
}

void TestPoliciesPage::init()
{
    m_conn->command({"FLUSHALL"});
}

void TestPoliciesPage::cleanup()
{
    m_policyTester.reset();
    m_overrideTester.reset();
    m_page.reset();
    m_client.reset();
}

void TestPoliciesPage::createThenEditIsWhatTheCliReads()
{
    openPage();
    const qint64 audits = auditLength();
    m_page->newPolicy();
    PolicyEditor *e = m_page->policyEditor();
    fillPolicy(QStringLiteral("api-default"), QStringLiteral("api:*"), QStringLiteral("gcra"), QStringLiteral("40"), QStringLiteral("10s"),
               QStringLiteral("2"));
    setText(e->descriptionEdit(), QStringLiteral("the public API <b>not bold</b>"));
    waitIdle();
    QVERIFY(e->saveButton()->isEnabled());
    QTest::mouseClick(e->saveButton(), Qt::LeftButton);
    confirm();
    QTRY_VERIFY_WITH_TIMEOUT(stored(QStringLiteral("api-default")).has_value() && !m_page->busy(), kWaitMs);
    QCOMPARE(auditLength(), audits + 1);
    QTRY_COMPARE_WITH_TIMEOUT(m_page->policyModel()->rowCount(), 1, kWaitMs);

    // Edited: the editor is now on version 1; change limit, window, unit and description.
    QCOMPARE(e->basedOnVersion(), 1);
    setText(e->limitEdit(), QStringLiteral("60"));
    setText(e->windowEdit(), QStringLiteral("1m"));
    e->enforcedBox()->setChecked(false);
    waitIdle();
    QTest::mouseClick(e->saveButton(), Qt::LeftButton);
    confirm();
    QTRY_VERIFY_WITH_TIMEOUT(stored(QStringLiteral("api-default"))->version == 2 && !m_page->busy(), kWaitMs);
    QCOMPARE(auditLength(), audits + 2);

    const CliResult r =
        runCli(cli({QStringLiteral("--json"), QStringLiteral("policy"), QStringLiteral("get"), QStringLiteral("api-default")}));
    QCOMPARE(r.exitCode, 0);
    const QJsonObject fromCli = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(fromCli.value(QStringLiteral("name")).toString(), QStringLiteral("api-default"));
    QCOMPARE(fromCli.value(QStringLiteral("match")).toString(), QStringLiteral("api:*"));
    QCOMPARE(fromCli.value(QStringLiteral("algorithm")).toString(), QStringLiteral("gcra"));
    QCOMPARE(fromCli.value(QStringLiteral("limit")).toInteger(), 60);
    QCOMPARE(fromCli.value(QStringLiteral("window_us")).toInteger(), 60 * kSecond);
    QCOMPARE(fromCli.value(QStringLiteral("cost")).toInteger(), 2);
    QCOMPARE(fromCli.value(QStringLiteral("description")).toString(), QStringLiteral("the public API <b>not bold</b>"));
    QCOMPARE(fromCli.value(QStringLiteral("enforced")).toBool(), false);
    QCOMPARE(fromCli.value(QStringLiteral("version")).toInteger(), 2);
    QCOMPARE(fromCli.value(QStringLiteral("updated_by")).toString(), QStringLiteral("Dana (support)"));
    // Exactly what the editor proposed, field for field.
    Policy proposed = e->proposed();
    proposed.version = 2;
    proposed.updatedAt = stored(QStringLiteral("api-default"))->updatedAt;
    proposed.updatedBy = QStringLiteral("Dana (support)");
    QCOMPARE(fromCli, proposed.toJson());
    // The table shows it as plain text; the tooltip says the whole row first (a narrow page hides
    // the columns that do not fit).
    QTRY_COMPARE_WITH_TIMEOUT(m_page->policyModel()->index(0, PolicyTableModel::LimitColumn).data().toString(),
                              QStringLiteral("60 per 1 m (cost 2)"), kWaitMs);
    QCOMPARE(m_page->policyModel()->index(0, PolicyTableModel::NameColumn).data(Qt::ToolTipRole).toString(),
             QStringLiteral("<qt>api:*: 60 per 1 m (cost 2), gcra · declared, not enforced<br>the public API &lt;b&gt;not "
                            "bold&lt;/b&gt;<br>version 2, changed by Dana (support) at %1</qt>")
                 .arg(stored(QStringLiteral("api-default"))->updatedAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm"))));
}

void TestPoliciesPage::staleEditIsRefusedAndReapplied()
{
    PolicyStore(*m_conn, kNs).set(makePolicy(QStringLiteral("api"), "api:*", 100), 0, QStringLiteral("alice"));
    openPage();
    m_page->editPolicy(QStringLiteral("api"));
    PolicyEditor *e = m_page->policyEditor();
    QCOMPARE(e->basedOnVersion(), 1);
    // Meanwhile bob changes it from another client.
    Policy bobs = *stored(QStringLiteral("api"));
    bobs.spec.limit = 200;
    PolicyStore(*m_conn, kNs).set(bobs, 1, QStringLiteral("bob"));
    const qint64 audits = auditLength();

    setText(e->limitEdit(), QStringLiteral("50"));
    waitIdle();
    QTest::mouseClick(e->saveButton(), Qt::LeftButton);
    confirm();
    QTRY_VERIFY_WITH_TIMEOUT(e->hasConflict(), kWaitMs);
    QVERIFY2(e->conflictLabel()->text().contains(QStringLiteral("changed by bob at")), qPrintable(e->conflictLabel()->text()));
    QVERIFY2(e->theirsLabel()->text().contains(QStringLiteral("version 2 by bob")), qPrintable(e->theirsLabel()->text()));
    QVERIFY2(e->theirsLabel()->text().contains(QStringLiteral("200 per 1 m")), qPrintable(e->theirsLabel()->text()));
    QCOMPARE(e->limitEdit()->text(), QStringLiteral("50")); // the operator's edit is kept
    QVERIFY(!e->saveButton()->isEnabled());
    QCOMPARE(stored(QStringLiteral("api"))->spec.limit, 200); // bob's edit stands
    QCOMPARE(auditLength(), audits);                          // a refused change is no change

    QTest::mouseClick(e->applyMineButton(), Qt::LeftButton);
    confirm();
    QTRY_VERIFY_WITH_TIMEOUT(stored(QStringLiteral("api"))->version == 3 && !m_page->busy(), kWaitMs);
    QCOMPARE(stored(QStringLiteral("api"))->spec.limit, 50);
    QCOMPARE(stored(QStringLiteral("api"))->updatedBy, QStringLiteral("Dana (support)"));
    QVERIFY(!e->hasConflict());
    QCOMPARE(auditLength(), audits + 1);
    const auto entry = AuditLog(*m_conn, kNs).list(1).front();
    QCOMPARE(entry.action, QStringLiteral("policy.set"));
    QCOMPARE(Policy::fromJson(QJsonDocument::fromJson(entry.before.toUtf8()).object()).updatedBy, QStringLiteral("bob"));
}

void TestPoliciesPage::globPreviewListsAndCounts()
{
    std::vector<Command> batch;
    for (int i = 0; i < 150; ++i)
        batch.push_back({"SET", "pv:a:" + QByteArray::number(i), "1"});
    for (int i = 0; i < 5; ++i)
        batch.push_back({"SET", "pv:b:" + QByteArray::number(i), "1"});
    batch.push_back({"SET", QByteArray("pv:b:bin\x00\xff", 10), "1"});
    m_conn->pipeline(batch);
    PolicyStore(*m_conn, kNs).set(makePolicy(QStringLiteral("pv"), "pv:*", 10), 0, QStringLiteral("t"));
    openPage();
    m_page->newPolicy();
    PolicyEditor *e = m_page->policyEditor();
    setText(e->matchEdit(), QStringLiteral("pv:a:*"));
    waitIdle();
    QCOMPARE(e->previewSummary()->text(), QStringLiteral("150 keys match. The first 100 are listed."));
    QCOMPARE(e->previewList()->count(), 100);
    setText(e->matchEdit(), QStringLiteral("pv:b:*"));
    waitIdle();
    QCOMPARE(e->previewSummary()->text(), QStringLiteral("6 keys match."));
    QCOMPARE(e->previewList()->count(), 6);
    QCOMPARE(e->previewList()->item(0)->text(), QStringLiteral("pv:b:0"));
    QCOMPARE(e->previewList()->item(5)->text(), QStringLiteral("\"pv:b:bin\\x00\\xff\"")); // escaped, never raw bytes
    // Metadata is left out and said so.
    setText(e->matchEdit(), QStringLiteral("*"));
    waitIdle();
    QVERIFY2(e->previewSummary()->text().startsWith(QStringLiteral("156 keys match.")), qPrintable(e->previewSummary()->text()));
    QVERIFY2(e->previewSummary()->text().contains(QStringLiteral("of Ratescope's own under ratescope: left out")),
             qPrintable(e->previewSummary()->text()));
    // A bound on the walk: the count is a lower bound and says how far it got.
    m_page->setPreviewScanBudget(50);
    setText(e->matchEdit(), QStringLiteral("pv:*"));
    waitIdle();
    QVERIFY2(e->previewSummary()->text().startsWith(QStringLiteral("At least ")), qPrintable(e->previewSummary()->text()));
    QVERIFY2(e->previewSummary()->text().contains(QStringLiteral("scanned 50 of about 157 keys")), qPrintable(e->previewSummary()->text()));
    // Typing quickly: only the last pattern's answer is shown.
    m_page->setPreviewScanBudget(PoliciesPage::kPreviewScanBudget);
    for (const char *g : {"pv:a:1*", "pv:a:2*", "pv:b:*", "pv:a:14?"})
        setText(e->matchEdit(), QString::fromLatin1(g));
    waitIdle();
    QCOMPARE(e->previewSummary()->text(), QStringLiteral("10 keys match."));

    // A walk of many pages goes a few pages per request, and is dropped when the pattern changes.
    batch.clear();
    for (int i = 0; i < 25000; ++i)
        batch.push_back({"SET", "pv:c:" + QByteArray::number(i), "1"});
    m_conn->pipeline(batch);
    setText(e->matchEdit(), QStringLiteral("pv:c:*"));
    waitIdle();
    QCOMPARE(e->previewSummary()->text(), QStringLiteral("25,000 keys match. The first 100 are listed."));
    for (int i = 1; i < e->previewList()->count(); ++i) // the first found, listed in order
        QVERIFY(e->previewList()->item(i - 1)->text() < e->previewList()->item(i)->text());
    setText(e->matchEdit(), QStringLiteral("pv:*"));
    // The old answer goes with its pattern: the new walk is under way, or already done (on a
    // quiet machine it can finish before the first look).
    QTRY_VERIFY_WITH_TIMEOUT(!m_page->policyEditor()->previewSummary()->text().startsWith(QStringLiteral("25,000")), kWaitMs);
    setText(e->matchEdit(), QStringLiteral("pv:b:*"));
    waitIdle();
    QCOMPARE(e->previewSummary()->text(), QStringLiteral("6 keys match."));
}

void TestPoliciesPage::effectLineForKnownKeys()
{
    // Ten sliding logs: ef:0..3 hold 5 requests, the others 2, all admitted at the fixed clock.
    Limiter limiter(*m_conn);
    const LimitSpec written{Algorithm::SlidingLog, 100, 60 * kSecond, 1};
    for (int i = 0; i < 10; ++i)
        for (int n = 0; n < (i < 4 ? 5 : 2); ++n)
            QVERIFY(limiter.check("ef:" + QByteArray::number(i), written, kNowUs - 10 * kSecond + n).allowed);
    m_conn->command({"SET", "ef:note", "not a limiter"});
    PolicyStore(*m_conn, kNs).set(makePolicy(QStringLiteral("ef-special"), "ef:9", 1000), 0, QStringLiteral("t"));
    const QByteArray before = metadataSnapshot() + m_conn->command({"DUMP", "ef:0"}).bytes();
    openPage();
    m_page->newPolicy();
    PolicyEditor *e = m_page->policyEditor();
    fillPolicy(QStringLiteral("ef"), QStringLiteral("ef:*"), QStringLiteral("sliding-log"), QStringLiteral("5"), QStringLiteral("1m"));
    waitIdle();
    QCOMPARE(e->effectLabel()->text(),
             QStringLiteral(
                 "4 keys would be at their limit under 5 per 1 m (of 9 read); 1 governed by a more specific policy, 1 not limiters."));
    setText(e->limitEdit(), QStringLiteral("2"));
    waitIdle();
    QCOMPARE(e->effectLabel()->text(),
             QStringLiteral("9 keys would be at their limit under 2 per 1 m; 1 governed by a more specific policy, 1 not limiters."));
    // Outside the window the logs are empty: the frozen clock decides.
    m_page->setNowUs(kNowUs + 120 * kSecond);
    setText(e->limitEdit(), QStringLiteral("5"));
    waitIdle();
    QCOMPARE(e->effectLabel()->text(),
             QStringLiteral(
                 "0 keys would be at their limit under 5 per 1 m (of 9 read); 1 governed by a more specific policy, 1 not limiters."));
    QCOMPARE(metadataSnapshot() + m_conn->command({"DUMP", "ef:0"}).bytes(), before); // previews write nothing
}

void TestPoliciesPage::validationInPlace()
{
    openPage();
    m_page->newPolicy();
    PolicyEditor *e = m_page->policyEditor();
    fillPolicy(QStringLiteral("v"), QStringLiteral("api:[ab"), QStringLiteral("sliding-log"), QStringLiteral("5"), QStringLiteral("10s"),
               QStringLiteral("10"));
    QLabel *matchProblem = e->problemLabel(PolicyField::Match);
    QVERIFY(matchProblem->isVisible());
    QVERIFY2(matchProblem->text().contains(QStringLiteral("unbalanced '['")), qPrintable(matchProblem->text()));
    QLabel *costProblem = e->problemLabel(PolicyField::Cost);
    QVERIFY(costProblem->isVisible());
    QCOMPARE(costProblem->text(), QStringLiteral("cost 10 is above the limit 5: such a request could never be allowed"));
    QVERIFY(!e->problemLabel(PolicyField::Limit)->isVisible());
    QVERIFY(!e->saveButton()->isEnabled());
    QVERIFY(e->previewSummary()->text().startsWith(QStringLiteral("Correct the pattern")) || m_page->previewPending());

    setText(e->matchEdit(), QStringLiteral("api:\\"));
    QVERIFY2(matchProblem->text().contains(QStringLiteral("trailing '\\'")), qPrintable(matchProblem->text()));
    setText(e->matchEdit(), QStringLiteral("api:[ab]\\*"));
    QVERIFY(!matchProblem->isVisible());
    setText(e->limitEdit(), QStringLiteral("0"));
    QCOMPARE(e->problemLabel(PolicyField::Limit)->text(), QStringLiteral("limit must be between 1 and 1000000000000, not 0"));
    setText(e->limitEdit(), QStringLiteral("lots"));
    QCOMPARE(e->problemLabel(PolicyField::Limit)->text(), QStringLiteral("the limit must be a whole number"));
    setText(e->windowEdit(), QStringLiteral("0"));
    QVERIFY2(e->problemLabel(PolicyField::Window)->text().startsWith(QStringLiteral("window must be between 1ms and 366d")),
             qPrintable(e->problemLabel(PolicyField::Window)->text()));
    setText(e->nameEdit(), QString());
    QCOMPARE(e->problemLabel(PolicyField::Name)->text(), QStringLiteral("a policy needs a name (1-200 characters)"));
    // Emitting save anyway sends nothing.
    emit e->saveRequested();
    waitIdle();
    QCOMPARE(m_conn->command({"EXISTS", "ratescope:policies"}).integer(), 0);
    // Corrected: saved.
    fillPolicy(QStringLiteral("v"), QStringLiteral("api:[ab]\\*"), QStringLiteral("sliding-log"), QStringLiteral("10"),
               QStringLiteral("10s"), QStringLiteral("10"));
    QVERIFY(e->saveButton()->isEnabled());
    QTest::mouseClick(e->saveButton(), Qt::LeftButton);
    confirm();
    QTRY_VERIFY_WITH_TIMEOUT(stored(QStringLiteral("v")).has_value(), kWaitMs);
}

void TestPoliciesPage::overridesWithExpiryAndCountdown()
{
    PolicyStore(*m_conn, kNs).set(makePolicy(QStringLiteral("ov"), "ov:*", 10), 0, QStringLiteral("t"));
    openPage();
    const qint64 audits = auditLength();
    m_page->changeKeyLimit("ov:acme");
    OverrideEditor *e = m_page->overrideEditor();
    QTRY_COMPARE_WITH_TIMEOUT(e->limitEdit()->text(), QStringLiteral("10"), kWaitMs);
    QVERIFY2(e->inForceLabel()->text().contains(QStringLiteral("policy “ov”")), qPrintable(e->inForceLabel()->text()));
    setText(e->limitEdit(), QStringLiteral("50"));
    e->expiryBox()->setCurrentIndex(2); // 2 hours
    QVERIFY(e->saveButton()->isEnabled());
    QTest::mouseClick(e->saveButton(), Qt::LeftButton);
    confirm();
    QTRY_COMPARE_WITH_TIMEOUT(m_page->overrideModel()->rowCount(), 1, kWaitMs);
    QCOMPARE(auditLength(), audits + 1);
    const auto o = OverrideStore(*m_conn, kNs).get("ov:acme");
    QVERIFY(o);
    QCOMPARE(o->limit, 50);
    QCOMPARE(o->setBy, QStringLiteral("Dana (support)"));
    QCOMPARE(o->setAt.msecsTo(o->expiresAt), 2 * 3600 * 1000);
    const qint64 pttl = m_conn->command({"PTTL", "ratescope:override:ov:acme"}).integer();
    QVERIFY2(pttl > 7100 * 1000 && pttl <= 7200 * 1000, qPrintable(QString::number(pttl)));

    // The countdown follows the (frozen) clock.
    const QModelIndex expires = m_page->overrideModel()->index(0, OverrideTableModel::ExpiresColumn);
    m_page->setNowUs(o->setAt.toMSecsSinceEpoch() * 1000 + 30 * 60 * kSecond);
    QCOMPARE(expires.data().toString(), QStringLiteral("1 h 30 m 00 s"));
    m_page->setNowUs(o->setAt.toMSecsSinceEpoch() * 1000 + (7200 - 42) * kSecond);
    QCOMPARE(expires.data().toString(), QStringLiteral("42 s"));
    m_page->setNowUs(o->setAt.toMSecsSinceEpoch() * 1000 + 7201 * kSecond);
    QCOMPARE(expires.data().toString(), QStringLiteral("expired"));
    QCOMPARE(m_page->overrideModel()->index(0, OverrideTableModel::LimitColumn).data().toString(), QStringLiteral("50 per policy window"));

    // A custom expiry, on a key with bytes that must be shown escaped.
    const QByteArray binKey("ov:bin\x01key", 10);
    m_page->changeKeyLimit(binKey);
    QTRY_COMPARE_WITH_TIMEOUT(e->limitEdit()->text(), QStringLiteral("10"), kWaitMs);
    QCOMPARE(e->keyEdit()->text(), QStringLiteral("\"ov:bin\\x01key\""));
    e->expiryBox()->setCurrentIndex(4); // custom
    setText(e->customExpiryEdit(), QStringLiteral("banana"));
    QVERIFY(!e->saveButton()->isEnabled());
    setText(e->customExpiryEdit(), QStringLiteral("45m"));
    setText(e->windowEdit(), QStringLiteral("10s"));
    QVERIFY(e->saveButton()->isEnabled());
    QTest::mouseClick(e->saveButton(), Qt::LeftButton);
    confirm();
    QTRY_COMPARE_WITH_TIMEOUT(m_page->overrideModel()->rowCount(), 2, kWaitMs);
    const auto bin = OverrideStore(*m_conn, kNs).get(binKey);
    QVERIFY(bin);
    QCOMPARE(bin->setAt.msecsTo(bin->expiresAt), 45 * 60 * 1000);
    QCOMPARE(bin->windowUs, 10 * kSecond);
    QCOMPARE(m_page->overrideModel()->index(1, OverrideTableModel::KeyColumn).data().toString(), QStringLiteral("\"ov:bin\\x01key\""));
    QCOMPARE(auditLength(), audits + 2);

    // Clear from the table.
    m_page->overrideView()->selectRow(0);
    QTest::mouseClick(m_page->clearOverrideButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(m_page->overrideModel()->rowCount(), 1, kWaitMs);
    QVERIFY(!OverrideStore(*m_conn, kNs).get("ov:acme"));
    QCOMPARE(auditLength(), audits + 3);
    // And from the editor.
    m_page->changeKeyLimit(binKey);
    QTRY_VERIFY_WITH_TIMEOUT(e->inForceLabel()->text().contains(QStringLiteral("an override by Dana (support)")), kWaitMs);
    QTest::mouseClick(e->clearButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(m_page->overrideModel()->rowCount(), 0, kWaitMs);
    QCOMPARE(auditLength(), audits + 4);
}

void TestPoliciesPage::changeKeyLimitAndEditPolicyOf()
{
    PolicyStore store(*m_conn, kNs);
    store.set(makePolicy(QStringLiteral("broad"), "k:*", 10), 0, QStringLiteral("t"));
    store.set(makePolicy(QStringLiteral("narrow"), "k:vip:*", 99), 0, QStringLiteral("t"));
    openPage();
    m_page->editPolicyOf("k:vip:7");
    QTRY_COMPARE_WITH_TIMEOUT(m_page->policyEditor()->originalName(), QStringLiteral("narrow"), kWaitMs);
    QCOMPARE(m_page->policyEditor()->limitEdit()->text(), QStringLiteral("99"));
    m_page->editPolicyOf("k:other");
    QTRY_COMPARE_WITH_TIMEOUT(m_page->policyEditor()->originalName(), QStringLiteral("broad"), kWaitMs);
    // No policy covers it: a new one for exactly that key (glob characters escaped).
    m_page->editPolicyOf("zz:a*b");
    QTRY_VERIFY_WITH_TIMEOUT(m_page->policyEditor()->isNew(), kWaitMs);
    QCOMPARE(m_page->policyEditor()->matchEdit()->text(), QStringLiteral("zz:a\\*b"));
    waitIdle();
}

void TestPoliciesPage::readOnlyChangesNothing()
{
    PolicyStore(*m_conn, kNs).set(makePolicy(QStringLiteral("ro"), "ro:*", 10), 0, QStringLiteral("t"));
    Override o;
    o.key = "ro:acme";
    o.limit = 20;
    OverrideStore(*m_conn, kNs).set(o, 3600 * kSecond, QStringLiteral("t"));
    const QByteArray before = metadataSnapshot();
    openPage();
    m_client->setReadOnly(true);
    QTRY_COMPARE_WITH_TIMEOUT(m_page->overrideModel()->rowCount(), 1, kWaitMs);
    for (QPushButton *b : {m_page->newPolicyButton(), m_page->newOverrideButton(), m_page->clearOverrideButton()}) {
        QVERIFY2(!b->isEnabled(), qPrintable(b->text()));
        QVERIFY2(b->toolTip().startsWith(QStringLiteral("Read-only session")), qPrintable(b->toolTip()));
    }
    QVERIFY(m_page->messageLabel()->text().startsWith(QStringLiteral("Read-only session")));

    m_page->editPolicy(QStringLiteral("ro"));
    PolicyEditor *pe = m_page->policyEditor();
    setText(pe->limitEdit(), QStringLiteral("11"));
    waitIdle();
    QVERIFY(!pe->saveButton()->isEnabled());
    QVERIFY(pe->saveButton()->toolTip().startsWith(QStringLiteral("Read-only session")));
    QVERIFY(!pe->deleteButton()->isEnabled());
    QTest::mouseClick(pe->saveButton(), Qt::LeftButton);
    emit pe->saveRequested(); // even when asked directly: refused before anything is sent
    emit pe->deleteRequested();
    QTest::mouseClick(m_page->confirmDeleteButton(), Qt::LeftButton);
    emit pe->applyMineRequested();
    m_page->changeKeyLimit("ro:acme");
    OverrideEditor *oe = m_page->overrideEditor();
    QTRY_COMPARE_WITH_TIMEOUT(oe->limitEdit()->text(), QStringLiteral("20"), kWaitMs);
    QVERIFY(!oe->saveButton()->isEnabled() && !oe->clearButton()->isEnabled());
    emit oe->saveRequested();
    emit oe->clearRequested();
    m_page->overrideView()->selectRow(0);
    QTest::mouseClick(m_page->clearOverrideButton(), Qt::LeftButton);
    waitIdle();
    m_page->reload();
    QTest::qWait(0);
    waitIdle();
    QCOMPARE(metadataSnapshot(), before);
    // Unlocked: the same save goes through.
    m_client->setReadOnly(false);
    QVERIFY(!m_page->messageLabel()->isVisible());
    m_page->editPolicy(QStringLiteral("ro"));
    setText(pe->limitEdit(), QStringLiteral("11"));
    waitIdle();
    QTest::mouseClick(pe->saveButton(), Qt::LeftButton);
    confirm();
    QTRY_COMPARE_WITH_TIMEOUT(stored(QStringLiteral("ro"))->spec.limit, 11, kWaitMs);
}

void TestPoliciesPage::oneAuditEntryPerChangeLikeTheCli()
{
    openPage();
    AuditLog log(*m_conn, kNs);
    PolicyEditor *pe = m_page->policyEditor();
    // The console creates, the CLI edits, the console deletes; then overrides both ways.
    m_page->newPolicy();
    fillPolicy(QStringLiteral("au"), QStringLiteral("au:*"), QStringLiteral("token-bucket"), QStringLiteral("30"), QStringLiteral("1m"));
    waitIdle();
    QTest::mouseClick(pe->saveButton(), Qt::LeftButton);
    confirm();
    QTRY_COMPARE_WITH_TIMEOUT(auditLength(), 1, kWaitMs);
    const AuditEntry created = log.list(1).front();
    QCOMPARE(created.action, QStringLiteral("policy.set"));
    QCOMPARE(created.target, QStringLiteral("au"));
    QCOMPARE(created.actor, QStringLiteral("Dana (support)"));
    QCOMPARE(created.before, QString());
    QCOMPARE(created.after, QString::fromUtf8(QJsonDocument(stored(QStringLiteral("au"))->toJson()).toJson(QJsonDocument::Compact)));
    QCOMPARE(created.count, 1);

    QCOMPARE(runCli(cli({QStringLiteral("--operator"), QStringLiteral("Dana (support)"), QStringLiteral("policy"), QStringLiteral("set"),
                         QStringLiteral("au"), QStringLiteral("--match"), QStringLiteral("au:*"), QStringLiteral("--algo"),
                         QStringLiteral("token-bucket"), QStringLiteral("--limit"), QStringLiteral("31"), QStringLiteral("--window"),
                         QStringLiteral("1m")}))
                 .exitCode,
             0);
    QCOMPARE(auditLength(), 2);
    const AuditEntry byCli = log.list(1).front();
    QCOMPARE(byCli.action, created.action);
    QCOMPARE(byCli.target, created.target);
    QCOMPARE(byCli.actor, created.actor);
    QCOMPARE(byCli.before, created.after); // the CLI's "before" is exactly what the console stored
    QCOMPARE(byCli.count, created.count);

    m_page->reload();
    QTRY_COMPARE_WITH_TIMEOUT(m_page->policyModel()->index(0, PolicyTableModel::LimitColumn).data().toString(),
                              QStringLiteral("31 per 1 m"), kWaitMs);
    m_page->editPolicy(QStringLiteral("au"));
    QTest::mouseClick(pe->deleteButton(), Qt::LeftButton);
    QVERIFY(m_page->confirmDeleteButton()->isVisible());
    QTest::mouseClick(m_page->confirmDeleteButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(auditLength(), 3, kWaitMs);
    QVERIFY(!stored(QStringLiteral("au")));
    const AuditEntry deleted = log.list(1).front();
    QCOMPARE(deleted.action, QStringLiteral("policy.delete"));
    QCOMPARE(deleted.before, byCli.after);
    QCOMPARE(deleted.after, QString());

    // Override: the console grants (a key typed by hand), the CLI clears; entries shaped alike.
    QTest::mouseClick(m_page->newOverrideButton(), Qt::LeftButton);
    OverrideEditor *oe = m_page->overrideEditor();
    QVERIFY(!oe->saveButton()->isEnabled());
    QTest::keyClicks(oe->keyEdit(), QStringLiteral("au:1"));
    QTRY_COMPARE_WITH_TIMEOUT(oe->inForceLabel()->text(), QStringLiteral("no policy covers this key"), kWaitMs);
    QVERIFY(!oe->keyEdit()->isReadOnly());
    setText(oe->limitEdit(), QStringLiteral("7"));
    QTest::mouseClick(oe->saveButton(), Qt::LeftButton);
    confirm();
    QTRY_COMPARE_WITH_TIMEOUT(auditLength(), 4, kWaitMs);
    const AuditEntry granted = log.list(1).front();
    QCOMPARE(granted.action, QStringLiteral("override.set"));
    QCOMPARE(granted.target, QStringLiteral("au:1"));
    QCOMPARE(granted.after,
             QString::fromUtf8(QJsonDocument(OverrideStore(*m_conn, kNs).get("au:1")->toJson()).toJson(QJsonDocument::Compact)));
    QCOMPARE(runCli(cli({QStringLiteral("override"), QStringLiteral("clear"), QStringLiteral("au:1")})).exitCode, 0);
    QCOMPARE(auditLength(), 5);
    const AuditEntry cleared = log.list(1).front();
    QCOMPARE(cleared.action, QStringLiteral("override.clear"));
    QCOMPARE(cleared.before, granted.after);
    QCOMPARE(cleared.count, 1);
    waitIdle();
    QCOMPARE(auditLength(), 5);
}

void TestPoliciesPage::nopermIsExplained()
{
    PolicyStore(*m_conn, kNs).set(makePolicy(QStringLiteral("np"), "np:*", 10), 0, QStringLiteral("t"));
    const QByteArray before = metadataSnapshot();
    openPage("support", "supportpw");
    m_page->editPolicy(QStringLiteral("np"));
    PolicyEditor *pe = m_page->policyEditor();
    setText(pe->limitEdit(), QStringLiteral("12"));
    waitIdle();
    QTest::mouseClick(pe->saveButton(), Qt::LeftButton);
    confirm();
    QTRY_VERIFY_WITH_TIMEOUT(!m_page->busy(), kWaitMs);
    const QLabel *status = nullptr;
    for (const QLabel *l : pe->findChildren<QLabel *>())
        if (l->text().contains(QStringLiteral("may not run")))
            status = l;
    QVERIFY(status);
    QCOMPARE(status->text(), QStringLiteral("user 'support' may not run EVAL; ask for +eval or use a profile with write access."));
    QCOMPARE(metadataSnapshot(), before);
}

void TestPoliciesPage::disconnectedSendsNothing()
{
    PoliciesPage page;
    QAbstractItemModelTester policies(page.policyModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    page.setClient(nullptr, kNs.toUtf8());
    QCOMPARE(page.messageLabel()->text(), QStringLiteral("Not connected."));
    for (QPushButton *b : {page.newPolicyButton(), page.newOverrideButton(), page.clearOverrideButton()}) {
        QVERIFY(!b->isEnabled());
        QCOMPARE(b->toolTip(), QStringLiteral("Not connected"));
    }
    page.editPolicyOf("k");   // nothing to ask: no crash, nothing shown
    page.changeKeyLimit("k"); // the editor opens, its changes disabled
    QVERIFY(!page.overrideEditor()->saveButton()->isEnabled());
    emit page.overrideEditor()->saveRequested();
    QVERIFY(!page.busy());
}

void TestPoliciesPage::screenshots()
{
    // Renders the tab for a person to look at: RATESCOPE_SHOTS=dir (else skipped).
    const QString dir = qEnvironmentVariable("RATESCOPE_SHOTS");
    if (dir.isEmpty())
        QSKIP("set RATESCOPE_SHOTS=/tmp to render the screens");
    PolicyStore store(*m_conn, kNs);
    struct P {
        const char *name, *match;
        Algorithm a;
        qint64 limit, windowS;
        const char *description;
    };
    for (const P &p : {P{"api-default", "api:*", Algorithm::SlidingLog, 100, 60, "Public API, per client"},
                       P{"api-search", "api:search:*", Algorithm::SlidingCounter, 20, 10, "Search is expensive"},
                       P{"login", "login:*", Algorithm::FixedWindow, 5, 300, "Password guessing"},
                       P{"uploads", "upload:*", Algorithm::TokenBucket, 10, 60, "Bursty uploads"},
                       P{"webhooks", "hook:*", Algorithm::Gcra, 50, 1, "Outgoing webhooks"},
                       P{"partner-gw", "partner:*", Algorithm::SlidingLog, 1000, 60, "Partner gateway (ms scores)"},
                       P{"legacy", "legacy:*", Algorithm::FixedWindow, 600, 60, "INCR windows of the old service"}}) {
        Policy pol = makePolicy(QString::fromLatin1(p.name), p.match, p.limit, p.windowS * kSecond);
        pol.spec.algorithm = p.a;
        pol.description = QString::fromLatin1(p.description);
        store.set(pol, 0, QStringLiteral("alice"));
    }
    Limiter limiter(*m_conn);
    for (int i = 0; i < 60; ++i)
        for (int n = 0; n < (i % 3 == 0 ? 40 : 10); ++n)
            limiter.check("api:client" + QByteArray::number(i), {Algorithm::SlidingLog, 100, 60 * kSecond, 1});
    Override o;
    o.key = "api:acme";
    o.limit = 500;
    OverrideStore(*m_conn, kNs).set(o, 2 * 3600 * kSecond, QStringLiteral("Dana (support)"));
    o.key = "login:ops-bot";
    o.limit = 50;
    o.windowUs = 60 * kSecond;
    OverrideStore(*m_conn, kNs).set(o, 15 * 60 * kSecond, QStringLiteral("Sam"));

    for (const bool dark : {false, true}) {
        const QString suffix = dark ? QStringLiteral("-dark") : QString();
        QPalette palette = QApplication::style()->standardPalette();
        if (dark) {
            palette.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
            palette.setColor(QPalette::WindowText, QColor(0xe8, 0xe8, 0xe8));
            palette.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
            palette.setColor(QPalette::AlternateBase, QColor(0x33, 0x33, 0x33));
            palette.setColor(QPalette::Text, QColor(0xe8, 0xe8, 0xe8));
            palette.setColor(QPalette::Button, QColor(0x3a, 0x3a, 0x3a));
            palette.setColor(QPalette::ButtonText, QColor(0xe8, 0xe8, 0xe8));
            palette.setColor(QPalette::Highlight, QColor(0x3d, 0x7a, 0xd6));
            palette.setColor(QPalette::HighlightedText, Qt::white);
            palette.setColor(QPalette::PlaceholderText, QColor(0x90, 0x90, 0x90));
        }
        QApplication::setPalette(palette);
        cleanup();
        openPage();
        m_page->setNowUs(std::nullopt);
        QTRY_COMPARE_WITH_TIMEOUT(m_page->overrideModel()->rowCount(), 2, kWaitMs);
        m_page->grab().save(QDir(dir).filePath(QStringLiteral("policies-tab%1.png").arg(suffix)));

        m_page->editPolicy(QStringLiteral("api-default"));
        setText(m_page->policyEditor()->limitEdit(), QStringLiteral("40"));
        waitIdle();
        m_page->grab().save(QDir(dir).filePath(QStringLiteral("policies-editor%1.png").arg(suffix)));

        Policy theirs = *stored(QStringLiteral("api-default"));
        theirs.spec.limit = 200;
        store.set(theirs, theirs.version, QStringLiteral("bob"));
        QTest::mouseClick(m_page->policyEditor()->saveButton(), Qt::LeftButton);
        confirm();
        QTRY_VERIFY_WITH_TIMEOUT(m_page->policyEditor()->hasConflict(), kWaitMs);
        waitIdle();
        m_page->grab().save(QDir(dir).filePath(QStringLiteral("policies-conflict%1.png").arg(suffix)));
        store.set(makePolicy(QStringLiteral("api-default"), "api:*", 100), store.get(QStringLiteral("api-default"))->version,
                  QStringLiteral("alice"));

        m_page->changeKeyLimit("api:acme");
        QTRY_VERIFY_WITH_TIMEOUT(m_page->overrideEditor()->inForceLabel()->text().contains(QStringLiteral("override")), kWaitMs);
        m_page->grab().save(QDir(dir).filePath(QStringLiteral("policies-override%1.png").arg(suffix)));
    }
}

// Save, Grant and Delete ask once more with what they would do; Escape leaves everything as it
// was, Enter makes the change.
void TestPoliciesPage::saveGrantDeleteAskFirst()
{
    Limiter limiter(*m_conn);
    const LimitSpec written{Algorithm::SlidingLog, 100, 60 * kSecond, 1};
    for (int i = 0; i < 6; ++i)
        for (int n = 0; n < (i < 4 ? 5 : 2); ++n)
            QVERIFY(limiter.check("cf:" + QByteArray::number(i), written, kNowUs - 10 * kSecond + n).allowed);
    openPage();
    const qint64 audits = auditLength();
    m_page->newPolicy();
    PolicyEditor *e = m_page->policyEditor();
    fillPolicy(QStringLiteral("cf"), QStringLiteral("cf:*"), QStringLiteral("sliding-log"), QStringLiteral("5"), QStringLiteral("1m"));
    waitIdle();
    QTest::mouseClick(e->saveButton(), Qt::LeftButton);
    QVERIFY(m_page->isAsking());
    QCOMPARE(m_page->confirmText(), QStringLiteral("Create policy “cf”: 5 per 1 m sliding-log on cf:*? "
                                                   "4 keys would be at their limit under 5 per 1 m (of 6 read)."));
    QCOMPARE(m_page->confirmButton()->text(), QStringLiteral("Create"));
    QVERIFY(m_page->confirmButton()->hasFocus());
    if (const QString dir = qEnvironmentVariable("RATESCOPE_SHOTS"); !dir.isEmpty())
        m_page->grab().save(QDir(dir).filePath(QStringLiteral("policies-confirm-save.png")));
    QTest::keyClick(m_page->confirmButton(), Qt::Key_Escape);
    QVERIFY(!m_page->isAsking());
    waitIdle();
    QVERIFY(!stored(QStringLiteral("cf")));
    QCOMPARE(auditLength(), audits);
    QTest::mouseClick(e->saveButton(), Qt::LeftButton);
    confirm();
    QTRY_VERIFY_WITH_TIMEOUT(stored(QStringLiteral("cf")).has_value() && !m_page->busy(), kWaitMs);

    // Grant: the limit, until when, and what applies now and again afterwards.
    m_page->changeKeyLimit("cf:0");
    OverrideEditor *oe = m_page->overrideEditor();
    QTRY_VERIFY_WITH_TIMEOUT(oe->inForceLabel()->text().contains(QStringLiteral("policy “cf”")), kWaitMs);
    setText(oe->limitEdit(), QStringLiteral("50"));
    oe->expiryBox()->setCurrentIndex(2); // 2 hours
    QTest::mouseClick(oe->saveButton(), Qt::LeftButton);
    const QString until = QDateTime::fromMSecsSinceEpoch(kNowUs / 1000).addSecs(7200).toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm"));
    QVERIFY2(m_page->confirmText().startsWith(QStringLiteral("Grant cf:0 a limit of 50 until %1 (for 2 h 00 m)? In force now: ").arg(until)),
             qPrintable(m_page->confirmText()));
    QVERIFY2(m_page->confirmText().contains(QStringLiteral("policy “cf”")), qPrintable(m_page->confirmText()));
    if (const QString dir = qEnvironmentVariable("RATESCOPE_SHOTS"); !dir.isEmpty())
        m_page->grab().save(QDir(dir).filePath(QStringLiteral("policies-confirm-grant.png")));
    QTest::keyClick(m_page->confirmButton(), Qt::Key_Escape);
    waitIdle();
    QVERIFY(!OverrideStore(*m_conn, kNs).get("cf:0"));
    QTest::mouseClick(oe->saveButton(), Qt::LeftButton);
    confirm();
    QTRY_VERIFY_WITH_TIMEOUT(OverrideStore(*m_conn, kNs).get("cf:0").has_value(), kWaitMs);

    // Delete: what it leaves behind.
    m_page->editPolicy(QStringLiteral("cf"));
    waitIdle();
    QTest::mouseClick(e->deleteButton(), Qt::LeftButton);
    QVERIFY2(m_page->confirmText().contains(QStringLiteral("Its pattern matches 6 keys now.")), qPrintable(m_page->confirmText()));
    QCOMPARE(m_page->confirmButton()->text(), QStringLiteral("Delete"));
    confirm();
    QTRY_VERIFY_WITH_TIMEOUT(!stored(QStringLiteral("cf")) && !m_page->busy(), kWaitMs);
    QCOMPARE(auditLength(), audits + 3);
}

// The Shards field: what `policy set --shards N` stores, and back in the editor.
void TestPoliciesPage::shardsField()
{
    openPage();
    m_page->newPolicy();
    PolicyEditor *e = m_page->policyEditor();
    QCOMPARE(e->shardsBox()->value(), 1);
    QCOMPARE(e->shardsBox()->text(), QStringLiteral("not sharded"));
    fillPolicy(QStringLiteral("sh"), QStringLiteral("sh:*"), QStringLiteral("fixed-window"), QStringLiteral("80"), QStringLiteral("1m"));
    e->shardsBox()->setValue(8);
    waitIdle();
    QTest::mouseClick(e->saveButton(), Qt::LeftButton);
    confirm();
    QTRY_VERIFY_WITH_TIMEOUT(stored(QStringLiteral("sh")).has_value() && !m_page->busy(), kWaitMs);
    QCOMPARE(stored(QStringLiteral("sh"))->shards, 8);
    m_page->editPolicy(QStringLiteral("sh"));
    QCOMPARE(e->shardsBox()->value(), 8);
    e->shardsBox()->setValue(1); // not sharded any more
    waitIdle();
    QTest::mouseClick(e->saveButton(), Qt::LeftButton);
    confirm();
    QTRY_VERIFY_WITH_TIMEOUT(stored(QStringLiteral("sh"))->version == 2 && !m_page->busy(), kWaitMs);
    QCOMPARE(stored(QStringLiteral("sh"))->shards, 0);
}

QTEST_MAIN(TestPoliciesPage)
#include "tst_policiespage.moc"
