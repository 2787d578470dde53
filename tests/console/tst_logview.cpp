// The sliding log's view against a real server with explicit clocks: our own log with weighted
// costs and a foreign log with ms scores drawn point for point (rolling count, entries, limit,
// capacity markers, the expired part), a 200,000-entry log drawn from server-side bucket counts,
// the entries table's pages and time filter (under QAbstractItemModelTester), no limits, reads
// that never overlap, and a lost connection that stops the chart looking live.
#include "redis/connection.h"
#include "displayformat.h"
#include "limiters/limiter.h"
#include "logentriesmodel.h"
#include "logview.h"
#include "redisclient.h"
#include "redis/sandboxserver.h"

#include <QtCharts/QAreaSeries>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QHeaderView>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>

#include <cmath>

using namespace ratescope;
using namespace ratescope::ui;

namespace {

constexpr qint64 kSecond = 1000000;
constexpr qint64 kNow = 1780315230LL * kSecond; // 2026-06-01T12:00:30Z

QByteArray msScore(qint64 t)
{
    return QByteArray::number(t / 1000) + "." + QByteArray::number(t % 1000).rightJustified(3, '0');
}

// "<ms>-<random>" members, as a popular Node.js limiter writes them.
void writeForeign(Connection &c, const QByteArray &key, const std::vector<qint64> &times)
{
    std::vector<Command> writes;
    for (size_t i = 0; i < times.size(); i += 1000) {
        Command z{"ZADD", key};
        for (size_t j = i; j < std::min(times.size(), i + 1000); ++j) {
            z.push_back(msScore(times[j]));
            z.push_back(QByteArray::number(times[j] / 1000) + "-0." + QByteArray::number(qulonglong(j) * 2654435761ULL % 1000000007ULL));
        }
        writes.push_back(std::move(z));
    }
    for (const Reply &r : c.pipeline(writes))
        if (r.isError())
            qFatal("%s", qPrintable(r.text()));
}

QList<QPointF> points(QXYSeries *s)
{
    return s->points();
}

// `count` entry times over the last 20 s before kNow, in waves (three busier stretches per 20 s).
std::vector<qint64> waves(int count)
{
    std::vector<qint64> times;
    times.reserve(size_t(count));
    for (int i = 0; i < count; ++i) {
        const double u = double(i) / count;
        const qint64 offset = qint64(std::floor(double(20 * kSecond - 1) * (u + 0.08 * std::sin(6 * M_PI * u))));
        times.push_back(kNow - 20 * kSecond + 1 + std::clamp<qint64>(offset, 0, 20 * kSecond - 1));
    }
    return times;
}

// Where a series' value `y` is drawn, as a fraction of the plot's height (its vertical axis starts at 0).
double heightOn(QAbstractSeries *series, double y)
{
    for (QAbstractAxis *axis : series->attachedAxes())
        if (axis->orientation() == Qt::Vertical)
            return y / static_cast<QValueAxis *>(axis)->max();
    return -1;
}

} // namespace

class TestLogView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void ownLogWithWeightedCosts();
    void ownLogWithHistory();
    void foreignMsLog();
    void bigLogIsBucketed();
    void bigLogBucketsClearOfTheLimit_data();
    void bigLogBucketsClearOfTheLimit();
    void entriesTablePagesAndFilter();
    void withoutLimits();
    void readsNeverOverlap();
    void lostConnection();

private:
    // A view on key, its first read for this context done.
    std::unique_ptr<LogView> open(const QByteArray &key, const std::optional<LimitSpec> &spec, ScoreUnit unit, qint64 now = kNow);
    void waitRead(LogView &view);
    void shot(LogView &view, const QString &name, bool dark = false);

    SandboxServer m_server;
    std::unique_ptr<Connection> m_conn;
    std::unique_ptr<RedisClient> m_client;
};

void TestLogView::initTestCase()
{
    m_server.start();
    m_conn = std::make_unique<Connection>(m_server.options());
    m_client = std::make_unique<RedisClient>(m_server.options());
    m_client->open();
    QTRY_COMPARE_WITH_TIMEOUT(m_client->state(), RedisClient::State::Connected, 10000);
}

void TestLogView::init()
{
    m_conn->command({"FLUSHALL"});
}

std::unique_ptr<LogView> TestLogView::open(const QByteArray &key, const std::optional<LimitSpec> &spec, ScoreUnit unit, qint64 now)
{
    auto view = std::make_unique<LogView>(m_client.get(), key);
    view->resize(1100, 720);
    QSignalSpy loaded(view.get(), &LogView::loaded);
    view->setContext(spec, unit, now);
    [&] { QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 1, 10000); }();
    waitRead(*view);
    return view;
}

void TestLogView::waitRead(LogView &view)
{
    QTRY_VERIFY_WITH_TIMEOUT(!view.isReading(), 10000);
}

void TestLogView::shot(LogView &view, const QString &name, bool dark)
{
    // Screens for a person to look at: only when asked (RATESCOPE_SHOT_DIR), never in the repository.
    const QString dir = qEnvironmentVariable("RATESCOPE_SHOT_DIR");
    if (dir.isEmpty())
        return;
    if (dark) {
        QPalette p;
        p.setColor(QPalette::Window, QColor(0x1e1f22));
        p.setColor(QPalette::WindowText, QColor(0xdfe1e5));
        p.setColor(QPalette::Base, QColor(0x2b2d30));
        p.setColor(QPalette::AlternateBase, QColor(0x313335));
        p.setColor(QPalette::Text, QColor(0xdfe1e5));
        p.setColor(QPalette::Button, QColor(0x3c3f41));
        p.setColor(QPalette::ButtonText, QColor(0xdfe1e5));
        p.setColor(QPalette::Mid, QColor(0x5a5d63));
        view.setPalette(p);
    }
    view.resize(1280, 800);
    view.show();
    QCoreApplication::processEvents();
    view.grab().save(dir + QStringLiteral("/logview-%1.png").arg(name));
    view.hide();
    if (dark)
        view.setPalette(QPalette());
}

void TestLogView::ownLogWithWeightedCosts()
{
    // limit 8 per 10 s, policy cost 3; admitted at -11.5 s (2), -9 s (4), -5 s (1), -2.5 s (1).
    const LimitSpec admit{Algorithm::SlidingLog, 8, 10 * kSecond, 1};
    Limiter limiter(*m_conn);
    const std::pair<qint64, qint64> admitted[] = {{-11500000, 2}, {-9 * kSecond, 4}, {-5 * kSecond, 1}, {-2500000, 1}};
    for (const auto &[at, cost] : admitted) {
        LimitSpec s = admit;
        s.cost = cost;
        QVERIFY(limiter.check("own", s, kNow + at).allowed);
    }
    LimitSpec policy = admit;
    policy.cost = 3;
    auto view = open("own", policy, ScoreUnit::Microseconds);
    QVERIFY(view->isLoaded());
    QVERIFY(!view->isBucketed());
    QCOMPARE(view->titleText(), QStringLiteral("Sliding log: 6 of 8 used in the last 10 s"));
    QCOMPARE(view->axisUnitUs(), kSecond);
    auto x = [&](qint64 rel) { return view->xOf(kNow + rel); };
    QCOMPARE(x(-9 * kSecond), -9.0);

    // used(t): 2 at the axis start (the -11.5 s entry), up at each admission, down when the
    // -11.5 s entry expires at -1.5 s.
    const QList<QPointF> used{{x(-10 * kSecond), 2}, {x(-9 * kSecond), 2}, {x(-9 * kSecond), 6}, {x(-5 * kSecond), 6}, {x(-5 * kSecond), 7},
                              {x(-2500000), 7},      {x(-2500000), 8},     {x(-1500000), 8},     {x(-1500000), 6},     {0, 6}};
    QCOMPARE(points(view->usedSeries()), used);
    QCOMPARE(points(view->entrySeries()), (QList<QPointF>{{-9, 6}, {-5, 7}, {-2.5, 8}}));
    QCOMPARE(points(view->limitSeries()).size(), 2);
    QCOMPARE(points(view->limitSeries()).front().y(), 8.0);
    QVERIFY(view->limitSeries()->isVisible());
    // Cost 1 fits now (6 + 1 <= 8); the policy's cost 3 once the -9 s entry (cost 4) expires.
    QCOMPARE(points(view->capacityForOneSeries()), (QList<QPointF>{{0, 0}, {0, 8}}));
    QCOMPARE(points(view->capacityForCostSeries()), (QList<QPointF>{{1, 0}, {1, 8}}));
    QCOMPARE(view->capacityForCostSeries()->name(), QStringLiteral("cost 3 fits again in 1.0 s"));
    QVERIFY(view->timeAxis()->max() > 1.0);
    QVERIFY(!view->expiredSeries()->isVisible()); // one window shown: nothing expired on the axis
    QVERIFY(view->isShownLive());
    QVERIFY(view->entriesRead() <= LogView::kEntryCap);
    // The table lists the three entries on the axis, oldest first, with their costs.
    QCOMPARE(view->entriesModel()->rowCount(), 3);
    QCOMPARE(view->entriesModel()->index(0, LogEntriesModel::Cost).data().toInt(), 4);
    QCOMPARE(view->entriesModel()->index(0, LogEntriesModel::Age).data().toString(), QStringLiteral("9.0 s"));
    QCOMPARE(view->entriesModel()->index(0, LogEntriesModel::Member).data().toString(), QStringLiteral("16:4"));
    shot(*view, QStringLiteral("weighted"));
    shot(*view, QStringLiteral("weighted-dark"), true);
}

void TestLogView::ownLogWithHistory()
{
    const LimitSpec admit{Algorithm::SlidingLog, 8, 10 * kSecond, 1};
    Limiter limiter(*m_conn);
    for (const auto &[at, cost] : {std::pair<qint64, qint64>{-11500000, 2}, {-9 * kSecond, 4}, {-5 * kSecond, 1}, {-2500000, 1}}) {
        LimitSpec s = admit;
        s.cost = cost;
        QVERIFY(limiter.check("own", s, kNow + at).allowed);
    }
    LimitSpec policy = admit;
    policy.cost = 3;
    auto view = open("own", policy, ScoreUnit::Microseconds);
    view->setHistoryShown(true);
    waitRead(*view);
    QCOMPARE(view->timeAxis()->min(), -20.0);
    QCOMPARE(
        points(view->usedSeries()),
        (QList<QPointF>{
            {-20, 0}, {-11.5, 0}, {-11.5, 2}, {-9, 2}, {-9, 6}, {-5, 6}, {-5, 7}, {-2.5, 7}, {-2.5, 8}, {-1.5, 8}, {-1.5, 6}, {0, 6}}));
    QCOMPARE(points(view->entrySeries()), (QList<QPointF>{{-11.5, 2}, {-9, 6}, {-5, 7}, {-2.5, 8}}));
    QVERIFY(view->expiredSeries()->isVisible());
    const QList<QPointF> shaded = points(view->expiredSeries()->upperSeries());
    QCOMPARE(shaded.front().x(), -20.0);
    QCOMPARE(shaded.back().x(), -10.0);
    shot(*view, QStringLiteral("weighted-history"));
    shot(*view, QStringLiteral("weighted-history-dark"), true);
}

void TestLogView::foreignMsLog()
{
    // limit 4 per 10 s; entries at -12, -10 (exactly one window: expired), -8, -6.5, -3 and -0.001 s.
    writeForeign(*m_conn, "ext:api",
                 {kNow - 12 * kSecond, kNow - 10 * kSecond, kNow - 8 * kSecond, kNow - 6500000, kNow - 3 * kSecond, kNow - 1000});
    auto view = open("ext:api", LimitSpec{Algorithm::SlidingLog, 4, 10 * kSecond, 1}, ScoreUnit::Milliseconds);
    QCOMPARE(view->titleText(), QStringLiteral("Sliding log: 4 of 4 used in the last 10 s"));
    QCOMPARE(points(view->usedSeries()), (QList<QPointF>{{-10, 2},
                                                         {-8, 2},
                                                         {-8, 3},
                                                         {-6.5, 3},
                                                         {-6.5, 4},
                                                         {-3, 4},
                                                         {-3, 5},
                                                         {-2, 5},
                                                         {-2, 4},
                                                         {-0.001, 4},
                                                         {-0.001, 5},
                                                         {0, 5},
                                                         {0, 4},
                                                         {0, 4}}));
    QCOMPARE(points(view->entrySeries()), (QList<QPointF>{{-8, 3}, {-6.5, 4}, {-3, 5}, {-0.001, 5}}));
    // Full: a request of cost 1 waits until the -8 s entry leaves the window.
    QCOMPARE(points(view->capacityForOneSeries()), (QList<QPointF>{{2, 0}, {2, 4}}));
    QVERIFY(!view->capacityForCostSeries()->isVisible()); // the policy's cost is 1
    QCOMPARE(view->entriesModel()->rowCount(), 4);
    QCOMPARE(view->entriesModel()->index(3, LogEntriesModel::Age).data().toString(), QStringLiteral("1 ms"));
    QCOMPARE(view->entriesModel()->index(0, LogEntriesModel::Cost).data().toInt(), 1);
    shot(*view, QStringLiteral("foreign-ms"));
    view->setHistoryShown(true);
    waitRead(*view);
    QCOMPARE(points(view->entrySeries()).front(), QPointF(-12, 1)); // (-22 s, -12 s] held nothing before it
    shot(*view, QStringLiteral("foreign-ms-history"));
}

void TestLogView::bigLogIsBucketed()
{
    // 200,000 entries over the last 20 s, in waves (three busier stretches per 20 s).
    const std::vector<qint64> times = waves(200000);
    std::vector<qint64> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    auto between = [&](qint64 from, qint64 to) { // entries with from <= t < to, from the written times
        return qint64(std::lower_bound(sorted.begin(), sorted.end(), to) - std::lower_bound(sorted.begin(), sorted.end(), from));
    };
    const qint64 inWindow = between(kNow - 10 * kSecond + 1, kNow + 1);
    writeForeign(*m_conn, "ext:big", times);
    auto view = open("ext:big", LimitSpec{Algorithm::SlidingLog, 150000, 10 * kSecond, 1}, ScoreUnit::Milliseconds);
    QVERIFY(view->isBucketed());
    QVERIFY2(view->entriesRead() <= LogView::kEntryCap, qPrintable(QString::number(view->entriesRead())));
    QCOMPARE(view->lastRead()->window.entriesRead, 0);
    const auto &buckets = view->lastRead()->window.buckets;
    QCOMPARE(int(buckets.size()), 2 * LogView::kBucketsPerWindow);
    qint64 sum = 0;
    for (const LogBucket &b : buckets) {
        const qint64 zcount = m_conn
                                  ->command({"ZCOUNT", "ext:big", scoreBoundText(scoreBound(b.fromUs, ScoreUnit::Milliseconds)),
                                             "(" + scoreBoundText(scoreBound(b.toUs, ScoreUnit::Milliseconds))})
                                  .integer();
        QCOMPARE(b.count, zcount);
        QCOMPARE(b.count, between(b.fromUs, b.toUs));
        sum += b.count;
    }
    QCOMPARE(sum, qint64(times.size())); // read from now - 20 s + 1 µs, where the oldest is
    // The drawn bucket series holds each count of the axis's buckets twice (a step).
    const QList<QPointF> drawn = points(view->bucketSeries());
    QCOMPARE(drawn.size(), 2 * LogView::kBucketsPerWindow);
    for (int i = 0; i < LogView::kBucketsPerWindow; ++i)
        QCOMPARE(qint64(drawn[2 * i].y()), buckets[size_t(LogView::kBucketsPerWindow + i)].count);
    // The rolling count at now is the entries in the window; so says the title.
    QCOMPARE(qint64(points(view->usedSeries()).back().y()), inWindow);
    QCOMPARE(view->titleText(), QStringLiteral("Sliding log: %1 of 150,000 used in the last 10 s").arg(formatCount(inWindow)));
    QVERIFY(view->statusText().contains(QStringLiteral("no entries downloaded")));
    QCOMPARE(view->entriesModel()->rowCount(), view->pageSize());
    shot(*view, QStringLiteral("bucketed"));
    shot(*view, QStringLiteral("bucketed-dark"), true);
    view->setHistoryShown(true);
    waitRead(*view);
    QVERIFY(view->entriesRead() <= LogView::kEntryCap);
    shot(*view, QStringLiteral("bucketed-history"));
}

void TestLogView::bigLogBucketsClearOfTheLimit_data()
{
    QTest::addColumn<qint64>("limit");
    // About 30,000 entries in the window: the limit line near the top, at mid-height (a limit
    // lowered under the count), and low.
    QTest::newRow("limit over the count") << qint64(45000);
    QTest::newRow("count over a lowered limit") << qint64(20000);
    QTest::newRow("count far over the limit") << qint64(5000);
}

// The per-bucket counts have an axis of their own. With the same headroom on both axes the
// tallest bucket was drawn exactly at the limit line's height (the limit being the left axis's
// top): each hid the other. It is drawn clear of it, under it, whatever the limit.
void TestLogView::bigLogBucketsClearOfTheLimit()
{
    QFETCH(qint64, limit);
    writeForeign(*m_conn, "ext:big", waves(60000));
    auto view = open("ext:big", LimitSpec{Algorithm::SlidingLog, limit, 10 * kSecond, 1}, ScoreUnit::Milliseconds);
    QVERIFY(view->isBucketed());
    QVERIFY(view->limitSeries()->isVisible());
    QVERIFY(view->bucketArea()->isVisible());
    double peak = 0;
    for (const QPointF &p : points(view->bucketSeries()))
        peak = std::max(peak, p.y());
    const double limitHeight = heightOn(view->limitSeries(), double(limit));
    const double peakHeight = heightOn(view->bucketArea(), peak);
    QVERIFY2(limitHeight > 0 && limitHeight <= 1 && peakHeight > 0 && peakHeight <= 0.6 + 1e-9,
             qPrintable(QStringLiteral("limit at %1, tallest bucket at %2").arg(limitHeight).arg(peakHeight)));
    QVERIFY2(std::abs(limitHeight - peakHeight) >= 0.15 - 1e-9,
             qPrintable(QStringLiteral("limit at %1, tallest bucket at %2").arg(limitHeight).arg(peakHeight)));
    // The limit and the rolling count are drawn over the buckets' histogram.
    const QList<QAbstractSeries *> order = view->chart()->series();
    QVERIFY(order.indexOf(view->bucketArea()) < order.indexOf(view->limitSeries()));
    QVERIFY(order.indexOf(view->bucketArea()) < order.indexOf(view->usedSeries()));
    shot(*view, QStringLiteral("bucketed-limit-%1").arg(limit));
}

void TestLogView::entriesTablePagesAndFilter()
{
    // 250 entries one every 40 ms over the last 10 s.
    std::vector<qint64> times;
    for (int i = 0; i < 250; ++i)
        times.push_back(kNow - 9960000 + qint64(i) * 40000);
    writeForeign(*m_conn, "ext:pages", times);
    auto view = open("ext:pages", LimitSpec{Algorithm::SlidingLog, 1000, 10 * kSecond, 1}, ScoreUnit::Milliseconds);
    QAbstractItemModelTester tester(view->entriesModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(view->entriesModel()->rowCount(), 100);
    auto *model = static_cast<LogEntriesModel *>(view->entriesModel());
    QCOMPARE(model->total(), 250);
    QCOMPARE(model->index(0, 0).data(LogEntriesModel::TimeUsRole).toLongLong(), times[0]);
    view->nextPage();
    waitRead(*view);
    QCOMPARE(model->offset(), 100);
    QCOMPARE(model->index(0, 0).data(LogEntriesModel::TimeUsRole).toLongLong(), times[100]);
    QCOMPARE(model->headerData(0, Qt::Vertical).toInt(), 101);
    view->nextPage();
    waitRead(*view);
    QCOMPARE(model->rowCount(), 50);
    QCOMPARE(model->index(49, 0).data(LogEntriesModel::TimeUsRole).toLongLong(), times[249]);
    const int reads = view->readsStarted();
    view->nextPage(); // nothing after the last page
    QCOMPARE(view->readsStarted(), reads);
    view->previousPage();
    waitRead(*view);
    QCOMPARE(model->offset(), 100);

    // A time range: [-5 s, -3 s) holds 50 entries.
    view->setTimeFilter(kNow - 5 * kSecond, kNow - 3 * kSecond);
    waitRead(*view);
    QCOMPARE(model->offset(), 0);
    QCOMPARE(model->total(), 50);
    QCOMPARE(model->index(0, 0).data(LogEntriesModel::TimeUsRole).toLongLong(), kNow - 5 * kSecond + 0);
    view->clearTimeFilter();
    waitRead(*view);
    QCOMPARE(model->total(), 250);
    QVERIFY(!view->pickedRangeSeries()->isVisible());

    // Dragging across the chart picks the range: from about -6 s to about -2 s.
    view->resize(1100, 720);
    view->show();
    QVERIFY(QTest::qWaitForWindowExposed(view.get()));
    QChart *chart = view->chart();
    QWidget *vp = view->chartView()->viewport();
    const double y = chart->plotArea().center().y();
    const QPoint a = chart->mapToPosition(QPointF(-6, 1), view->usedSeries()).toPoint();
    const QPoint b = chart->mapToPosition(QPointF(-2, 1), view->usedSeries()).toPoint();
    QTest::mousePress(vp, Qt::LeftButton, {}, QPoint(a.x(), int(y)));
    QMouseEvent move(QEvent::MouseMove, QPointF(b.x(), y), vp->mapToGlobal(QPointF(b.x(), y)), Qt::NoButton, Qt::LeftButton, {});
    QApplication::sendEvent(vp, &move);
    QTest::mouseRelease(vp, Qt::LeftButton, {}, QPoint(b.x(), int(y)));
    QVERIFY(view->timeFilter());
    waitRead(*view);
    const auto [from, to] = *view->timeFilter();
    QVERIFY2(std::abs(from - (kNow - 6 * kSecond)) < 100000 && std::abs(to - (kNow - 2 * kSecond)) < 100000,
             qPrintable(QStringLiteral("%1 .. %2").arg(double(from - kNow) / 1e6).arg(double(to - kNow) / 1e6)));
    const qint64 expected = std::count_if(times.begin(), times.end(), [&](qint64 t) { return t >= from && t < to; });
    QCOMPARE(model->total(), expected);
    QVERIFY(view->pickedRangeSeries()->isVisible()); // and the chart shows the range picked
    QCOMPARE(points(view->pickedRangeSeries()->upperSeries()).front().x(), view->xOf(from));
    // The table: one row height for all, headers the user can resize.
    QCOMPARE(view->entriesTable()->verticalHeader()->sectionResizeMode(0), QHeaderView::Fixed);
    QCOMPARE(view->entriesTable()->horizontalHeader()->sectionResizeMode(0), QHeaderView::Interactive);
    // As narrow as a key's tab beside the keys panel at 1024 px: the member gives up width and
    // the table does not scroll sideways; a member cut has its whole text in its tooltip.
    view->resize(650, 720);
    QTableView *table = view->entriesTable();
    QTRY_VERIFY2(table->horizontalHeader()->length() <= table->viewport()->width(),
                 qPrintable(QStringLiteral("%1 px in %2").arg(table->horizontalHeader()->length()).arg(table->viewport()->width())));
    QVERIFY(table->horizontalHeader()->sectionSize(LogEntriesModel::Cost) >=
            table->horizontalHeader()->sectionSizeHint(LogEntriesModel::Cost));
    const QModelIndex member = model->index(0, LogEntriesModel::Member);
    QCOMPARE(member.data(Qt::ToolTipRole).toString(), member.data().toString());
    view->resize(1100, 720);
    shot(*view, QStringLiteral("filtered"));
    // A range the window has moved past (here: picked before the axis starts) is let go of,
    // with a word, rather than shown as "0–0 of 0": not even for the read that finds it gone.
    QStringList pages;
    const auto record = connect(view.get(), &LogView::refreshed, this, [&] { pages << view->pageText(); });
    view->setTimeFilter(kNow - 60 * kSecond, kNow - 50 * kSecond);
    QTRY_VERIFY(!view->timeFilter());
    QTRY_COMPARE(model->total(), 250);
    waitRead(*view);
    disconnect(record);
    QVERIFY2(view->filterText().contains(QStringLiteral("has left the chart")), qPrintable(view->filterText()));
    QVERIFY(!view->pickedRangeSeries()->isVisible());
    QVERIFY2(pages.size() >= 2 && !pages.join(QLatin1Char('|')).contains(QStringLiteral("of 0")), qPrintable(pages.join(QLatin1Char('|'))));
    QCOMPARE(view->pageText(), QStringLiteral("1–100 of 250"));
    // A range on the chart that holds nothing says so.
    view->setTimeFilter(kNow - 10 * kSecond + 1, kNow - 10 * kSecond + 2);
    waitRead(*view);
    QCOMPARE(model->total(), 0);
    QCOMPARE(view->pageText(), QStringLiteral("no entries in this range"));
}

void TestLogView::withoutLimits()
{
    writeForeign(*m_conn, "ext:nolimits", {kNow - 90 * kSecond, kNow - 30 * kSecond, kNow - kSecond});
    auto view = open("ext:nolimits", std::nullopt, ScoreUnit::Milliseconds);
    QVERIFY(view->titleText().contains(QStringLiteral("limits unknown")));
    QVERIFY(view->statusText().contains(QStringLiteral("No policy or override gives limits")));
    QVERIFY(!view->limitSeries()->isVisible());
    QVERIFY(!view->usedSeries()->isVisible());
    QVERIFY(!view->capacityForOneSeries()->isVisible());
    QCOMPARE(points(view->entrySeries()).size(), 3);
    QCOMPARE(points(view->entrySeries()).front().y(), 1.0); // by cost
    QVERIFY(view->timeAxis()->min() < view->xOf(kNow - 90 * kSecond));
    QCOMPARE(view->entriesModel()->rowCount(), 3); // the oldest, at the axis start, listed too
    shot(*view, QStringLiteral("nolimits"));
}

void TestLogView::readsNeverOverlap()
{
    writeForeign(*m_conn, "ext:api", {kNow - kSecond});
    auto view = open("ext:api", LimitSpec{Algorithm::SlidingLog, 4, 10 * kSecond, 1}, ScoreUnit::Milliseconds);
    const int before = view->readsStarted();
    // A burst of refreshes while one read is in flight: one more read, for the newest clock.
    for (int i = 1; i <= 20; ++i)
        view->setContext(LimitSpec{Algorithm::SlidingLog, 4, 10 * kSecond, 1}, ScoreUnit::Milliseconds, kNow + i * 1000);
    waitRead(*view);
    QVERIFY2(view->readsStarted() - before <= 2, qPrintable(QString::number(view->readsStarted() - before)));
    QCOMPARE(view->lastRead()->nowUs, kNow + 20 * 1000);
}

void TestLogView::lostConnection()
{
    SandboxServer server;
    server.start();
    {
        Connection c(server.options());
        writeForeign(c, "ext:api", {kNow - 2 * kSecond, kNow - kSecond});
    }
    RedisClient client(server.options());
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);
    LogView view(&client, "ext:api");
    view.resize(1100, 720);
    const LimitSpec spec{Algorithm::SlidingLog, 4, 10 * kSecond, 1};
    view.setContext(spec, ScoreUnit::Milliseconds, kNow);
    QTRY_VERIFY_WITH_TIMEOUT(view.isLoaded(), 10000);
    waitRead(view);
    QVERIFY(view.isShownLive());
    QCOMPARE(view.chart()->opacity(), 1.0);
    server.stop();
    view.setContext(spec, ScoreUnit::Milliseconds, kNow + kSecond);
    QTRY_VERIFY_WITH_TIMEOUT(!view.isShownLive(), 10000);
    waitRead(view);
    QVERIFY2(view.statusText().contains(QStringLiteral("Not live")) && view.statusText().contains(QStringLiteral("values from")),
             qPrintable(view.statusText()));
    QVERIFY(view.chart()->opacity() < 1.0);
    // What was read last stays drawn, dimmed: the two entries.
    QCOMPARE(points(view.entrySeries()).size(), 2);
    QCOMPARE(view.lastRead()->nowUs, kNow);
    shot(view, QStringLiteral("lost"));
}

QTEST_MAIN(TestLogView)
#include "tst_logview.moc"
