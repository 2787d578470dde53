// The Monitor tab against a real redis-server, on an explicit clock: all five algorithms and
// a foreign millisecond log read in one pipelined round trip per tick (the page's own count
// and the server's read events agree), the rings stay bounded over 12.5 minutes of ticks, a
// key that vanishes or turns into a string is handled while the others go on, the CSV export
// matches Limiter::peek at each tick's time, and a lost connection breaks the lines and says
// so. The legend runs under QAbstractItemModelTester throughout. Screens go to /tmp.
#include "redis/connection.h"
#include "base/keytext.h"
#include "limiters/limiter.h"
#include "monitorlegendmodel.h"
#include "monitorpage.h"
#include "admin/policy.h"
#include "redisclient.h"
#include "samplering.h"
#include "redis/sandboxserver.h"
#include "formats/usage.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDateTime>
#include <QFile>
#include <QStyle>
#include <QStyleFactory>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>
#include <QTemporaryDir>
#include <QDateTimeAxis>
#include <QToolTip>
#include <QGraphicsLineItem>
#include <QChartView>
#include <QLineSeries>
#include <QTest>

using namespace ratescope;
using namespace ratescope::ui;

namespace {

constexpr qint64 kWindowUs = 60LL * 1000000;
constexpr qint64 kTickUs = 250000;

struct Pinned {
    QByteArray key;
    LimitSpec spec;
    int uses;
};

// Ratescope's five formats plus a partner's log with millisecond scores, each with a policy.
const std::vector<Pinned> kKeys = {
    {"mon:log", {Algorithm::SlidingLog, 10, kWindowUs, 1}, 4},   {"mon:counter", {Algorithm::SlidingCounter, 10, kWindowUs, 1}, 3},
    {"mon:fixed", {Algorithm::FixedWindow, 5, kWindowUs, 1}, 5}, {"mon:bucket", {Algorithm::TokenBucket, 10, kWindowUs, 1}, 6},
    {"mon:gcra", {Algorithm::Gcra, 10, kWindowUs, 1}, 2},        {"partner:log", {Algorithm::SlidingLog, 8, kWindowUs, 1}, 7},
};

// Now, moved back to 10 s into the current minute: the 60 s fixed windows filled just
// before it hold for the whole test, whenever it runs.
qint64 wallUs()
{
    const qint64 us = QDateTime::currentMSecsSinceEpoch() * 1000;
    return us - us % kWindowUs + 10000000;
}

void declare(Connection &c, const Pinned &k, ScoreUnit unit = ScoreUnit::Auto)
{
    Policy p;
    p.name = escapeControls(QString::fromUtf8(k.key)).replace(QLatin1Char(':'), QLatin1Char('-')); // names take no control characters
    p.match = k.key;
    p.spec = k.spec;
    p.scoreUnit = unit;
    PolicyStore store(c, QStringLiteral("ratescope:"));
    const auto old = store.get(p.name);
    store.set(p, old ? old->version : 0, QStringLiteral("test"));
}

// Fills every key at startUs (a second apart per use) and declares its policy.
void fill(Connection &c, qint64 startUs)
{
    c.command({"FLUSHDB"});
    for (const Pinned &k : kKeys) {
        if (k.key == "partner:log") {
            for (int u = 0; u < k.uses; ++u)
                c.command({"ZADD", k.key, QByteArray::number((startUs - (k.uses - u) * 1000000) / 1000), "req-" + QByteArray::number(u)});
            declare(c, k, ScoreUnit::Milliseconds);
            continue;
        }
        for (int u = 0; u < k.uses; ++u)
            Limiter(c).check(k.key, k.spec, startUs - (k.uses - u) * 1000000);
        declare(c, k);
    }
}

qint64 infoField(Connection &c, const QByteArray &section, const QByteArray &field)
{
    const QByteArray info = c.command({"INFO", section}).bytes();
    for (const QByteArray &line : info.split('\n')) {
        if (line.startsWith(field + ':')) {
            QByteArray v = line.mid(field.size() + 1).trimmed();
            if (v.startsWith("calls="))
                v = v.mid(6, v.indexOf(',') - 6);
            return v.toLongLong();
        }
    }
    return 0;
}

// Waits (bounded) until the page has nothing under way.
bool settle(MonitorPage &page)
{
    for (int i = 0; i < 20000 && page.isBusy(); ++i)
        QTest::qWait(1);
    return !page.isBusy();
}

// Every key of the matrix pinned, their first readings drawn.
bool pinAll(MonitorPage &page)
{
    for (const Pinned &k : kKeys)
        page.pin(k.key);
    return settle(page);
}

int legendRow(const MonitorLegendModel *m, const QByteArray &key)
{
    for (int r = 0; r < m->rowCount(); ++r)
        if (m->row(r).key == key)
            return r;
    return -1;
}

int segmentsWithPoints(const MonitorPage &page, const QString &name)
{
    int n = 0;
    for (QAbstractSeries *s : page.chart()->series())
        if (s->name() == name && static_cast<QLineSeries *>(s)->count() > 0)
            ++n;
    return n;
}

} // namespace

class TestMonitor : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void onePipelinedRoundTripPerTick();
    void csvMatchesPeekAtEachTick();
    void readingsUnderTheMouse();
    void counterWindowsInTheSameRound();
    void otherLibrariesInTheSameRound();
    void ringStaysBounded();
    void vanishedAndRetypedKeys();
    void lostConnectionBreaksTheLines();
    void screens();

private:
    void open(RedisClient &client, MonitorPage &page, qint64 *now);
    SandboxServer m_server;
};

void TestMonitor::initTestCase()
{
    m_server.start();
}

void TestMonitor::open(RedisClient &client, MonitorPage &page, qint64 *now)
{
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);
    page.setClock([now] { return *now; });
    page.setAutoTick(false);
    page.setClient(&client, "ratescope:");
}

void TestMonitor::onePipelinedRoundTripPerTick()
{
    qint64 now = wallUs();
    Connection c(m_server.options());
    fill(c, now);
    RedisClient client(m_server.options());
    MonitorPage page;
    QAbstractItemModelTester tester(page.legend(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    open(client, page, &now);
    QVERIFY(pinAll(page));
    page.tickNow(); // the first tick may load scripts: counted from the next one
    QVERIFY(settle(page));
    QVERIFY(page.isLoaded());
    for (int r = 0; r < page.legend()->rowCount(); ++r)
        QVERIFY2(page.legend()->row(r).drawn, qPrintable(page.legend()->row(r).shownKey + QLatin1Char(' ') + page.legend()->row(r).status));

    // The server's read events count round trips: a pipeline arrives as one read. The
    // heartbeat (PING every 2 s, then INFO) adds its own: a measurement it fell into is
    // taken again, a bounded number of times.
    constexpr int kTicks = 20;
    bool measured = false;
    for (int attempt = 0; attempt < 5 && !measured; ++attempt) {
        const qint64 pings0 = infoField(c, "commandstats", "cmdstat_ping");
        const qint64 evals0 = infoField(c, "commandstats", "cmdstat_evalsha_ro");
        const qint64 zcounts0 = infoField(c, "commandstats", "cmdstat_zcount");
        const qint64 times0 = infoField(c, "commandstats", "cmdstat_time");
        const qint64 reads0 = infoField(c, "stats", "total_reads_processed");
        const qint64 sent0 = page.ticksSent(), trips0 = page.roundTrips();
        for (int t = 0; t < kTicks; ++t) {
            now += kTickUs;
            page.tickNow();
            QVERIFY(settle(page));
        }
        const qint64 reads = infoField(c, "stats", "total_reads_processed") - reads0;
        QCOMPARE(page.ticksSent() - sent0, kTicks);
        QCOMPARE(page.roundTrips() - trips0, kTicks);
        QCOMPARE(infoField(c, "commandstats", "cmdstat_evalsha_ro") - evals0, 5 * kTicks);
        // One ZCOUNT for the partner's log (the sliding log's script counts without one); TIME once.
        QCOMPARE(infoField(c, "commandstats", "cmdstat_zcount") - zcounts0, kTicks);
        QCOMPARE(infoField(c, "commandstats", "cmdstat_time") - times0, kTicks);
        if (infoField(c, "commandstats", "cmdstat_ping") != pings0)
            continue;
        // + 1: the INFO that read the second figure (counted as it arrived).
        QCOMPARE(reads, kTicks + 1);
        measured = true;
    }
    QVERIFY2(measured, "a heartbeat fell into every measurement");
    QCOMPARE(page.ticksSkipped(), 0);

    // A short history fills the chart: the axis covers it (at least a minute), not the five
    // minutes chosen, from and to round times, the last reading inside.
    auto *axis = qobject_cast<QDateTimeAxis *>(page.chart()->axes(Qt::Horizontal).value(0));
    QVERIFY(axis);
    const qint64 shownMs = axis->min().msecsTo(axis->max());
    QVERIFY2(shownMs >= 60000 && shownMs <= 90000, qPrintable(QString::number(shownMs)));
    QCOMPARE(axis->min().toMSecsSinceEpoch() % 5000, 0);
    QCOMPARE(axis->max().toMSecsSinceEpoch() % 5000, 0);
    QVERIFY(axis->max().toMSecsSinceEpoch() >= now / 1000);
}

void TestMonitor::counterWindowsInTheSameRound()
{
    // Another service's INCR windows (<base>:<window id>): read with the others, in the tick's
    // one round trip (two GETs), and told as core's peek tells them.
    qint64 now = wallUs();
    Connection c(m_server.options());
    fill(c, now);
    const LimitSpec legacy{Algorithm::FixedWindow, 10, kWindowUs, 1};
    const QByteArray window = "legacy:acme:" + QByteArray::number(now / kWindowUs);
    c.command({"SET", window, "3", "PX", "120000"});
    declare(c, {"legacy:*", legacy, 0});
    RedisClient client(m_server.options());
    MonitorPage page;
    open(client, page, &now);
    page.pin(window);
    page.pin("mon:gcra");
    QVERIFY(settle(page));
    page.tickNow();
    QVERIFY(settle(page));
    const int row = legendRow(page.legend(), window);
    QVERIFY(row >= 0);
    QVERIFY2(page.legend()->row(row).drawn, qPrintable(page.legend()->row(row).status));
    QVERIFY2(page.legend()->row(row).current.startsWith(QStringLiteral("7 / 10")), qPrintable(page.legend()->row(row).current));

    const qint64 gets0 = infoField(c, "commandstats", "cmdstat_get");
    const qint64 trips0 = page.roundTrips();
    constexpr int kTicks = 5;
    for (int t = 0; t < kTicks; ++t) {
        now += kTickUs;
        page.tickNow();
        QVERIFY(settle(page));
    }
    QCOMPARE(page.roundTrips() - trips0, kTicks);
    QCOMPARE(infoField(c, "commandstats", "cmdstat_get") - gets0, 2 * kTicks);
}

void TestMonitor::otherLibrariesInTheSameRound()
{
    // Another library's limiters (a Spring Cloud Gateway bucket in two keys, a
    // rate-limiter-flexible counter over its limit) are drawn from their readers' plain reads,
    // in the tick's one round trip, with what peek tells of them.
    qint64 now = wallUs();
    Connection c(m_server.options());
    fill(c, now);
    const qint64 nowS = now / 1000000;
    c.pipeline({{"SETEX", "request_rate_limiter.{mon}.tokens", "60", "4"},
                {"SETEX", "request_rate_limiter.{mon}.timestamp", "60", QByteArray::number(nowS + 30)}, // no refill while read
                {"SET", "rlflx:mon", "14", "PX", "60000"}});
    declare(c, {"request_rate_limiter.*", {Algorithm::TokenBucket, 10, 5000000, 1}, 0});
    declare(c, {"rlflx:*", {Algorithm::FixedWindow, 10, 60000000, 1}, 0});
    RedisClient client(m_server.options());
    MonitorPage page;
    open(client, page, &now);
    page.pin("request_rate_limiter.{mon}.timestamp");
    page.pin("rlflx:mon");
    QVERIFY(settle(page));
    page.tickNow();
    QVERIFY(settle(page));
    const int gateway = legendRow(page.legend(), "request_rate_limiter.{mon}.timestamp");
    const int flexible = legendRow(page.legend(), "rlflx:mon");
    QVERIFY(gateway >= 0 && flexible >= 0);
    QVERIFY2(page.legend()->row(gateway).drawn, qPrintable(page.legend()->row(gateway).status));
    // remaining / limit: 4 tokens of 10; none left of 10 for the counter at 14 (denied now)
    QVERIFY2(page.legend()->row(gateway).current.startsWith(QStringLiteral("4 / 10")), qPrintable(page.legend()->row(gateway).current));
    QVERIFY2(page.legend()->row(flexible).current.startsWith(QStringLiteral("0 / 10")), qPrintable(page.legend()->row(flexible).current));
    QVERIFY(page.legend()->row(flexible).denied);
    const qint64 trips0 = page.roundTrips();
    const qint64 evals0 = infoField(c, "commandstats", "cmdstat_evalsha_ro");
    now += kTickUs;
    page.tickNow();
    QVERIFY(settle(page));
    QCOMPARE(page.roundTrips() - trips0, 1);
    QCOMPARE(infoField(c, "commandstats", "cmdstat_evalsha_ro") - evals0, 0); // no script of ours on their keys
}

// Anywhere over the plot: a vertical line, and every key's reading nearest that time, the
// emptiest first; nothing where no key was read.
void TestMonitor::readingsUnderTheMouse()
{
    qint64 now = wallUs();
    const qint64 start = now;
    Connection c(m_server.options());
    fill(c, now);
    RedisClient client(m_server.options());
    MonitorPage page;
    open(client, page, &now);
    QVERIFY(pinAll(page));
    for (int t = 1; t <= 4; ++t) {
        now = start + t * 4 * kTickUs;
        page.tickNow();
        QVERIFY(settle(page));
    }
    const QStringList lines = page.readingsAt(start + 8 * kTickUs + 1000).split(QLatin1Char('\n'));
    QCOMPARE(lines.size(), 1 + int(kKeys.size())); // the time, then a line per key
    QCOMPARE(lines[0], QDateTime::fromMSecsSinceEpoch((start + 8 * kTickUs + 1000) / 1000).toString(QStringLiteral("HH:mm:ss")));
    for (const Pinned &k : kKeys)
        QVERIFY2(lines.filter(QString::fromUtf8(k.key) + QStringLiteral(": ")).size() == 1, qPrintable(lines.join(QLatin1Char('|'))));
    double last = -1;
    for (int i = 1; i < lines.size(); ++i) { // the emptiest first
        const QString percent = lines[i].section(QLatin1Char('('), -1).section(QLatin1Char(' '), 0, 0);
        QVERIFY2(percent.toDouble() >= last, qPrintable(lines.join(QLatin1Char('|'))));
        last = percent.toDouble();
    }
    QVERIFY(page.readingsAt(start - 600LL * 1000000).isEmpty()); // before any reading

    // The mouse over the plot's middle: the line and the tooltip.
    page.resize(900, 600);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    auto *view = page.findChild<QChartView *>();
    QVERIFY(view);
    // At the newest reading's time, half way up (the axis covers at least a minute).
    QXYSeries *drawn = nullptr;
    for (QAbstractSeries *series : page.chart()->series())
        if (auto *xy = qobject_cast<QLineSeries *>(series); xy && xy->count() > 0 && !drawn)
            drawn = xy;
    QVERIFY(drawn);
    const QPointF newest = page.chart()->mapToPosition(drawn->at(drawn->count() - 1), drawn);
    const QPointF at(newest.x() - 1, page.chart()->plotArea().center().y());
    QTest::mouseMove(view->viewport(), view->mapFromScene(page.chart()->mapToScene(at)));
    QGraphicsLineItem *line = nullptr;
    for (QGraphicsItem *item : page.chart()->childItems())
        if (auto *l = dynamic_cast<QGraphicsLineItem *>(item))
            line = l;
    QVERIFY(line);
    QTRY_VERIFY(line->isVisible());
    QVERIFY2(QToolTip::text().contains(QString::fromUtf8(kKeys.front().key)), qPrintable(QToolTip::text()));
}

void TestMonitor::csvMatchesPeekAtEachTick()
{
    qint64 now = wallUs();
    const qint64 start = now;
    Connection c(m_server.options());
    fill(c, now);
    RedisClient client(m_server.options());
    MonitorPage page;
    QAbstractItemModelTester tester(page.legend(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    open(client, page, &now);
    QVERIFY(pinAll(page));
    constexpr int kTicks = 12;
    for (int t = 0; t < kTicks; ++t) {
        now = start + t * 4 * kTickUs; // a second apart: the bucket and GCRA refill meanwhile
        page.tickNow();
        QVERIFY(settle(page));
    }
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("monitor.csv"));
    QString error;
    QVERIFY2(page.exportCsv(path, &error), qPrintable(error));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = f.readAll().split('\n');
    QCOMPARE(lines.first(), QByteArray("time_us,key,used,limit,remaining,retry_after_ms"));
    QCOMPARE(lines.size(), 1 + kTicks * int(kKeys.size()) + 1); // header, rows, final newline
    int denied = 0;
    for (int i = 1; i <= kTicks * int(kKeys.size()); ++i) {
        const QList<QByteArray> cells = lines[i].split(',');
        QCOMPARE(cells.size(), 6);
        const int tick = (i - 1) / int(kKeys.size());
        const Pinned &k = kKeys[size_t((i - 1) % int(kKeys.size()))];
        const qint64 at = cells[0].toLongLong();
        QCOMPARE(at, start + tick * 4 * kTickUs);
        QCOMPARE(cells[1], k.key);
        // What the scripts (or core's reading of a foreign log) answer at that very time.
        Usage expected;
        if (k.key == "partner:log") {
            KeyKind kind;
            kind.format = KeyFormat::ForeignSlidingLog;
            kind.unit = ScoreUnit::Milliseconds;
            expected = peekAnyFormat(c, k.key, kind, k.spec, at);
        } else {
            const Decision d = Limiter(c).peek(k.key, k.spec, at);
            expected = {d.used - (d.allowed ? k.spec.cost : 0), d};
        }
        QCOMPARE(cells[2].toLongLong(), expected.usedNow);
        QCOMPARE(cells[3].toLongLong(), k.spec.limit);
        QCOMPARE(cells[4].toLongLong(), std::max<qint64>(0, k.spec.limit - expected.usedNow));
        QCOMPARE(cells[5].toLongLong(), (expected.decision.retryAfterUs + 999) / 1000);
        denied += expected.decision.allowed ? 0 : 1;
    }
    QVERIFY(denied >= kTicks); // the fixed window is full throughout
    // The legend says so: the fixed window is denied now, with when it frees up.
    const LegendRow &fixed = page.legend()->row(legendRow(page.legend(), "mon:fixed"));
    QCOMPARE(fixed.current, QStringLiteral("0 / 5"));
    QVERIFY2(fixed.denied && fixed.status.startsWith(QStringLiteral("denied: passes in")), qPrintable(fixed.status));
}

void TestMonitor::ringStaysBounded()
{
    qint64 now = wallUs();
    Connection c(m_server.options());
    fill(c, now);
    RedisClient client(m_server.options());
    MonitorPage page;
    QAbstractItemModelTester tester(page.legend(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    open(client, page, &now);
    page.pin("mon:bucket");
    page.pin("partner:log");
    QVERIFY(settle(page));
    const size_t capacity = size_t(MonitorPage::kHistoryUs / kTickUs) + 2;
    size_t bytesAtFull = 0;
    // 12.5 minutes of 250 ms ticks on the explicit clock, as fast as the server answers.
    for (int t = 0; t < 3000; ++t) {
        now += kTickUs;
        page.tickNow();
        QVERIFY(settle(page));
        if (t == 2500)
            bytesAtFull = page.historyBytes();
    }
    QCOMPARE(page.samplesHeld("mon:bucket"), capacity);
    QCOMPARE(page.samplesHeld("partner:log"), capacity);
    QCOMPARE(page.historyBytes(), bytesAtFull);
    QVERIFY(page.historyBytes() <= 2 * capacity * sizeof(MonitorSample));
    QCOMPARE(page.ticksSent(), 3000);
}

void TestMonitor::vanishedAndRetypedKeys()
{
    qint64 now = wallUs();
    Connection c(m_server.options());
    fill(c, now);
    Limiter(c).check("mon:unknown", {Algorithm::SlidingLog, 3, kWindowUs, 1}, now); // no policy for it
    RedisClient client(m_server.options());
    MonitorPage page;
    QAbstractItemModelTester tester(page.legend(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    open(client, page, &now);
    for (const QByteArray key : {"mon:log", "mon:fixed", "mon:gcra", "partner:log", "mon:unknown"})
        page.pin(key);
    QVERIFY(settle(page));
    for (int t = 0; t < 2; ++t) {
        now += kTickUs;
        page.tickNow();
        QVERIFY(settle(page));
    }
    const MonitorLegendModel *m = page.legend();
    QCOMPARE(m->row(legendRow(m, "mon:unknown")).status, QStringLiteral("no limits known: add a policy"));
    QVERIFY(!m->row(legendRow(m, "mon:unknown")).drawn);
    QCOMPARE(page.samplesHeld("mon:unknown"), size_t(0));
    QVERIFY(page.isLoaded()); // nothing to draw for it: it does not hold the page up
    QCOMPARE(m->row(legendRow(m, "mon:fixed")).current, QStringLiteral("0 / 5"));

    // The fixed window vanishes (its policy says what it is: a fresh one); the log turns into
    // a string, and so does the partner's log.
    c.command({"DEL", "mon:fixed"});
    c.command({"SET", "mon:log", "not a limiter"});
    c.command({"DEL", "partner:log"});
    c.command({"SET", "partner:log", "neither"});
    const size_t gcraBefore = page.samplesHeld("mon:gcra");
    for (int t = 0; t < 3; ++t) {
        now += kTickUs;
        page.tickNow();
        QVERIFY(settle(page));
    }
    QCOMPARE(m->row(legendRow(m, "mon:fixed")).current, QStringLiteral("5 / 5"));
    QVERIFY(!m->row(legendRow(m, "mon:fixed")).denied);
    for (const QByteArray key : {"mon:log", "partner:log"}) {
        const LegendRow &r = m->row(legendRow(m, key));
        QVERIFY2(!r.drawn && r.status == QStringLiteral("no longer a limiter (now a string): stopped drawing"), qPrintable(r.status));
    }
    QCOMPARE(page.samplesHeld("mon:gcra"), gcraBefore + 3); // the others never missed a tick
    QCOMPARE(segmentsWithPoints(page, QStringLiteral("mon:log")), 0);
    const size_t logSamples = page.samplesHeld("mon:log");
    now += kTickUs;
    page.tickNow();
    QVERIFY(settle(page));
    QCOMPARE(page.samplesHeld("mon:log"), logSamples); // no longer read
    QVERIFY(page.isLoaded());

    page.unpin("mon:log");
    QCOMPARE(page.pinnedKeys(), (QList<QByteArray>{"mon:fixed", "mon:gcra", "partner:log", "mon:unknown"}));
}

void TestMonitor::lostConnectionBreaksTheLines()
{
    SandboxServer server;
    server.start();
    qint64 now = wallUs();
    auto prepare = [&] {
        Connection c(server.options());
        declare(c, kKeys[4]); // mon:gcra; the key itself need not exist: a fresh limiter
        Limiter(c).check("mon:gcra", kKeys[4].spec, now);
    };
    prepare();
    RedisClient client(server.options());
    MonitorPage page;
    QAbstractItemModelTester tester(page.legend(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    open(client, page, &now);
    page.pin("mon:gcra");
    QVERIFY(settle(page));
    for (int t = 0; t < 3; ++t) {
        now += kTickUs;
        page.tickNow();
        QVERIFY(settle(page));
    }
    QVERIFY(page.noteText().isEmpty());
    QCOMPARE(segmentsWithPoints(page, QStringLiteral("mon:gcra")), 1);

    server.kill();
    QTRY_VERIFY_WITH_TIMEOUT(client.state() == RedisClient::State::Reconnecting, 10000);
    QVERIFY2(page.noteText().startsWith(QStringLiteral("Connection lost at ")), qPrintable(page.noteText()));
    QVERIFY2(page.legend()->row(0).status.startsWith(QStringLiteral("not live: last read at ")), qPrintable(page.legend()->row(0).status));
    QVERIFY2(page.statusText().startsWith(QStringLiteral("Not reading: the connection was lost at ")), qPrintable(page.statusText()));
    page.resize(1280, 600);
    page.setSpanMinutes(1);
    QTest::qWait(100);
    page.grab().save(QStringLiteral("/tmp/monitor-lost.png"));
    const qint64 sent = page.ticksSent();
    now += kTickUs;
    page.tickNow(); // not live: nothing is sent, nothing drawn
    QCOMPARE(page.ticksSent(), sent);

    server.restart();
    prepare();
    client.retryNow();
    QTRY_VERIFY_WITH_TIMEOUT(client.state() == RedisClient::State::Connected, 15000);
    QVERIFY(page.noteText().isEmpty());
    QVERIFY(settle(page));
    for (int t = 0; t < 2; ++t) {
        now += kTickUs;
        page.tickNow();
        QVERIFY(settle(page));
    }
    QCOMPARE(page.samplesHeld("mon:gcra"), size_t(3 + 1 + 2)); // the gap is a sample of its own
    QCOMPARE(segmentsWithPoints(page, QStringLiteral("mon:gcra")), 2);

    // Disconnected for good: the history stays, marked as not live.
    page.setClient(nullptr, {});
    QVERIFY2(page.noteText().startsWith(QStringLiteral("Disconnected: the history up to ")), qPrintable(page.noteText()));
    QCOMPARE(page.pinnedKeys(), QList<QByteArray>{"mon:gcra"});
}

void TestMonitor::screens()
{
    // Five limiters of different algorithms under simulated traffic for five minutes of a
    // 1 s tick, one of them (the fixed window) denied at the end.
    const qint64 start = wallUs();
    qint64 now = start;
    Connection c(m_server.options());
    c.command({"FLUSHDB"});
    const std::vector<Pinned> keys = {
        {"api:search:alice", {Algorithm::SlidingLog, 60, kWindowUs, 1}, 0},
        {"api:upload:bob", {Algorithm::SlidingCounter, 40, kWindowUs, 1}, 0},
        {"api:export:carol", {Algorithm::FixedWindow, 30, kWindowUs, 1}, 0},
        {"api:login:dave", {Algorithm::TokenBucket, 20, 20 * 1000000, 1}, 0},
        {"api:webhook:\x01"
         "eve",
         {Algorithm::Gcra, 50, kWindowUs, 1},
         0},
    };
    for (const Pinned &k : keys)
        declare(c, k);
    RedisClient client(m_server.options());
    MonitorPage page;
    QAbstractItemModelTester tester(page.legend(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    page.resize(1280, 760);
    open(client, page, &now);
    page.setIntervalMs(1000);
    for (const Pinned &k : keys)
        page.pin(k.key);
    QVERIFY(settle(page));
    for (int t = 0; t < 300; ++t) {
        now = start + qint64(t) * 1000000;
        std::vector<Command> batch;
        for (size_t i = 0; i < keys.size(); ++i) {
            // Bursty, different per key; the fixed window is hammered in the last minute.
            int n = (t / (20 + 7 * int(i)) % 3 == 0) ? int(i) + 1 : (t % (5 + int(i)) == 0 ? 3 : 0);
            if (i == 2 && t > 250)
                n = 4;
            for (int r = 0; r < n; ++r)
                Limiter(c).check(keys[i].key, keys[i].spec, now);
        }
        page.tickNow();
        QVERIFY(settle(page));
    }
    QVERIFY(page.legend()->row(2).denied);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    QTest::qWait(100); // the chart lays its titles out on the next pass
    page.grab().save(QStringLiteral("/tmp/monitor-light.png"));
    page.setShowPercent(false);
    QTest::qWait(100); // the chart lays its titles out on the next pass
    page.grab().save(QStringLiteral("/tmp/monitor-units.png"));
    page.setShowPercent(true);
    QPalette dark;
    dark.setColor(QPalette::Window, QColor(0x20, 0x22, 0x26));
    dark.setColor(QPalette::WindowText, QColor(0xe6, 0xe6, 0xe6));
    dark.setColor(QPalette::Base, QColor(0x17, 0x18, 0x1b));
    dark.setColor(QPalette::AlternateBase, QColor(0x26, 0x28, 0x2c));
    dark.setColor(QPalette::Text, QColor(0xe6, 0xe6, 0xe6));
    dark.setColor(QPalette::Button, QColor(0x2c, 0x2e, 0x33));
    dark.setColor(QPalette::ButtonText, QColor(0xe6, 0xe6, 0xe6));
    dark.setColor(QPalette::PlaceholderText, QColor(0x9a, 0x9a, 0x9a));
    dark.setColor(QPalette::Highlight, QColor(0x3b, 0x82, 0xf6));
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    QApplication::setPalette(dark);
    QApplication::processEvents();
    QTest::qWait(100); // the chart lays its titles out on the next pass
    page.grab().save(QStringLiteral("/tmp/monitor-dark.png"));
    QApplication::setPalette(QApplication::style()->standardPalette());
    QVERIFY(page.exportPng(QStringLiteral("/tmp/monitor-export.png")));
}

QTEST_MAIN(TestMonitor)
#include "tst_monitor.moc"
