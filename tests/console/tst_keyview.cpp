// A key's tab against a real redis-server: for keys the real scripts wrote at explicit times,
// the view frozen at a given now shows exactly what the core's peek returns for that now, in
// its header and in its chart; foreign counter windows, missing keys, keys that are no
// limiter, binary key names, a lost connection, and no reads while the tab is hidden.
#include "redis/connection.h"
#include "displayformat.h"
#include "base/keytext.h"
#include "keyview.h"
#include "limiters/limiter.h"
#include "logview.h"
#include "admin/policy.h"
#include "redisclient.h"
#include "redis/sandboxserver.h"
#include "shardchart.h"
#include "statechart.h"
#include "formats/usage.h"

#include <QChartView>
#include <QGuiApplication>
#include <QLabel>
#include <QPushButton>
#include <QScreen>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTest>

using namespace ratescope;
using namespace ratescope::ui;

namespace {

// 2025-01-01T00:00:00Z: a whole number of minutes, hours and 10 s windows.
constexpr qint64 kBase = 1735689600000000;
constexpr qint64 kSecond = 1000000;
const QByteArray kNs = "ratescope:";

void declare(Connection &c, const QString &name, const QByteArray &match, const LimitSpec &spec)
{
    PolicyStore store(c, QString::fromUtf8(kNs));
    Policy p;
    p.name = name;
    p.match = match;
    p.spec = spec;
    const auto old = store.get(name);
    store.set(p, old ? old->version : 0, QStringLiteral("tst_keyview"));
}

void admit(Connection &c, const QByteArray &key, const LimitSpec &spec, int n, qint64 nowUs)
{
    Limiter limiter(c);
    for (int i = 0; i < n; ++i)
        QVERIFY(limiter.check(key, spec, nowUs).allowed);
}

// Waits (bounded) until the view has drawn a read for exactly this now.
bool drawnAt(KeyView &view, qint64 nowUs)
{
    view.setFrozenNow(nowUs);
    return QTest::qWaitFor([&] { return view.isLoaded() && view.lastRead().nowUs == nowUs && view.readsStarted() > 0; }, 15000);
}

QString usedText(const Decision &d)
{
    const qint64 usedNow = d.used - (d.allowed ? 1 : 0);
    return QStringLiteral("%1 of %2").arg(formatCount(usedNow), formatCount(d.limit));
}

// The header says what the peek says, to the µs where the decision is compared whole.
void compareHeader(const KeyView &view, const Decision &peek, qint64 cost = 1)
{
    QVERIFY(view.decision().has_value());
    QCOMPARE(*view.decision(), peek);
    const qint64 usedNow = peek.used - (peek.allowed ? cost : 0);
    QCOMPARE(view.usedNow(), usedNow);
    QCOMPARE(view.fieldText(QStringLiteral("Used")), usedText(peek));
    QCOMPARE(view.fieldText(QStringLiteral("Remaining")), formatCount(peek.limit - usedNow));
    QCOMPARE(view.fieldText(QStringLiteral("Retry after")),
             peek.allowed ? QStringLiteral("now: a request would pass") : formatSpan(peek.retryAfterUs));
    QCOMPARE(view.fieldText(QStringLiteral("Reset after")),
             peek.resetAfterUs > 0 ? formatSpan(peek.resetAfterUs) : QStringLiteral("full capacity now"));
}

} // namespace

class TestKeyView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void slidingCounter();
    void slidingBuckets();
    void override();
    void followsAPolicyChangedElsewhere();
    void fixedWindow();
    void tokenBucket();
    void gcra();
    void foreignCounterWindow();
    void slidingLogInLogView();
    void foreignTokenBucket();
    void missingKey();
    void shardedGroup();
    void otherLibrariesDrawnAsTheirFamily();
    void notALimiter();
    void binaryAndMarkupKeyNames();
    void lostConnection();
    void lostConnectionLeavesNoGhost();
    void pausedWhileHidden();
    void pinButton();
    void screenshots();

private:
    SandboxServer m_server;
    std::unique_ptr<Connection> m_c;
    std::unique_ptr<RedisClient> m_client;
};

void TestKeyView::initTestCase()
{
    m_server.start();
    m_c = std::make_unique<Connection>(m_server.options());
    m_client = std::make_unique<RedisClient>(m_server.options());
    m_client->open();
    QTRY_VERIFY_WITH_TIMEOUT(m_client->state() == RedisClient::State::Connected, 15000);
}

void TestKeyView::slidingCounter()
{
    const LimitSpec spec{Algorithm::SlidingCounter, 60, 60 * kSecond, 1};
    declare(*m_c, QStringLiteral("sc"), "t:sc:*", spec);
    const QByteArray key = "t:sc:alice";
    admit(*m_c, key, spec, 8, kBase - 50 * kSecond); // the previous window
    admit(*m_c, key, spec, 3, kBase + 5 * kSecond);  // the current one
    const qint64 now = kBase + 45 * kSecond;
    const Decision peek = Limiter(*m_c).peek(key, spec, now);

    KeyView view(m_client.get(), key, kNs);
    QVERIFY(drawnAt(view, now));
    compareHeader(view, peek);
    QCOMPARE(view.fieldText(QStringLiteral("Algorithm")), QStringLiteral("sliding-counter"));
    QCOMPARE(view.fieldText(QStringLiteral("Policy")), QStringLiteral("sc (t:sc:*): 60 per 1 m"));
    QCOMPARE(view.fieldText(QStringLiteral("Type")), QStringLiteral("hash"));

    const StateChart *chart = view.stateChart();
    QCOMPARE(chart->family(), StateChart::Family::SlidingCounter);
    QCOMPARE(view.titleText(), QStringLiteral("Sliding counter: %1 of 60 used").arg(view.usedNow()));
    // The bars are the two windows: previous over [-(W + e), -e], current over [-e, W - e].
    const qint64 e = now % spec.windowUs, toBoundary = spec.windowUs - e;
    QCOMPARE(chart->points(QStringLiteral("previous")), (QList<QPointF>{QPointF(-(spec.windowUs + e), 8), QPointF(-e, 8)}));
    QCOMPARE(chart->points(QStringLiteral("current")), (QList<QPointF>{QPointF(-e, 3), QPointF(toBoundary, 3)}));
    // The estimate starts at what the script counts (floored) and decays to the current count
    // at the boundary.
    const QList<QPointF> estimate = chart->points(QStringLiteral("estimate"));
    QCOMPARE(estimate.first().x(), 0.0);
    QCOMPARE(qint64(std::floor(estimate.first().y())), view.usedNow());
    QCOMPARE(estimate.last(), QPointF(toBoundary, 3));
    QCOMPARE(chart->points(QStringLiteral("limit")).first().y(), 60.0);
    QCOMPARE(chart->seriesName(QStringLiteral("limit")), QStringLiteral("Limit: 60"));
    QCOMPARE(chart->points(QStringLiteral("boundary")).first().x(), double(toBoundary));
    QVERIFY(view.messageText().isEmpty());

    // Another now: the same view follows, values still the peek's.
    const qint64 later = kBase + 59 * kSecond;
    QVERIFY(drawnAt(view, later));
    compareHeader(view, Limiter(*m_c).peek(key, spec, later));
}

void TestKeyView::slidingBuckets()
{
    // 40 per minute in six 10 s buckets, not a whole number of microseconds for B = 7 below.
    LimitSpec spec{Algorithm::SlidingBuckets, 40, 60 * kSecond, 1, 6};
    declare(*m_c, QStringLiteral("sb"), "t:sb:*", spec);
    const QByteArray key = "t:sb:ada";
    admit(*m_c, key, spec, 12, kBase - 58 * kSecond); // the oldest bucket (id - 6), weighted
    admit(*m_c, key, spec, 5, kBase - 25 * kSecond);
    admit(*m_c, key, spec, 9, kBase + kSecond); // the current bucket
    const qint64 now = kBase + 4 * kSecond;
    const Decision peek = Limiter(*m_c).peek(key, spec, now);
    QCOMPARE(peek.used, 9 + 5 + (12 * 6) / 10 + 1); // 7 of the oldest 12 counted, + this request

    KeyView view(m_client.get(), key, kNs);
    QVERIFY(drawnAt(view, now));
    compareHeader(view, peek);
    QCOMPARE(view.fieldText(QStringLiteral("Algorithm")), QStringLiteral("sliding-buckets"));
    const StateChart *chart = view.stateChart();
    QCOMPARE(chart->family(), StateChart::Family::SlidingBuckets);
    QCOMPARE(view.titleText(),
             QStringLiteral("Sliding buckets (6 x 10 s): %1 of 40 used · room for %2 more").arg(view.usedNow()).arg(40 - view.usedNow()));
    // The oldest bucket over [-(W + e), -(W + e) + w], then one bar per bucket up to the current one.
    const double e = 4 * kSecond, w = 10 * kSecond, W = 60 * kSecond;
    QCOMPARE(chart->points(QStringLiteral("previous")), (QList<QPointF>{QPointF(-(W + e), 12), QPointF(-(W + e) + w, 12)}));
    const QList<QPointF> bars = chart->points(QStringLiteral("buckets"));
    QCOMPARE(bars.size(), 12);
    QCOMPARE(bars[4], QPointF(-e - 3 * w, 5)); // bucket id - 3 (25 s ago) from its start
    QCOMPARE(bars[5], QPointF(-e - 2 * w, 5));
    QCOMPARE(bars[10], QPointF(-e, 9)); // the current bucket
    QCOMPARE(bars[11], QPointF(w - e, 9));
    // In use from now on: what the script counts (before flooring) falling to 0 as the
    // buckets leave, the current one last.
    const QList<QPointF> ahead = chart->points(QStringLiteral("estimate"));
    QCOMPARE(ahead.first().x(), 0.0);
    QCOMPARE(qint64(std::floor(ahead.first().y())), view.usedNow());
    QCOMPARE(ahead.last(), QPointF(W + w - e, 0));
    QCOMPARE(chart->points(QStringLiteral("boundary")).first().x(), -W);
    QVERIFY(view.messageText().isEmpty());

    // Full: denied, the header says when the next request passes, as the script does.
    admit(*m_c, key, spec, 40 - view.usedNow(), now);
    const Decision full = Limiter(*m_c).peek(key, spec, now + 1);
    QVERIFY(!full.allowed);
    QVERIFY(drawnAt(view, now + 1));
    compareHeader(view, full);
    QVERIFY2(view.titleText().contains(QStringLiteral("next request in")), qPrintable(view.titleText()));
}

void TestKeyView::override()
{
    const LimitSpec policy{Algorithm::SlidingCounter, 60, 60 * kSecond, 1};
    declare(*m_c, QStringLiteral("sc"), "t:sc:*", policy);
    const QByteArray key = "t:sc:vip";
    Override o;
    o.key = key;
    o.limit = 100;
    OverrideStore(*m_c, QString::fromUtf8(kNs)).set(o, 2LL * 3600 * kSecond, QStringLiteral("tst_keyview"));
    LimitSpec spec = policy;
    spec.limit = 100;
    admit(*m_c, key, spec, 70, kBase + kSecond); // more than the policy allows: the override's limit applies
    const qint64 now = kBase + 2 * kSecond;
    const Decision peek = Limiter(*m_c).peek(key, spec, now);

    KeyView view(m_client.get(), key, kNs);
    QVERIFY(drawnAt(view, now));
    compareHeader(view, peek);
    QCOMPARE(view.fieldText(QStringLiteral("Used")), QStringLiteral("70 of 100"));
    // The countdown runs on the server's clock: overrides expire in real time.
    const QString text = view.fieldText(QStringLiteral("Override"));
    QVERIFY2(text.startsWith(QStringLiteral("limit 100, expires in 1 h 59 m")) ||
                 text.startsWith(QStringLiteral("limit 100, expires in 2 h 00 m")),
             qPrintable(text));
    QVERIFY2(text.endsWith(QStringLiteral("(set by tst_keyview)")), qPrintable(text));
    QCOMPARE(view.titleText(), QStringLiteral("Sliding counter: 70 of 100 used"));
}

// Another client lowers the policy while the view is open: the next read, on the view's own
// interval (1 s here), shows the new limit with no refresh asked for.
void TestKeyView::followsAPolicyChangedElsewhere()
{
    const LimitSpec policy{Algorithm::SlidingLog, 60, 60 * kSecond, 1};
    declare(*m_c, QStringLiteral("follow"), "t:follow:*", policy);
    const QByteArray key = "t:follow:acme";
    admit(*m_c, key, policy, 5, kBase + kSecond);
    KeyView view(m_client.get(), key, kNs);
    view.setRefreshInterval(1000);
    view.show();
    QVERIFY(drawnAt(view, kBase + 2 * kSecond));
    QCOMPARE(view.fieldText(QStringLiteral("Used")), QStringLiteral("5 of 60"));
    Connection other(m_server.options());
    declare(other, QStringLiteral("follow"), "t:follow:*", {Algorithm::SlidingLog, 20, 60 * kSecond, 1});
    QTRY_COMPARE_WITH_TIMEOUT(view.fieldText(QStringLiteral("Used")), QStringLiteral("5 of 20"), 10000);
}

void TestKeyView::fixedWindow()
{
    const LimitSpec spec{Algorithm::FixedWindow, 20, 60 * kSecond, 1};
    declare(*m_c, QStringLiteral("fw"), "t:fw:*", spec);
    const QByteArray key = "t:fw:bob";
    admit(*m_c, key, spec, 14, kBase + 5 * kSecond);
    const qint64 now = kBase + 48 * kSecond;
    const Decision peek = Limiter(*m_c).peek(key, spec, now);

    KeyView view(m_client.get(), key, kNs);
    QVERIFY(drawnAt(view, now));
    compareHeader(view, peek);
    const StateChart *chart = view.stateChart();
    QCOMPARE(chart->family(), StateChart::Family::FixedWindow);
    QCOMPARE(view.titleText(), QStringLiteral("Fixed window: 14 of 20 used · resets in 12 s"));
    QCOMPARE(chart->points(QStringLiteral("count")), (QList<QPointF>{QPointF(-48 * kSecond, 14), QPointF(12 * kSecond, 14)}));
    QCOMPARE(chart->points(QStringLiteral("boundary")).first().x(), double(peek.resetAfterUs));
    QCOMPARE(chart->points(QStringLiteral("limit")).first().y(), 20.0);

    // Full: denied until the boundary.
    admit(*m_c, key, spec, 6, kBase + 50 * kSecond);
    const qint64 full = kBase + 50 * kSecond;
    const Decision denied = Limiter(*m_c).peek(key, spec, full);
    QVERIFY(!denied.allowed);
    QVERIFY(drawnAt(view, full));
    compareHeader(view, denied);
    QCOMPARE(view.fieldText(QStringLiteral("Retry after")), QStringLiteral("10 s"));
}

void TestKeyView::tokenBucket()
{
    const LimitSpec spec{Algorithm::TokenBucket, 10, 10 * kSecond, 1};
    declare(*m_c, QStringLiteral("tb"), "t:tb:*", spec);
    const QByteArray key = "t:tb:carol";
    admit(*m_c, key, spec, 7, kBase);
    const qint64 now = kBase + 2500000; // 3 left + 2.5 refilled
    const Decision peek = Limiter(*m_c).peek(key, spec, now);

    KeyView view(m_client.get(), key, kNs);
    QVERIFY(drawnAt(view, now));
    compareHeader(view, peek);
    const StateChart *chart = view.stateChart();
    QCOMPARE(chart->family(), StateChart::Family::TokenBucket);
    const qint64 tokensNow = peek.limit - view.usedNow();
    QCOMPARE(tokensNow, 5);
    const QList<QPointF> curve = chart->points(QStringLiteral("tokens"));
    QCOMPARE(curve.first(), QPointF(0, tokensNow));
    QCOMPARE(curve.at(1), QPointF(peek.resetAfterUs, 10)); // full at now + reset_after
    QCOMPARE(curve.last().y(), 10.0);
    QVERIFY(view.titleText().startsWith(QStringLiteral("Token bucket: 5 of 10 tokens · full in ")));

    // Empty: a request passes when the curve reaches its cost.
    const QByteArray empty = "t:tb:dave";
    admit(*m_c, empty, spec, 10, kBase);
    const qint64 soon = kBase + 400000;
    const Decision denied = Limiter(*m_c).peek(empty, spec, soon);
    QVERIFY(!denied.allowed);
    KeyView emptyView(m_client.get(), empty, kNs);
    QVERIFY(drawnAt(emptyView, soon));
    compareHeader(emptyView, denied);
    QCOMPARE(emptyView.stateChart()->points(QStringLiteral("tokens")).first(), QPointF(0, 0));
    QCOMPARE(emptyView.stateChart()->points(QStringLiteral("cost")).first().y(), 1.0);
    QVERIFY(emptyView.stateChart()->seriesName(QStringLiteral("cost")).contains(QStringLiteral("passes in")));
}

void TestKeyView::gcra()
{
    const LimitSpec spec{Algorithm::Gcra, 10, 10 * kSecond, 1};
    declare(*m_c, QStringLiteral("gcra"), "t:gcra:*", spec);
    const QByteArray key = "t:gcra:erin";
    admit(*m_c, key, spec, 8, kBase);
    const qint64 now = kBase + 3 * kSecond;
    const Decision peek = Limiter(*m_c).peek(key, spec, now);
    const qint64 tat = m_c->command({"HGET", key, "tat"}).toInteger();

    KeyView view(m_client.get(), key, kNs);
    QVERIFY(drawnAt(view, now));
    compareHeader(view, peek);
    const StateChart *chart = view.stateChart();
    QCOMPARE(chart->family(), StateChart::Family::Gcra);
    const QList<QPointF> line = chart->points(QStringLiteral("tat"));
    QCOMPARE(line.first(), QPointF(0, tat - now)); // TAT against now, back to now at one second per second
    QCOMPARE(line.at(1), QPointF(tat - now, 0));
    // With the request the peek asked about: back to now after exactly its reset_after.
    QCOMPARE(chart->points(QStringLiteral("next")).last(), QPointF(peek.resetAfterUs, 0));
    QCOMPARE(chart->points(QStringLiteral("allowance")).first().y(), double(spec.windowUs)); // the burst allowance
    QCOMPARE(view.titleText(), QStringLiteral("GCRA: %1 of 10 remaining · TAT 5.0 s ahead of now").arg(peek.limit - view.usedNow()));
}

void TestKeyView::foreignCounterWindow()
{
    // Another service's INCR windows, <base>:<minute id>, limited by a policy on the base.
    const LimitSpec spec{Algorithm::SlidingCounter, 30, 60 * kSecond, 1};
    declare(*m_c, QStringLiteral("legacy"), "legacy:acme", spec);
    const qint64 id = kBase / spec.windowUs;
    const QByteArray window = "legacy:acme:" + QByteArray::number(id);
    QCOMPARE(m_c->command({"SET", window, "5"}).text(), QStringLiteral("OK"));
    QCOMPARE(m_c->command({"SET", "legacy:acme:" + QByteArray::number(id - 1), "9"}).text(), QStringLiteral("OK"));
    const qint64 now = kBase + 30 * kSecond;
    KeyKind kind;
    kind.format = KeyFormat::CounterWindow;
    kind.base = "legacy:acme";
    kind.windowId = id;
    kind.windowSeconds = 60;
    const Usage peek = peekAnyFormat(*m_c, "legacy:acme", kind, spec, now);

    KeyView view(m_client.get(), window, kNs);
    QVERIFY(drawnAt(view, now));
    compareHeader(view, peek.decision);
    QCOMPARE(view.usedNow(), peek.usedNow);
    QCOMPARE(view.fieldText(QStringLiteral("Format")), QStringLiteral("counter window (60s) of legacy:acme"));
    QVERIFY2(view.fieldText(QStringLiteral("Policy")).startsWith(QStringLiteral("legacy (legacy:acme)")),
             qPrintable(view.fieldText(QStringLiteral("Policy"))));
    const StateChart *chart = view.stateChart();
    QCOMPARE(chart->family(), StateChart::Family::SlidingCounter);
    QCOMPARE(chart->points(QStringLiteral("previous")).first().y(), 9.0);
    QCOMPARE(chart->points(QStringLiteral("current")).first().y(), 5.0);
    QVERIFY2(view.titleText().contains(QStringLiteral("counter windows of legacy:acme")), qPrintable(view.titleText()));
}

void TestKeyView::slidingLogInLogView()
{
    const LimitSpec spec{Algorithm::SlidingLog, 10, 10 * kSecond, 1};
    declare(*m_c, QStringLiteral("log"), "t:log:*", spec);
    const QByteArray key = "t:log:frank";
    admit(*m_c, key, spec, 4, kBase + kSecond);
    const qint64 now = kBase + 3 * kSecond;
    KeyView view(m_client.get(), key, kNs);
    QVERIFY(drawnAt(view, now));
    compareHeader(view, Limiter(*m_c).peek(key, spec, now));
    QVERIFY(view.logView());
    QVERIFY(view.logView()->isLoaded()); // part of the view's first picture
    QVERIFY(view.messageText().isEmpty());
}

void TestKeyView::foreignTokenBucket()
{
    // Another service's bucket: a level and the time it was measured (epoch seconds); the
    // core has no peek for it, so the view refills it at the policy's rate itself.
    const LimitSpec spec{Algorithm::TokenBucket, 10, 10 * kSecond, 1};
    declare(*m_c, QStringLiteral("partner-bucket"), "t:ftb:*", spec);
    const QByteArray key = "t:ftb:acme";
    m_c->command({"HSET", key, "tokens", "3", "ts", QByteArray::number(kBase / kSecond)});
    const qint64 now = kBase + 2500000; // 3 + 2.5 refilled
    KeyView view(m_client.get(), key, kNs);
    QVERIFY(drawnAt(view, now));
    QCOMPARE(view.fieldText(QStringLiteral("Format")), QStringLiteral("token-bucket (foreign)"));
    const StateChart *chart = view.stateChart();
    QCOMPARE(chart->family(), StateChart::Family::TokenBucket);
    const QList<QPointF> curve = chart->points(QStringLiteral("tokens"));
    QCOMPARE(curve.first(), QPointF(0, 5));
    QCOMPARE(curve.at(1), QPointF(4500000, 10)); // 4.5 tokens at one a second
    QVERIFY2(view.titleText().contains(QStringLiteral("5 of 10 tokens")), qPrintable(view.titleText()));
}

void TestKeyView::missingKey()
{
    declare(*m_c, QStringLiteral("sc"), "t:sc:*", {Algorithm::SlidingCounter, 60, 60 * kSecond, 1});
    const QByteArray key = "t:sc:nobody";
    KeyView view(m_client.get(), key, kNs);
    QVERIFY(drawnAt(view, kBase));
    QCOMPARE(view.fieldText(QStringLiteral("Type")), QStringLiteral("none"));
    QVERIFY2(view.messageText().startsWith(QStringLiteral("This key does not exist (now)")), qPrintable(view.messageText()));
    // A policy covers it: the header says what a first request would be told.
    const Decision fresh = Limiter(*m_c).peek(key, {Algorithm::SlidingCounter, 60, 60 * kSecond, 1}, kBase);
    compareHeader(view, fresh);
}

// The base of a sharded limiter (no key of its own): its shards side by side, each against its
// share of the group's limit, and the group's used summed in the header. A shard's own view
// gets its share as the limit.
void TestKeyView::shardedGroup()
{
    PolicyStore store(*m_c, QString::fromUtf8(kNs));
    Policy p;
    p.name = QStringLiteral("sh");
    p.match = "t:sh:*";
    p.spec = {Algorithm::FixedWindow, 40, 3600 * kSecond, 1};
    p.shards = 4;
    store.set(p, 0, QStringLiteral("tst_keyview"));
    const int used[] = {3, 10, 0, 6};
    for (int i = 0; i < 4; ++i)
        if (used[i])
            admit(*m_c, "t:sh:{a}:" + QByteArray::number(i), {Algorithm::FixedWindow, 10, 3600 * kSecond, 1}, used[i], kBase);
    KeyView view(m_client.get(), "t:sh:{a}", kNs);
    QVERIFY(drawnAt(view, kBase));
    QVERIFY(view.shardChart());
    QCOMPARE(view.shardChart()->barCount(), 4);
    QCOMPARE(view.shardChart()->usedValues(), (std::vector<qint64>{3, 10, 0, 6}));
    QCOMPARE(view.shardChart()->title(), QStringLiteral("4 shards: 19 of 40 used · busiest 1 (skew 2.11)"));
    QCOMPARE(view.fieldText(QStringLiteral("Used")), QStringLiteral("19 of 40 (summed over 4 shards)"));
    QVERIFY2(view.fieldText(QStringLiteral("Format")).startsWith(QStringLiteral("sharded: 4 shards")),
             qPrintable(view.fieldText(QStringLiteral("Format"))));
    KeyView shard(m_client.get(), "t:sh:{a}:1", kNs);
    QVERIFY(drawnAt(shard, kBase));
    QCOMPARE(shard.fieldText(QStringLiteral("Used")), QStringLiteral("10 of 10"));
    store.remove(QStringLiteral("sh"), 1, QStringLiteral("tst_keyview"));
}

void TestKeyView::otherLibrariesDrawnAsTheirFamily()
{
    // A Spring Cloud Gateway bucket (opened at its second key) is drawn as a token bucket from
    // its own rule; a rate-limiter-flexible counter over its limit as a full fixed window.
    PolicyStore store(*m_c, QString::fromUtf8(kNs));
    Policy gw;
    gw.name = QStringLiteral("gw");
    gw.match = "request_rate_limiter.*";
    gw.spec = {Algorithm::TokenBucket, 10, 5 * kSecond, 1};
    store.set(gw, 0, QStringLiteral("tst_keyview"));
    Policy flex = gw;
    flex.name = QStringLiteral("flex");
    flex.match = "rlflx:*";
    flex.spec = {Algorithm::FixedWindow, 10, 60 * kSecond, 1};
    store.set(flex, 0, QStringLiteral("tst_keyview"));
    m_c->pipeline({{"SET", "request_rate_limiter.{kv}.tokens", "4"},
                   {"SET", "request_rate_limiter.{kv}.timestamp", QByteArray::number(kBase / kSecond)},
                   {"SET", "rlflx:kv", "14", "PX", "60000"}});

    KeyView bucket(m_client.get(), "request_rate_limiter.{kv}.timestamp", kNs);
    QVERIFY(drawnAt(bucket, kBase));
    QCOMPARE(bucket.fieldText(QStringLiteral("Format")), QStringLiteral("Spring Cloud Gateway token bucket"));
    QCOMPARE(bucket.fieldText(QStringLiteral("Algorithm")), QStringLiteral("token-bucket"));
    QCOMPARE(bucket.fieldText(QStringLiteral("Used")), QStringLiteral("6 of 10"));
    QVERIFY2(bucket.stateChart()->title().startsWith(QStringLiteral("Spring Cloud Gateway token bucket: 4 of 10 tokens · full in 4")),
             qPrintable(bucket.stateChart()->title()));

    KeyView counter(m_client.get(), "rlflx:kv", kNs);
    QVERIFY(drawnAt(counter, kBase));
    QCOMPARE(counter.fieldText(QStringLiteral("Format")), QStringLiteral("rate-limiter-flexible"));
    QCOMPARE(counter.fieldText(QStringLiteral("Used")), QStringLiteral("14 of 10"));
    QCOMPARE(counter.fieldText(QStringLiteral("Remaining")), QStringLiteral("0"));
    QVERIFY2(counter.stateChart()->title().startsWith(QStringLiteral("rate-limiter-flexible: 14 of 10 used · resets in")),
             qPrintable(counter.stateChart()->title()));
    store.remove(QStringLiteral("gw"), 1, QStringLiteral("tst_keyview"));
    store.remove(QStringLiteral("flex"), 1, QStringLiteral("tst_keyview"));
}

void TestKeyView::notALimiter()
{
    QCOMPARE(m_c->command({"SET", "t:plain", "hello"}).text(), QStringLiteral("OK"));
    KeyView view(m_client.get(), "t:plain", kNs);
    QVERIFY(drawnAt(view, kBase));
    QCOMPARE(view.messageText(),
             QStringLiteral("This key is a string, not a rate limiter Ratescope recognises: there is no limiter state to draw."));
    QCOMPARE(view.fieldText(QStringLiteral("Format")), QStringLiteral("not a limiter Ratescope recognises"));
    QCOMPARE(view.fieldText(QStringLiteral("Used")), QStringLiteral("–"));
    QVERIFY(!view.decision());
}

void TestKeyView::binaryAndMarkupKeyNames()
{
    for (const QByteArray &key : {QByteArray("bin\x00\xff\nkey", 9), QByteArray("<b>x</b>")}) {
        QCOMPARE(m_c->command({"SET", key, "1"}).text(), QStringLiteral("OK"));
        KeyView view(m_client.get(), key, kNs);
        QVERIFY(drawnAt(view, kBase));
        QCOMPARE(view.key(), key);
        QCOMPARE(view.fieldText(QStringLiteral("Type")), QStringLiteral("string"));
        bool found = false;
        for (const QLabel *l : view.findChildren<QLabel *>()) {
            if (l->text() != displayKey(key))
                continue;
            found = true;
            QCOMPARE(l->textFormat(), Qt::PlainText); // never rich text
        }
        QVERIFY2(found, qPrintable(displayKey(key)));
    }
    QCOMPARE(displayKey(QByteArray("bin\x00\xff\nkey", 9)), QStringLiteral("\"bin\\x00\\xff\\nkey\""));
}

void TestKeyView::lostConnection()
{
    SandboxServer server;
    server.start();
    {
        Connection c(server.options());
        const LimitSpec spec{Algorithm::SlidingCounter, 60, 60 * kSecond, 1};
        declare(c, QStringLiteral("sc"), "t:sc:*", spec);
        admit(c, "t:sc:lost", spec, 4, kBase + kSecond);
    }
    RedisClient client(server.options());
    client.open();
    KeyView view(&client, "t:sc:lost", kNs);
    QVERIFY(drawnAt(view, kBase + 2 * kSecond));
    QVERIFY(!view.isStale());
    QCOMPARE(view.fieldText(QStringLiteral("Used")), QStringLiteral("4 of 60"));

    server.stop();
    view.refresh(); // a read now fails rather than waiting for the next heartbeat
    QTRY_VERIFY_WITH_TIMEOUT(view.isStale(), 20000);
    const QString asOf = QDateTime::fromMSecsSinceEpoch((kBase + 2 * kSecond) / 1000).toString(QStringLiteral("HH:mm:ss"));
    QCOMPARE(view.staleText(), QStringLiteral("Connection lost — values as of %1").arg(asOf));
    QCOMPARE(view.fieldText(QStringLiteral("Used")), QStringLiteral("4 of 60")); // kept, but marked stale
    if (const QString dir = qEnvironmentVariable("KEYVIEW_SHOTS_DIR"); !dir.isEmpty()) {
        view.resize(960, 720);
        QVERIFY(view.grab().save(dir + QStringLiteral("/kv-stale.png")));
    }

    server.restart(); // comes back (empty): the next good read clears the marker
    QTRY_VERIFY_WITH_TIMEOUT(!view.isStale(), 40000);
    QVERIFY(view.staleText().isEmpty());
}

void TestKeyView::pausedWhileHidden()
{
    QTabWidget tabs;
    auto *first = new KeyView(m_client.get(), "t:sc:alice", kNs);
    auto *second = new KeyView(m_client.get(), "t:fw:bob", kNs);
    tabs.addTab(first, QStringLiteral("alice"));
    tabs.addTab(second, QStringLiteral("bob"));
    first->setRefreshInterval(250);
    second->setRefreshInterval(250);
    QCOMPARE(first->refreshInterval(), 250);
    tabs.resize(1000, 700);
    tabs.show();
    QVERIFY(QTest::qWaitForWindowExposed(&tabs));
    QVERIFY(first->isAutoRefreshActive());
    QVERIFY(!second->isAutoRefreshActive()); // its tab is not shown
    const int start = first->readsStarted();
    QTRY_VERIFY_WITH_TIMEOUT(first->readsStarted() >= start + 3, 10000); // it reads on its own while shown

    tabs.setCurrentIndex(1);
    QVERIFY(!first->isAutoRefreshActive());
    QVERIFY(second->isAutoRefreshActive());
    const int hiddenAt = second->readsStarted();
    QTRY_VERIFY_WITH_TIMEOUT(second->readsStarted() >= hiddenAt + 2, 10000);

    first->setRefreshInterval(0); // off, even when shown
    tabs.setCurrentIndex(0);
    QVERIFY(!first->isAutoRefreshActive());
    first->setRefreshInterval(1000);
    QVERIFY(first->isAutoRefreshActive());
    tabs.hide();
    QVERIFY(!first->isAutoRefreshActive());
    QVERIFY(!second->isAutoRefreshActive());
}

void TestKeyView::pinButton()
{
    KeyView view(m_client.get(), "t:sc:alice", kNs);
    QSignalSpy pinned(&view, &KeyView::pinRequested);
    QPushButton *pin = nullptr;
    for (QPushButton *b : view.findChildren<QPushButton *>())
        if (b->text() == QStringLiteral("Pin to monitor"))
            pin = b;
    QVERIFY(pin);
    pin->click();
    QCOMPARE(pinned.size(), 1);
    QCOMPARE(pinned.first().first().toByteArray(), QByteArray("t:sc:alice"));
}

// With KEYVIEW_SHOTS_DIR set, renders each kind of view at the size of a key's tab in a
// 1280x800 window, in the default and in a dark palette, for a person to look at.
void TestKeyView::screenshots()
{
    const QString dir = qEnvironmentVariable("KEYVIEW_SHOTS_DIR");
    if (dir.isEmpty())
        QSKIP("KEYVIEW_SHOTS_DIR not set");
    QPalette dark;
    dark.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
    dark.setColor(QPalette::WindowText, QColor(0xe8, 0xe8, 0xe8));
    dark.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
    dark.setColor(QPalette::AlternateBase, QColor(0x26, 0x26, 0x26));
    dark.setColor(QPalette::Text, QColor(0xe8, 0xe8, 0xe8));
    dark.setColor(QPalette::Button, QColor(0x3a, 0x3a, 0x3a));
    dark.setColor(QPalette::ButtonText, QColor(0xe8, 0xe8, 0xe8));
    dark.setColor(QPalette::PlaceholderText, QColor(0xa0, 0xa0, 0xa0));
    dark.setColor(QPalette::Disabled, QPalette::WindowText, QColor(0x80, 0x80, 0x80));
    const struct {
        const char *name;
        QByteArray key;
        qint64 now;
    } shots[] = {
        {"sliding-counter", "t:sc:alice", kBase + 45 * kSecond},
        {"sliding-buckets", "t:sb:ada", kBase + 4 * kSecond + 1},
        {"fixed-window", "t:fw:bob", kBase + 48 * kSecond},
        {"token-bucket", "t:tb:carol", kBase + 2500000},
        {"token-bucket-empty", "t:tb:dave", kBase + 400000},
        {"gcra", "t:gcra:erin", kBase + 3 * kSecond},
        {"counter-window", "legacy:acme:" + QByteArray::number(kBase / (60 * kSecond)), kBase + 30 * kSecond},
        {"override", "t:sc:vip", kBase + 2 * kSecond},
        {"sliding-log", "t:log:frank", kBase + 3 * kSecond},
        {"not-a-limiter", "t:plain", kBase},
        {"missing", "t:sc:nobody", kBase},
    };
    for (const auto &shot : shots) {
        for (bool isDark : {false, true}) {
            KeyView view(m_client.get(), shot.key, kNs);
            if (isDark)
                view.setPalette(dark);
            view.resize(960, 720);
            view.show();
            QVERIFY(QTest::qWaitForWindowExposed(&view));
            QVERIFY(drawnAt(view, shot.now));
            QCoreApplication::processEvents();
            const QString path =
                QStringLiteral("%1/kv-%2%3.png").arg(dir, QLatin1String(shot.name), isDark ? QStringLiteral("-dark") : QString());
            QVERIFY(view.grab().save(path));
        }
    }
}

// What is on screen after a lost connection: the window's own pixels (its backing store, which
// the offscreen platform grabs) are exactly a fresh render of the view, for a log and for a
// counter; the charts drawn faint by themselves. An opacity effect over the stack of charts
// left a faint, shifted ghost copy of the chart in the window, which grab() never showed.
void TestKeyView::lostConnectionLeavesNoGhost()
{
    SandboxServer server;
    server.start();
    const LimitSpec logSpec{Algorithm::SlidingLog, 10, 10 * kSecond, 1};
    const LimitSpec counterSpec{Algorithm::SlidingCounter, 60, 60 * kSecond, 1};
    {
        Connection c(server.options());
        declare(c, QStringLiteral("log"), "t:log:*", logSpec);
        declare(c, QStringLiteral("sc"), "t:sc:*", counterSpec);
        admit(c, "t:log:ghost", logSpec, 4, kBase + kSecond);
        admit(c, "t:sc:ghost", counterSpec, 4, kBase + kSecond);
    }
    RedisClient client(server.options());
    client.open();
    std::vector<std::unique_ptr<KeyView>> views;
    for (const char *key : {"t:log:ghost", "t:sc:ghost"}) {
        views.push_back(std::make_unique<KeyView>(&client, key, kNs));
        KeyView &view = *views.back();
        view.resize(960, 720);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(drawnAt(view, kBase + 3 * kSecond));
    }
    QVERIFY(views[0]->logView());

    // The pixels in the window against a render of the view now; every chart painted again
    // first, as a mouse passing over them does.
    auto onScreenIsDrawn = [](KeyView &view) {
        for (QChartView *chart : view.findChildren<QChartView *>())
            chart->viewport()->update();
        for (int i = 0; i < 3; ++i)
            QCoreApplication::processEvents();
        const QImage screen = QGuiApplication::primaryScreen()->grabWindow(view.winId()).toImage().convertToFormat(QImage::Format_RGB32);
        const QImage fresh = view.grab().toImage().convertToFormat(QImage::Format_RGB32);
        if (const QString dir = qEnvironmentVariable("KEYVIEW_SHOTS_DIR"); !dir.isEmpty()) {
            const QString name = QString::fromUtf8(view.key()).replace(QLatin1Char(':'), QLatin1Char('-'));
            screen.save(QStringLiteral("%1/kv-%2-screen.png").arg(dir, name));
            fresh.save(QStringLiteral("%1/kv-%2-grab.png").arg(dir, name));
        }
        return screen == fresh;
    };
    for (auto &view : views)
        QVERIFY2(onScreenIsDrawn(*view), view->key().constData());

    server.stop();
    for (auto &view : views) {
        view->refresh(); // a read now fails rather than waiting for the next heartbeat
        QTRY_VERIFY_WITH_TIMEOUT(view->isStale(), 20000);
    }
    for (auto &view : views) {
        QVERIFY2(onScreenIsDrawn(*view), view->key().constData());
        for (QWidget *w : view->findChildren<QWidget *>())
            QVERIFY2(!w->graphicsEffect(), qPrintable(w->objectName() + QLatin1Char(' ') + QLatin1String(w->metaObject()->className())));
    }
    QVERIFY(views[0]->logView()->chart()->opacity() < 1); // faint: not live
    QVERIFY(views[1]->stateChart()->chart()->opacity() < 1);
    // The lost connection said once, by the view, not again by its log view, whose line still
    // says what the chart holds.
    QVERIFY(views[0]->staleText().startsWith(QStringLiteral("Connection lost — values as of")));
    const QString logLine = views[0]->logView()->statusText();
    QVERIFY2(logLine.contains(QStringLiteral("entries read from the last")) && !logLine.contains(QStringLiteral("Not live")) &&
                 !logLine.contains(QStringLiteral("connection"), Qt::CaseInsensitive),
             qPrintable(logLine));
    QVERIFY(!views[0]->logView()->isShownLive());
}

QTEST_MAIN(TestKeyView)
#include "tst_keyview.moc"
