// The What-if view against real redis-servers, driven through its widgets: a comparison shows
// the same totals as `ratescope-cli simulate --json` on the same trace (a file, and the keys'
// logs), its chart adds up to them and its table lists exactly the denied keys; nothing is
// written to the inspected server, also under the read-only lock; Cancel ends a long run early
// with what was replayed; a file trace works without a connection; a missing redis-server is
// named; the affected keys are bounded and say so; the Policies tab's "Preview on recent
// traffic" hands over the policy as stored and as edited. Models under QAbstractItemModelTester.
#include "redis/connection.h"
#include "displayformat.h"
#include "base/duration.h"
#include "limiters/limiter.h"
#include "policiespage.h"
#include "admin/policy.h"
#include "policyeditor.h"
#include "redisclient.h"
#include "testsupport.h"
#include "chartpalette.h"
#include "linelegend.h"
#include "whatifchart.h"
#include "whatifkeymodel.h"
#include "whatifpage.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLegend>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <map>
#include <set>

using namespace ratescope;
using namespace ratescope::test;
using namespace ratescope::ui;

namespace {

constexpr qint64 kSecond = 1000000;
const QString kNs = QStringLiteral("ratescope:");
constexpr qint64 kTraceStartUs = 1767225600LL * kSecond; // 2026-01-01 00:00:00 UTC
constexpr int kRunWaitMs = 120000;

// The specs every comparison here runs: three algorithms, three shapes of limit.
std::vector<WhatIfPage::Spec> threeSpecs()
{
    return {{QStringLiteral("now"), {Algorithm::SlidingLog, 10, 10 * kSecond, 1}},
            {QStringLiteral("tight"), {Algorithm::Gcra, 5, 10 * kSecond, 1}},
            {QStringLiteral("loose"), {Algorithm::FixedWindow, 40, 60 * kSecond, 1}}};
}

// A deterministic trace of `keys` keys over 30 s: key i sends (i + 1) requests per second,
// so the busy ones go over the tight limits and the quiet ones do not.
QByteArray csvTrace(int keys)
{
    QByteArray out;
    std::vector<std::pair<qint64, QByteArray>> lines;
    for (int i = 0; i < keys; ++i)
        for (qint64 t = 0; t < 30 * kSecond; t += kSecond / (i + 1))
            lines.push_back({kTraceStartUs + t + i * 137, "t:csv:k" + QByteArray::number(i)});
    std::sort(lines.begin(), lines.end());
    for (const auto &[t, key] : lines)
        out += QByteArray::number(t) + ',' + key + '\n';
    return out;
}

struct Totals {
    qint64 requests = 0, allowed = 0, denied = 0, keys = 0, keysDenied = 0;
    bool operator==(const Totals &) const = default;
};

QString describe(const Totals &t)
{
    return QStringLiteral("requests %1 allowed %2 denied %3 keys %4 keys denied %5")
        .arg(t.requests)
        .arg(t.allowed)
        .arg(t.denied)
        .arg(t.keys)
        .arg(t.keysDenied);
}

std::vector<Totals> pageTotals(const SimResult &r)
{
    std::vector<Totals> out;
    for (const SimSpecResult &s : r.specs)
        out.push_back({s.requests, s.allowed, s.denied, s.keys, s.keysDenied});
    return out;
}

void shot(QWidget &w, const QString &name)
{
    // Screens for people to look at, kept out of the repository.
    if (!qEnvironmentVariableIsSet("RATESCOPE_WHATIF_SHOTS"))
        return;
    QCoreApplication::processEvents(); // the chart lays out its axes and legend
    QCoreApplication::processEvents();
    w.grab().save(QStringLiteral("/tmp/whatif-%1.png").arg(name));
}

} // namespace

class TestWhatIfPage : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();
    void cleanup();

    void fileTraceShowsTheCliTotals();
    void logTraceShowsTheCliTotalsAndWritesNothing();
    void cancelEndsALongRunEarly();
    void fileTraceNeedsNoConnection();
    void legendTellsDeniedFromAllowed();
    void missingRedisServerIsNamed();
    void affectedKeysAreBounded();
    void previewFromThePolicyEditor();
    void specsAreCheckedInPlace();

private:
    // Runs what the page is set to, as the Run button does; false when it did not finish.
    bool runPage(WhatIfPage &page);
    std::vector<Totals> cliTotals(const QStringList &traceArgs, const std::vector<WhatIfPage::Spec> &specs);
    void checkResultShown(WhatIfPage &page, const std::vector<Totals> &expected);
    QString writeTrace(const QString &name, const QByteArray &content);

    std::unique_ptr<SandboxServer> m_server;
    std::unique_ptr<RedisClient> m_client;
    QTemporaryDir m_dir;
    std::unique_ptr<WhatIfPage> m_page;
    std::unique_ptr<QAbstractItemModelTester> m_modelTester, m_sortedTester;
};

void TestWhatIfPage::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_server = std::make_unique<SandboxServer>();
    m_server->start();
    Connection c(m_server->options());
    Policy logs;
    logs.name = QStringLiteral("logs");
    logs.match = "t:log:*";
    logs.spec = {Algorithm::SlidingLog, 1000, 3600 * kSecond, 1};
    PolicyStore(c, kNs).set(logs, 0, QStringLiteral("test"));
    // Logs written the way services write them (the sliding log's script), over the last
    // 20 s of the server's clock: key i admitted (i + 1) * 2 requests per second.
    const Reply t = c.command({"TIME"});
    const qint64 now = t[0].bytes().toLongLong() * kSecond + t[1].bytes().toLongLong();
    Limiter limiter(c);
    const LimitSpec roomy{Algorithm::SlidingLog, 1000, 3600 * kSecond, 1};
    for (int i = 0; i < 5; ++i)
        for (qint64 at = now - 20 * kSecond; at < now; at += kSecond / ((i + 1) * 2))
            QVERIFY(limiter.check("t:log:" + QByteArray::number(i), roomy, at + i * 97).allowed);
}

void TestWhatIfPage::cleanupTestCase()
{
    m_server.reset();
}

void TestWhatIfPage::init()
{
    m_client = std::make_unique<RedisClient>(m_server->options());
    m_client->open();
    QTRY_COMPARE_WITH_TIMEOUT(m_client->state(), RedisClient::State::Connected, 10000);
    m_page = std::make_unique<WhatIfPage>();
    m_modelTester = std::make_unique<QAbstractItemModelTester>(m_page->keyModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    m_sortedTester =
        std::make_unique<QAbstractItemModelTester>(m_page->sortedKeys(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    m_page->setClient(m_client.get(), m_server->options(), kNs.toUtf8());
    m_page->resize(850, 700);
    m_page->show();
}

void TestWhatIfPage::cleanup()
{
    m_sortedTester.reset();
    m_modelTester.reset();
    m_page.reset();
    m_client.reset();
}

QString TestWhatIfPage::writeTrace(const QString &name, const QByteArray &content)
{
    QFile f(m_dir.filePath(name));
    if (!f.open(QIODevice::WriteOnly) || f.write(content) != content.size())
        qFatal("cannot write the trace");
    return f.fileName();
}

bool TestWhatIfPage::runPage(WhatIfPage &page)
{
    QSignalSpy finished(&page, &WhatIfPage::finished);
    if (!page.runButton()->isEnabled()) {
        qWarning("Run is disabled: %s", qPrintable(page.whyNotRunnable()));
        return false;
    }
    QTest::mouseClick(page.runButton(), Qt::LeftButton);
    if (!page.isRunning() || !page.cancelButton()->isEnabled())
        return false;
    return finished.wait(kRunWaitMs) || !finished.isEmpty();
}

std::vector<Totals> TestWhatIfPage::cliTotals(const QStringList &traceArgs, const std::vector<WhatIfPage::Spec> &specs)
{
    // The first spec is the CLI's baseline (--algo/--limit/--window), the others --compare.
    QStringList args{QStringLiteral("--json")};
    args << traceArgs;
    const LimitSpec &base = specs.front().spec;
    args << QStringLiteral("--algo") << algorithmName(base.algorithm) << QStringLiteral("--limit") << QString::number(base.limit)
         << QStringLiteral("--window") << formatDurationUs(base.windowUs);
    for (size_t i = 1; i < specs.size(); ++i)
        args << QStringLiteral("--compare")
             << QStringLiteral("%1:%2/%3")
                    .arg(algorithmName(specs[i].spec.algorithm))
                    .arg(specs[i].spec.limit)
                    .arg(formatDurationUs(specs[i].spec.windowUs));
    const CliResult r = runCli(args, {}, kRunWaitMs);
    if (r.exitCode != 0)
        qWarning("ratescope-cli %s: exit %d: %s", qPrintable(args.join(QLatin1Char(' '))), r.exitCode, r.err.constData());
    const QJsonObject o = QJsonDocument::fromJson(r.out).object();
    auto totals = [](const QJsonObject &s) {
        auto n = [&s](const char *name) { return qint64(s.value(QLatin1String(name)).toInteger(-1)); };
        return Totals{n("requests"), n("allowed"), n("denied"), n("keys"), n("keys_denied")};
    };
    std::vector<Totals> out;
    if (o.isEmpty())
        return out;
    out.push_back(totals(o));
    for (const QJsonValue &v : o.value(QStringLiteral("compare")).toArray())
        out.push_back(totals(v.toObject()));
    return out;
}

void TestWhatIfPage::checkResultShown(WhatIfPage &page, const std::vector<Totals> &expected)
{
    const auto &outcome = page.lastOutcome();
    QVERIFY(outcome);
    QVERIFY2(outcome->result, qPrintable(outcome->error));
    const SimResult &r = *outcome->result;
    QVERIFY(!r.cancelled);
    const std::vector<Totals> shown = pageTotals(r);
    QCOMPARE(shown.size(), expected.size());
    for (size_t i = 0; i < shown.size(); ++i)
        QVERIFY2(shown[i] == expected[i],
                 qPrintable(QStringLiteral("spec %1: page %2, cli %3").arg(i).arg(describe(shown[i]), describe(expected[i]))));

    // One summary line per spec, with its figures as the operator reads them.
    const QStringList lines = page.summaryLines();
    QCOMPARE(lines.size(), qsizetype(expected.size()));
    for (size_t i = 0; i < shown.size(); ++i) {
        QVERIFY2(lines[qsizetype(i)].startsWith(page.lastNames()[qsizetype(i)]), qPrintable(lines[qsizetype(i)]));
        QVERIFY2(lines[qsizetype(i)].contains(formatCount(shown[i].requests)), qPrintable(lines[qsizetype(i)]));
        if (shown[i].keysDenied > 0)
            QVERIFY2(lines[qsizetype(i)].contains(formatCount(shown[i].denied) + QStringLiteral(" of ")), qPrintable(lines[qsizetype(i)]));
    }

    // The chart: one pair of lines per spec, adding up to the totals.
    QCOMPARE(page.chart()->seriesPairs(), int(expected.size()));
    const auto drawn = page.chart()->drawnTotals();
    for (size_t i = 0; i < drawn.size(); ++i) {
        QCOMPARE(drawn[i].allowed, shown[i].allowed);
        QCOMPARE(drawn[i].denied, shown[i].denied);
    }

    // The table: exactly the keys some spec denied, each with its denials per spec, summing
    // to the totals.
    qint64 mostKeysDenied = 0;
    for (const Totals &t : shown)
        mostKeysDenied = std::max(mostKeysDenied, t.keysDenied);
    WhatIfKeyModel *model = page.keyModel();
    QVERIFY(model->rowCount() >= mostKeysDenied);
    for (int spec = 0; spec < int(shown.size()); ++spec) {
        qint64 denied = 0, keys = 0;
        for (int row = 0; row < model->rowCount(); ++row) {
            const qint64 d = model->index(row, WhatIfKeyModel::deniedColumn(spec)).data(WhatIfKeyModel::SortRole).toLongLong();
            denied += d;
            keys += d > 0;
        }
        QCOMPARE(denied, shown[size_t(spec)].denied);
        QCOMPARE(keys, shown[size_t(spec)].keysDenied);
    }
    // Sorted by the proposed (last) spec's denials, most first; sortable by any column.
    QSortFilterProxyModel *sorted = page.sortedKeys();
    const int last = WhatIfKeyModel::deniedColumn(int(shown.size()) - 1);
    for (int row = 1; row < sorted->rowCount(); ++row)
        QVERIFY(sorted->index(row - 1, last).data(WhatIfKeyModel::SortRole).toLongLong() >=
                sorted->index(row, last).data(WhatIfKeyModel::SortRole).toLongLong());
    page.keyView()->sortByColumn(WhatIfKeyModel::RequestsColumn, Qt::AscendingOrder);
    for (int row = 1; row < sorted->rowCount(); ++row)
        QVERIFY(sorted->index(row - 1, WhatIfKeyModel::RequestsColumn).data(WhatIfKeyModel::SortRole).toLongLong() <=
                sorted->index(row, WhatIfKeyModel::RequestsColumn).data(WhatIfKeyModel::SortRole).toLongLong());
}

void TestWhatIfPage::fileTraceShowsTheCliTotals()
{
    const QString path = writeTrace(QStringLiteral("trace.csv"), csvTrace(8));
    WhatIfTrace t;
    t.source = WhatIfTrace::Source::CsvFile;
    t.path = path;
    m_page->setTrace(t);
    m_page->setSpecs(threeSpecs());
    QVERIFY(runPage(*m_page));
    const auto cli = cliTotals({QStringLiteral("simulate"), QStringLiteral("--trace"), path}, threeSpecs());
    QCOMPARE(cli.size(), size_t(3));
    checkResultShown(*m_page, cli);
    QVERIFY(cli[1].denied > 0);     // the tight spec denies
    QVERIFY(cli[2].keysDenied > 0); // the loose one the busy keys only (the quietest sends 30)
    QVERIFY(cli[2].keysDenied < 8);
    // A file is no log: no lower-bound note.
    QVERIFY(m_page->noteText().isEmpty());
    QVERIFY(!m_page->lastOutcome()->result->admittedOnly);
    shot(*m_page, QStringLiteral("file"));
}

void TestWhatIfPage::logTraceShowsTheCliTotalsAndWritesNothing()
{
    Connection c(m_server->options());
    const QByteArray before = keyspaceSnapshot(c);
    // Under the read-only lock: replaying writes nothing to the inspected server.
    m_client->setReadOnly(true);
    WhatIfTrace t;
    t.source = WhatIfTrace::Source::LogKeys;
    t.glob = "t:log:*";
    m_page->setTrace(t);
    m_page->setSpecs(threeSpecs());
    QVERIFY(runPage(*m_page));
    const auto cli = cliTotals({QStringLiteral("--url"), m_server->url(), QStringLiteral("--read-only"), QStringLiteral("simulate"),
                                QStringLiteral("--from-keys"), QStringLiteral("t:log:*")},
                               threeSpecs());
    QCOMPARE(cli.size(), size_t(3));
    checkResultShown(*m_page, cli);
    QCOMPARE(cli[0].keys, 5);
    QVERIFY(m_page->lastOutcome()->result->admittedOnly);
    QVERIFY2(m_page->noteText().contains(QStringLiteral("lower bound")), qPrintable(m_page->noteText()));
    QCOMPARE(keyspaceSnapshot(c), before);
    shot(*m_page, QStringLiteral("logs"));
}

void TestWhatIfPage::cancelEndsALongRunEarly()
{
    // A trace far longer than the run is allowed to take here: cancelled at the first report.
    const QString path = writeTrace(QStringLiteral("long.csv"), csvTrace(200));
    WhatIfTrace t;
    t.source = WhatIfTrace::Source::CsvFile;
    t.path = path;
    m_page->setTrace(t);
    m_page->setSpecs(threeSpecs());
    QSignalSpy finished(m_page.get(), &WhatIfPage::finished);
    QTest::mouseClick(m_page->runButton(), Qt::LeftButton);
    QVERIFY(m_page->isRunning());
    QVERIFY(!m_page->runButton()->isEnabled());
    QTest::mouseClick(m_page->cancelButton(), Qt::LeftButton);
    QVERIFY(finished.wait(kRunWaitMs) || !finished.isEmpty());
    QVERIFY(!m_page->isRunning());
    const auto &outcome = m_page->lastOutcome();
    QVERIFY(outcome && outcome->result);
    QVERIFY(outcome->result->cancelled);
    QVERIFY2(m_page->statusText().startsWith(QStringLiteral("Cancelled")), qPrintable(m_page->statusText()));
    const qint64 total = csvTrace(200).count('\n');
    QVERIFY2(outcome->result->specs.empty() || outcome->result->specs[0].requests < total,
             qPrintable(QString::number(outcome->result->specs[0].requests)));
    QVERIFY(m_page->runButton()->isEnabled()); // and it can run again
}

void TestWhatIfPage::fileTraceNeedsNoConnection()
{
    m_page->setClient(nullptr, {}, {});
    WhatIfTrace t;
    t.source = WhatIfTrace::Source::LogKeys;
    t.glob = "t:log:*";
    m_page->setTrace(t);
    m_page->setSpecs(threeSpecs());
    QVERIFY(!m_page->runButton()->isEnabled());
    QVERIFY2(m_page->whyNotRunnable().contains(QStringLiteral("Not connected")), qPrintable(m_page->whyNotRunnable()));
    t.source = WhatIfTrace::Source::CsvFile;
    t.path = writeTrace(QStringLiteral("small.csv"), csvTrace(3));
    m_page->setTrace(t);
    QVERIFY(runPage(*m_page));
    QVERIFY(m_page->lastOutcome()->result);
    QCOMPARE(m_page->lastOutcome()->result->specs[0].keys, 3);
}

// The legend draws each spec's allowed line solid and its denied line dashed, as the chart does,
// in the spec's colour: QtCharts' own legend drew both as the same short solid stub.
void TestWhatIfPage::legendTellsDeniedFromAllowed()
{
    WhatIfTrace t;
    t.source = WhatIfTrace::Source::CsvFile;
    t.path = writeTrace(QStringLiteral("small.csv"), csvTrace(3));
    m_page->setTrace(t);
    m_page->setSpecs(threeSpecs());
    m_page->resize(700, 700); // the What if tab's width in a 1024 px window
    QVERIFY(runPage(*m_page));
    QCoreApplication::processEvents(); // the chart lays out its axes and legend

    WhatIfChart *view = m_page->chart();
    QVERIFY(!view->chart()->legend()->isVisible());
    const LineLegend *legend = view->lineLegend();
    QCOMPARE(legend->groups().size(), size_t(3));
    const QImage image = view->grab().toImage();
    // The stretches of the sample's middle row drawn in the spec's colour.
    auto dashes = [&](int spec, int line) {
        const QRect r = view->mapFromScene(legend->mapRectToScene(legend->sampleRect(spec, line))).boundingRect();
        const QColor want = seriesColor(spec);
        int runs = 0;
        bool on = false;
        for (int x = r.left(); x <= r.right(); ++x) {
            const QColor c = image.pixelColor(x, r.center().y());
            const bool inColour =
                std::abs(c.red() - want.red()) + std::abs(c.green() - want.green()) + std::abs(c.blue() - want.blue()) < 60;
            runs += inColour && !on;
            on = inColour;
        }
        return runs;
    };
    for (int spec = 0; spec < 3; ++spec) {
        const LineLegend::Group &group = legend->groups()[size_t(spec)];
        QCOMPARE(group.title, threeSpecs()[size_t(spec)].name);
        QCOMPARE(group.lines.size(), size_t(2));
        QCOMPARE(group.lines[0].label, QStringLiteral("allowed"));
        QCOMPARE(group.lines[1].label, QStringLiteral("denied"));
        QCOMPARE(dashes(spec, 0), 1); // solid
        QVERIFY2(dashes(spec, 1) >= 2, qPrintable(QStringLiteral("spec %1: %2").arg(spec).arg(dashes(spec, 1))));
        // Above the plot, not over it.
        QVERIFY(legend->mapRectToScene(legend->sampleRect(spec, 1)).bottom() < view->chart()->plotArea().top());
    }
    shot(*m_page, QStringLiteral("legend"));
}

void TestWhatIfPage::missingRedisServerIsNamed()
{
    WhatIfTrace t;
    t.source = WhatIfTrace::Source::CsvFile;
    t.path = writeTrace(QStringLiteral("small.csv"), csvTrace(3));
    m_page->setTrace(t);
    m_page->setSpecs(threeSpecs());
    const QByteArray path = qgetenv("PATH");
    QTemporaryDir empty;
    qputenv("PATH", empty.path().toUtf8()); // no redis-server to start the sandbox with
    const bool ran = runPage(*m_page);
    qputenv("PATH", path);
    QVERIFY(ran);
    QVERIFY(m_page->lastOutcome() && !m_page->lastOutcome()->result);
    QVERIFY2(m_page->statusText().contains(QStringLiteral("redis-server")), qPrintable(m_page->statusText()));
    QVERIFY(m_page->runButton()->isEnabled());
}

void TestWhatIfPage::affectedKeysAreBounded()
{
    // More denied keys than the table keeps: each key sends two requests, a limit of one.
    QByteArray trace;
    const int keys = int(WhatIfRun::kMaxKeys) + 25;
    for (int round = 0; round < 2; ++round)
        for (int i = 0; i < keys; ++i)
            trace += QByteArray::number(kTraceStartUs + (round * keys + i) * 10) + ",t:many:" + QByteArray::number(i) + '\n';
    WhatIfTrace t;
    t.source = WhatIfTrace::Source::CsvFile;
    t.path = writeTrace(QStringLiteral("many.csv"), trace);
    m_page->setTrace(t);
    m_page->setSpecs({{QStringLiteral("one"), {Algorithm::FixedWindow, 1, 3600 * kSecond, 1}}});
    QVERIFY(runPage(*m_page));
    const auto &outcome = m_page->lastOutcome();
    QVERIFY2(outcome && outcome->result, outcome ? qPrintable(outcome->error) : "");
    QCOMPARE(outcome->result->specs[0].keysDenied, qint64(keys));
    QCOMPARE(outcome->affectedKeys, qint64(keys));
    QCOMPARE(m_page->keyModel()->rowCount(), int(WhatIfRun::kMaxKeys));
    const QString title = m_page->findChild<QLabel *>(QStringLiteral("keysTitle"))->text();
    QVERIFY2(title.contains(formatCount(keys)) && title.contains(formatCount(qint64(WhatIfRun::kMaxKeys))), qPrintable(title));
}

void TestWhatIfPage::previewFromThePolicyEditor()
{
    PoliciesPage policies;
    policies.show(); // a hidden page reads nothing until shown
    policies.setClient(m_client.get(), kNs.toUtf8());
    QTRY_VERIFY_WITH_TIMEOUT(policies.isLoaded(), 10000);
    m_client->setReadOnly(true); // replaying changes nothing: offered under the lock too
    policies.editPolicy(QStringLiteral("logs"));
    PolicyEditor *editor = policies.policyEditor();
    editor->limitEdit()->setText(QStringLiteral("3"));
    QPushButton *preview = editor->previewTrafficButton();
    QVERIFY(preview->isEnabled());
    QVERIFY(!editor->saveButton()->isEnabled());
    int asked = 0;
    std::optional<Policy> stored;
    Policy edited;
    connect(&policies, &PoliciesPage::previewRequested, this, [&](const std::optional<Policy> &s, const Policy &e) {
        ++asked;
        stored = s;
        edited = e;
    });
    QTest::mouseClick(preview, Qt::LeftButton);
    QCOMPARE(asked, 1);
    QVERIFY(stored);
    QCOMPARE(stored->spec.limit, 1000);
    QCOMPARE(edited.spec.limit, 3);
    QCOMPARE(edited.match, QByteArray("t:log:*"));

    // The view takes them: the matched keys' logs, "now" against "proposed", run at once.
    QSignalSpy finished(m_page.get(), &WhatIfPage::finished);
    m_page->previewPolicy(stored, edited);
    QVERIFY(m_page->isRunning());
    QCOMPARE(m_page->trace().glob, QByteArray("t:log:*"));
    const auto specs = m_page->specs();
    QCOMPARE(specs.size(), size_t(2));
    QCOMPARE(specs[0].spec, stored->spec);
    QCOMPARE(specs[1].spec, edited.spec);
    QVERIFY(finished.wait(kRunWaitMs) || !finished.isEmpty());
    const auto &outcome = m_page->lastOutcome();
    QVERIFY2(outcome && outcome->result, outcome ? qPrintable(outcome->error) : "");
    QCOMPARE(outcome->result->specs[0].denied, 0); // the logs hold what the policy admitted
    QVERIFY(outcome->result->specs[1].denied > 0);
    QCOMPARE(outcome->result->specs[1].keysDenied, 5);
}

void TestWhatIfPage::specsAreCheckedInPlace()
{
    WhatIfTrace t;
    t.source = WhatIfTrace::Source::CsvFile;
    t.path = writeTrace(QStringLiteral("small.csv"), csvTrace(3));
    m_page->setTrace(t);
    m_page->setSpecs(threeSpecs());
    QVERIFY(m_page->runButton()->isEnabled());
    // Each spec row is typed into like an operator would; a bad window is named in place.
    auto edits = m_page->findChildren<QLineEdit *>();
    QLineEdit *window = nullptr;
    for (QLineEdit *e : edits)
        if (e->objectName() == QStringLiteral("window") && e->text() == QStringLiteral("10s")) {
            window = e;
            break;
        }
    QVERIFY(window);
    window->setText(QStringLiteral("ten seconds"));
    QVERIFY(!m_page->runButton()->isEnabled());
    QVERIFY2(m_page->whyNotRunnable().startsWith(QStringLiteral("now: ")), qPrintable(m_page->whyNotRunnable()));
    QVERIFY(m_page->specs().empty());
    window->setText(QStringLiteral("10s"));
    QVERIFY(m_page->runButton()->isEnabled());
    // Two specs of one name cannot be told apart in the results.
    m_page->setSpecs({{QStringLiteral("x"), {Algorithm::Gcra, 5, kSecond, 1}}, {QStringLiteral("x"), {Algorithm::Gcra, 6, kSecond, 1}}});
    QVERIFY(!m_page->runButton()->isEnabled());
    QVERIFY2(m_page->whyNotRunnable().contains(QStringLiteral("named x")), qPrintable(m_page->whyNotRunnable()));
    // At most kMaxSpecs.
    QPushButton *add = m_page->findChild<QPushButton *>(QStringLiteral("addSpec"));
    for (int i = 2; i < WhatIfPage::kMaxSpecs; ++i)
        QTest::mouseClick(add, Qt::LeftButton);
    QVERIFY(!add->isEnabled());
}

QTEST_MAIN(TestWhatIfPage)
#include "tst_whatifpage.moc"
