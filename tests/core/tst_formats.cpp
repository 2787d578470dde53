// Other libraries' and gateways' limiters against a real redis-server: for each format, its
// state written as the library writes it (the commands and values of its own source), read
// back with the right algorithm, used, remaining, retry-after and reset-after at a given now,
// and every key unchanged (DUMP) after keys, inspect and peek. Over-limit states read as used >
// limit, remaining 0. Random application keys stay "other". Two-key formats are one row and
// reset removes both keys; check and burst refuse another service's limiter.
#include "redis/connection.h"
#include "keys/inspector.h"
#include "keys/keyscanner.h"
#include "formats/formatreaders.h"
#include "admin/policy.h"
#include "keys/reset.h"
#include "testsupport.h"
#include "formats/usage.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QTest>
#include <QUuid>

#include <functional>
#include <map>

using namespace ratescope;
using namespace ratescope::test;

namespace {

constexpr qint64 kSecond = 1000000;
// A fixed "now", a quarter second into a minute that starts no hour (10:30:20.25 UTC).
constexpr qint64 kNowS = 1795516220;
constexpr qint64 kNow = kNowS * kSecond + 250000;

Policy policy(const QString &name, const QByteArray &match, Algorithm a, qint64 limit, qint64 windowUs, const QString &format = {})
{
    Policy p;
    p.name = name;
    p.match = match;
    p.spec = {a, limit, windowUs, 1};
    p.format = format;
    return p;
}

// What one read says.
struct Expected {
    QString label;
    std::optional<Algorithm> algorithm;
    qint64 usedNow = 0;
    bool allowed = true;
    qint64 used = 0; // after a request of cost 1
    qint64 remaining = 0;
    qint64 retryAfterUs = 0;
    qint64 resetAfterUs = 0;
};

} // namespace

class TestFormats : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        m_server.start();
        m_conn = std::make_unique<Connection>(m_server.options());
    }
    void init() { m_conn->command({"FLUSHALL"}); }

    void everyFormatIsListed();
    void eachFormatReadsAsItsLibraryWrites_data();
    void eachFormatReadsAsItsLibraryWrites();
    void ttlWindowsReadTheirTtl();
    void pythonLimitsSlidingWindowWeighsThePreviousKey();
    void pythonLimitsWrittenByTheLibraryItself();
    void overLimitStatesReadAsTheyAre();
    void declaredFormatsNeedAPolicy();
    void randomApplicationKeysStayOther();
    void longCounterWindowsNeedTheirPolicy();
    void twoKeyFormatsAreOneRowAndResetRemovesBoth();
    void windowKeysOfANameAreResetTogether();
    void checkAndBurstRefuseAnotherServicesLimiter();
    void cliReadsWithoutWriting();

private:
    // Classifies the keys as the scanner does, with these policies.
    std::map<QByteArray, KeyKind> classifyAll(const std::vector<QByteArray> &keys, const std::vector<Policy> &policies, qint64 now)
    {
        KeyRound round;
        round.nowUs = now;
        round.policies = &policies;
        std::map<QByteArray, KeyKind> out;
        for (const KeyRecord &r : readKeyRecords(*m_conn, keys, round).records)
            out[r.key] = r.kind;
        return out;
    }
    QByteArray dumps() { return keyspaceSnapshot(*m_conn); }
    std::map<QString, QJsonObject> keysJson(const QStringList &extra = {}) { return keysRows(m_server.url(), extra); }
    void setPolicy(const Policy &p) { PolicyStore(*m_conn, QStringLiteral("ratescope:")).set(p, 0, QStringLiteral("test")); }

    SandboxServer m_server;
    std::unique_ptr<Connection> m_conn;
};

void TestFormats::everyFormatIsListed()
{
    const CliResult r = runCli({QStringLiteral("--json"), QStringLiteral("formats")});
    QCOMPARE(r.exitCode, 0);
    QStringList names;
    for (const QByteArray &line : r.out.split('\n'))
        if (!line.trimmed().isEmpty())
            names << QJsonDocument::fromJson(line).object().value(QStringLiteral("name")).toString();
    for (const char *n :
         {"envoy", "kong", "upstash-window", "upstash-token-bucket", "rack-attack", "rate-limiter-flexible", "bucketed-counter",
          "rate-limit-redis", "limits-fixed-window", "limits-sliding-window", "limits-moving-window", "laravel", "laravel-duration",
          "spring-cloud-gateway", "redis_rate", "redis-cell", "rolling-rate-limiter", "bucket4j"})
        QVERIFY2(names.contains(QLatin1String(n)), n);
    QCOMPARE(names.size(), qsizetype(formatReaders().size()));
    // A policy naming an unknown format is refused before anything is written.
    const CliResult bad = runCli({QStringLiteral("--url"), m_server.url(), QStringLiteral("policy"), QStringLiteral("set"),
                                  QStringLiteral("p"), QStringLiteral("--match"), QStringLiteral("x:*"), QStringLiteral("--algo"),
                                  QStringLiteral("fixed-window"), QStringLiteral("--limit"), QStringLiteral("5"),
                                  QStringLiteral("--window"), QStringLiteral("1m"), QStringLiteral("--format"), QStringLiteral("nosuch")});
    QCOMPARE(bad.exitCode, 2);
    QVERIFY2(bad.err.contains("unknown format 'nosuch'") && bad.err.contains("redis-cell"), bad.err.constData());
    QCOMPARE(m_conn->command({"EXISTS", "ratescope:policies"}).toInteger(), 0);
}

// Each row: the state a library writes (for kNow), the key to read, the policy its service's
// limits make, and what a request of cost 1 is told at kNow.
void TestFormats::eachFormatReadsAsItsLibraryWrites_data()
{
    using Write = std::function<void(Connection &)>;
    QTest::addColumn<Write>("write");
    QTest::addColumn<QByteArray>("key");
    QTest::addColumn<QByteArray>("row"); // the limiter's name (the row `keys` lists)
    QTest::addColumn<std::optional<Policy>>("pol");
    QTest::addColumn<Expected>("expected");

    const QByteArray minuteStartS = QByteArray::number(kNowS - kNowS % 60);
    const qint64 inMinute = kNow % (60 * kSecond);

    // Envoy: INCRBY + EXPIRE on "<domain>_<key>_<value>_<unit start>", per-minute unit.
    const QByteArray envoy = "api_remote_address_10.0.0.1_" + minuteStartS;
    QTest::newRow("envoy") << Write([=](Connection &c) {
        c.pipeline({{"INCRBY", envoy, "7"}, {"EXPIRE", envoy, "60"}});
    }) << envoy << QByteArray("api_remote_address_10.0.0.1")
                           << std::optional(policy("envoy", "api_*", Algorithm::FixedWindow, 10, 60 * kSecond))
                           << Expected{
                                  QStringLiteral("Envoy ratelimit"), Algorithm::FixedWindow, 7, true, 8, 2, 0, 60 * kSecond - inMinute};

    // Kong: "ratelimit:<route>:<service>:<identifier>:<period start ms>:<period>".
    const QByteArray kong = "ratelimit:3f1c:9a2b:203.0.113.9:" + QByteArray::number((kNowS - kNowS % 60) * 1000) + ":minute";
    QTest::newRow("kong") << Write([=](Connection &c) {
        c.pipeline({{"INCRBY", kong, "5"}, {"EXPIRE", kong, "60"}});
    }) << kong << QByteArray("ratelimit:3f1c:9a2b:203.0.113.9:minute")
                          << std::optional(policy("kong", "ratelimit:*", Algorithm::FixedWindow, 5, 60 * kSecond))
                          << Expected{QStringLiteral("Kong rate-limiting"),
                                      Algorithm::FixedWindow,
                                      5,
                                      false,
                                      5,
                                      0,
                                      60 * kSecond - inMinute,
                                      60 * kSecond - inMinute};

    // Upstash fixed window: "<prefix>:<identifier>:<floor(ms / window)>" and PEXPIRE window.
    const QByteArray upstash = "@upstash/ratelimit:user42:" + QByteArray::number(kNow / 1000 / 10000);
    const qint64 in10s = kNow % (10 * kSecond);
    QTest::newRow("upstash fixed") << Write([=](Connection &c) {
        c.pipeline({{"INCRBY", upstash, "3"}, {"PEXPIRE", upstash, "10000"}});
    }) << upstash << QByteArray("@upstash/ratelimit:user42")
                                   << std::optional(policy("up", "@upstash/*", Algorithm::FixedWindow, 10, 10 * kSecond))
                                   << Expected{
                                          QStringLiteral("Upstash Ratelimit window"), std::nullopt, 3, true, 4, 6, 0, 10 * kSecond - in10s};

    // Upstash sliding window: the current and the previous bucket, the previous weighted by
    // the part of it still in the window: floor((1 - 0.025) x 8) = 7, plus 2.
    const QByteArray upCur = "@upstash/ratelimit:user43:" + QByteArray::number(kNow / 1000 / 10000);
    const QByteArray upPrev = "@upstash/ratelimit:user43:" + QByteArray::number(kNow / 1000 / 10000 - 1);
    QTest::newRow("upstash sliding") << Write([=](Connection &c) {
        c.pipeline({{"SET", upCur, "2"}, {"SET", upPrev, "8"}});
    }) << upCur << QByteArray("@upstash/ratelimit:user43")
                                     << std::optional(policy("up", "@upstash/*", Algorithm::SlidingCounter, 10, 10 * kSecond))
                                     << Expected{QStringLiteral("Upstash Ratelimit window"), std::nullopt, 9, true, 10, 0, 0,
                                                 10 * kSecond - 250000 + 10 * kSecond};

    // Upstash token bucket: HSET refilledAt (ms) and tokens; one token every 6 s (10 per minute).
    const QByteArray upTb = "@upstash/ratelimit:bucket:user44";
    QTest::newRow("upstash token bucket")
        << Write([=](Connection &c) {
               c.command({"HSET", upTb, "refilledAt", QByteArray::number(kNow / 1000 - 4000), "tokens", "3"});
           })
        << upTb << upTb << std::optional(policy("up", "@upstash/*", Algorithm::TokenBucket, 10, 60 * kSecond))
        << Expected{QStringLiteral("Upstash Ratelimit token bucket"), Algorithm::TokenBucket, 7, true, 8, 2, 0, 2000000 + 7 * 6 * kSecond};

    // rack-attack: "rack::attack:<floor(epoch / period)>:<name>:<discriminator>", every request counted.
    const QByteArray rack = "rack::attack:" + QByteArray::number(kNowS / 60) + ":req/ip:192.0.2.7";
    QTest::newRow("rack-attack") << Write([=](Connection &c) {
        c.pipeline({{"INCRBY", rack, "12"}, {"EXPIRE", rack, "60"}});
    }) << rack << QByteArray("rack::attack:req/ip:192.0.2.7")
                                 << std::optional(policy("rack", "rack::attack:*", Algorithm::FixedWindow, 10, 60 * kSecond))
                                 << Expected{QStringLiteral("rack-attack throttle"),
                                             Algorithm::FixedWindow,
                                             12,
                                             false,
                                             12,
                                             0,
                                             60 * kSecond - inMinute,
                                             60 * kSecond - inMinute};

    // Python limits moving window: LPUSH of float seconds, newest first, LTRIM to the amount.
    const QByteArray moving = "LIMITS:LIMITER/search/u9/3/10/second";
    QTest::newRow("limits moving window")
        << Write([=](Connection &c) {
               c.pipeline({{"LPUSH", moving, QByteArray::number(double(kNow - 9 * kSecond) / 1e6, 'f', 6),
                            QByteArray::number(double(kNow - 4 * kSecond) / 1e6, 'f', 6),
                            QByteArray::number(double(kNow - kSecond) / 1e6, 'f', 6)},
                           {"LTRIM", moving, "0", "2"}});
           })
        << moving << moving << std::optional<Policy>() // the key states its limits: 3 per 10 s
        << Expected{QStringLiteral("Python limits moving window"), Algorithm::SlidingLog, 3, false, 3, 0, kSecond + 1, 9 * kSecond + 1};

    // Spring Cloud Gateway: tokens and timestamp (Unix s); replenishRate 2/s, burstCapacity 10.
    const QByteArray springTokens = "request_rate_limiter.{user1}.tokens";
    QTest::newRow("spring cloud gateway")
        << Write([=](Connection &c) {
               c.pipeline({{"SETEX", springTokens, "10", "1"},
                           {"SETEX", "request_rate_limiter.{user1}.timestamp", "10", QByteArray::number(kNowS - 1)}});
           })
        << QByteArray("request_rate_limiter.{user1}.timestamp") << springTokens
        << std::optional(policy("spring", "request_rate_limiter.*", Algorithm::TokenBucket, 10, 5 * kSecond))
        // 1 token + 1 s x 2/s = 3; after this request 2; full again after 4 more whole seconds
        << Expected{QStringLiteral("Spring Cloud Gateway token bucket"), Algorithm::TokenBucket, 7, true, 8, 2, 0, 4 * kSecond - 250000};

    // go-redis/redis_rate: TAT as float seconds since 2017-01-01, 10 per second (T = 100 ms).
    const QByteArray rate = "rate:acct:7";
    QTest::newRow("redis_rate") << Write([=](Connection &c) {
        c.command({"SET", rate, QByteArray::number(double(kNow + 450000) / 1e6 - 1483228800.0, 'f', 6), "EX", "1"});
    }) << rate << rate
                                << std::optional(policy("rr", "rate:*", Algorithm::Gcra, 10, kSecond))
                                // TAT 450 ms ahead: 5 used; this request moves it to 550 ms: 4 remain
                                << Expected{QStringLiteral("redis_rate GCRA"), Algorithm::Gcra, 5, true, 6, 4, 0, 550000};

    // rate-limiter-flexible: "rlflx:<key>" with PX duration.
    QTest::newRow("rate-limiter-flexible") << Write([](Connection &c) {
        c.command({"SET", "rlflx:login:alice", "3", "PX", "60000"});
    }) << QByteArray("rlflx:login:alice") << QByteArray("rlflx:login:alice")
                                           << std::optional(policy("rlf", "rlflx:*", Algorithm::FixedWindow, 5, 60 * kSecond))
                                           << Expected{
                                                  QStringLiteral("rate-limiter-flexible"), Algorithm::FixedWindow, 3, true, 4, 1, 0, -1};

    // Laravel's throttle middleware: the counter and its ":timer" (available at, Unix s).
    const QByteArray laravel = "laravel_database_laravel_cache_5f4dcc3b5aa765d61d8327deb882cf99";
    QTest::newRow("laravel") << Write([=](Connection &c) {
        c.pipeline({{"SET", laravel + ":timer", QByteArray::number(kNowS + 30), "EX", "60"}, {"SET", laravel, "60", "EX", "60"}});
    }) << laravel + ":timer" << laravel
                             << std::optional(policy("lara", "laravel_*", Algorithm::FixedWindow, 60, 60 * kSecond))
                             << Expected{QStringLiteral("Laravel RateLimiter"),
                                         Algorithm::FixedWindow,
                                         60,
                                         false,
                                         60,
                                         0,
                                         30 * kSecond - 250000,
                                         30 * kSecond - 250000};

    // Laravel 13's hyphenated prefixes, a legacy throttle key (sha1), a PHP-serialized timer.
    const QByteArray laravel13 = "laravel-database-laravel-cache-da39a3ee5e6b4b0d3255bfef95601890afd80709";
    QTest::newRow("laravel 13")
        << Write([=](Connection &c) {
               c.pipeline({{"SET", laravel13 + ":timer", "i:" + QByteArray::number(kNowS + 50) + ";", "EX", "60"},
                           {"SET", laravel13, "4", "EX", "60"}});
           })
        << laravel13 + ":timer" << laravel13 << std::optional(policy("lara", "laravel-*", Algorithm::FixedWindow, 60, 60 * kSecond))
        << Expected{QStringLiteral("Laravel RateLimiter"), Algorithm::FixedWindow, 4, true, 5, 55, 0, 50 * kSecond - 250000};

    // Laravel's DurationLimiter: HMSET start, end, count (Unix s).
    QTest::newRow("laravel duration") << Write([](Connection &c) {
        c.command({"HMSET", "jobs:mail", "start", QByteArray::number(kNowS - 20), "end", QByteArray::number(kNowS + 40), "count", "2"});
    }) << QByteArray("jobs:mail") << QByteArray("jobs:mail")
                                      << std::optional(policy("dur", "jobs:*", Algorithm::FixedWindow, 3, 60 * kSecond))
                                      << Expected{QStringLiteral("Laravel DurationLimiter"),
                                                  Algorithm::FixedWindow,
                                                  2,
                                                  true,
                                                  3,
                                                  0,
                                                  0,
                                                  40 * kSecond - 250000 + 1};

    // A bucketed sliding counter: second buckets kNowS-10 .. kNowS, 2 each; over (now - 10 s,
    // now] the oldest counts 0.75: 21.5, floored to 21.
    const auto bucketed = [](const QByteArray &key) {
        return [key](Connection &c) {
            Command hset{"HSET", key};
            for (qint64 t = kNowS - 10; t <= kNowS; ++t)
                hset << QByteArray::number(t) << "2";
            c.command(hset);
        };
    };
    QTest::newRow("bucketed counter") << Write(bucketed("counts:acme")) << QByteArray("counts:acme") << QByteArray("counts:acme")
                                      << std::optional(policy("b", "counts:*", Algorithm::SlidingCounter, 25, 10 * kSecond))
                                      << Expected{
                                             QStringLiteral("bucketed counter"), Algorithm::SlidingCounter, 21, true, 22, 3, 0, 10750000};
    // Full at 21: a request passes once the oldest bucket's share is under 1.5, 0.25 s (and one
    // µs) from now.
    QTest::newRow("bucketed counter full")
        << Write(bucketed("counts:bob")) << QByteArray("counts:bob") << QByteArray("counts:bob")
        << std::optional(policy("b", "counts:*", Algorithm::SlidingCounter, 21, 10 * kSecond))
        << Expected{QStringLiteral("bucketed counter"), Algorithm::SlidingCounter, 21, false, 21, 0, 250001, 10750000};

    // rolling-rate-limiter: µs scores, UUID members, attempts stored before they are judged.
    const QByteArray rolling = "rrl:uploads:bob";
    QTest::newRow("rolling-rate-limiter")
        << Write([=](Connection &c) {
               std::vector<Command> adds;
               for (int i = 0; i < 4; ++i)
                   adds.push_back({"ZADD", rolling, QByteArray::number(kNow - (8 - i) * kSecond),
                                   QUuid::createUuid().toString(QUuid::WithoutBraces).toLatin1()});
               c.pipeline(adds);
           })
        << rolling << rolling
        << std::optional(policy("rrl", "rrl:*", Algorithm::SlidingLog, 4, 10 * kSecond))
        // 4 attempts at -8, -7, -6, -5 s: full. The library stores the refused attempt too and
        // tells it to wait for timestamps[5 - 4], the one at -7 s: 3 s.
        << Expected{QStringLiteral("rolling-rate-limiter log"), Algorithm::SlidingLog, 4, false, 4, 0, 3 * kSecond, 5 * kSecond};
}

void TestFormats::eachFormatReadsAsItsLibraryWrites()
{
    using Write = std::function<void(Connection &)>;
    QFETCH(Write, write);
    QFETCH(QByteArray, key);
    QFETCH(QByteArray, row);
    QFETCH(std::optional<Policy>, pol);
    QFETCH(Expected, expected);
    write(*m_conn);
    std::vector<Policy> policies;
    if (pol)
        policies.push_back(*pol);
    const auto before = dumps();

    const KeyKind kind = classifyAll({key}, policies, kNow).at(key);
    QCOMPARE(kind.format, KeyFormat::Library);
    QCOMPARE(kind.label(), expected.label);
    QCOMPARE(kind.subject(key), row);
    const std::optional<LimitSpec> spec = limitsFor(kind, pol ? std::optional(pol->spec) : std::nullopt);
    QVERIFY(spec);
    QCOMPARE(kind.algorithm(), expected.algorithm);

    // Through readUsage (keys, the browser, the monitor) and peekAnyFormat (peek, inspect).
    const auto usage = readUsage(*m_conn, {{row, kind, *spec}}, kNow).front();
    QVERIFY(usage);
    const Usage peeked = peekAnyFormat(*m_conn, row, kind, *spec, kNow);
    for (const Usage &u : {*usage, peeked}) {
        QCOMPARE(u.usedNow, expected.usedNow);
        QCOMPARE(u.decision.allowed, expected.allowed);
        QCOMPARE(u.decision.used, expected.used);
        QCOMPARE(u.decision.remaining, expected.remaining);
        QCOMPARE(u.decision.limit, spec->limit);
        QCOMPARE(u.decision.retryAfterUs, expected.retryAfterUs);
        if (expected.resetAfterUs >= 0) // -1: a TTL of the real clock, checked in ttlWindowsReadTheirTtl
            QCOMPARE(u.decision.resetAfterUs, expected.resetAfterUs);
    }

    // inspect names the library and the limiter's keys, and decides alike.
    InspectOptions o;
    o.nowUs = kNow;
    LimitResolver resolver(policies);
    const QJsonObject in = inspectKey(*m_conn, key, resolver, o);
    QCOMPARE(in.value(QStringLiteral("format")).toString(), expected.label);
    QVERIFY(in.value(QStringLiteral("library_format")).toObject().contains(QStringLiteral("library")));
    QCOMPARE(in.value(QStringLiteral("decision")).toObject().value(QStringLiteral("remaining")).toInteger(), expected.remaining);
    QVERIFY(!in.value(QStringLiteral("state")).toObject().isEmpty());

    QCOMPARE(dumps(), before); // reading never writes
}

void TestFormats::ttlWindowsReadTheirTtl()
{
    // A window that starts at the first request ends when its key expires: the retry is the
    // key's TTL, read between two PTTLs taken around the read.
    m_conn->command({"SET", "rl:203.0.113.5", "12", "PX", "40000"}); // express-rate-limit counts every request
    const std::vector<Policy> policies{policy("erl", "rl:*", Algorithm::FixedWindow, 10, 60 * kSecond)};
    const qint64 now = serverTimeUs(*m_conn);
    const KeyKind kind = classifyAll({"rl:203.0.113.5"}, policies, now).at("rl:203.0.113.5");
    QCOMPARE(kind.label(), QStringLiteral("express-rate-limit (rate-limit-redis)"));
    const qint64 ttlBefore = m_conn->command({"PTTL", "rl:203.0.113.5"}).toInteger();
    const Usage u = peekAnyFormat(*m_conn, "rl:203.0.113.5", kind, policies[0].spec, now);
    const qint64 ttlAfter = m_conn->command({"PTTL", "rl:203.0.113.5"}).toInteger();
    QCOMPARE(u.usedNow, 12);
    QCOMPARE(u.decision.used, 12);
    QCOMPARE(u.decision.remaining, 0);
    QVERIFY(!u.decision.allowed);
    QVERIFY2(u.decision.retryAfterUs <= ttlBefore * 1000 && u.decision.retryAfterUs >= ttlAfter * 1000,
             qPrintable(QStringLiteral("%1 not in [%2, %3] ms").arg(u.decision.retryAfterUs).arg(ttlAfter).arg(ttlBefore)));
    QCOMPARE(u.decision.resetAfterUs, u.decision.retryAfterUs);

    // A window not started yet: the request would start one of the policy's window.
    m_conn->command({"SET", "rlflx:fresh", "0"});
    const KeyKind fresh = classifyAll({"rlflx:fresh"}, {}, now).at("rlflx:fresh");
    const Usage f = peekAnyFormat(*m_conn, "rlflx:fresh", fresh, policies[0].spec, now);
    QVERIFY(f.decision.allowed);
    QCOMPARE(f.decision.remaining, 9);
    QCOMPARE(f.decision.resetAfterUs, 60 * kSecond);

    // Python limits' fixed window states its limits in the key: 5 per 1 minute, no policy.
    m_conn->command({"SET", "LIMITS:LIMITER/login/10.0.0.1/5/1/minute", "7", "EX", "50"});
    const KeyKind lim = classifyAll({"LIMITS:LIMITER/login/10.0.0.1/5/1/minute"}, {}, now).at("LIMITS:LIMITER/login/10.0.0.1/5/1/minute");
    QCOMPARE(lim.label(), QStringLiteral("Python limits fixed window"));
    const auto spec = limitsFor(lim, std::nullopt);
    QVERIFY(spec);
    QCOMPARE(spec->limit, 5);
    QCOMPARE(spec->windowUs, 60 * kSecond);
    const Usage l = peekAnyFormat(*m_conn, "LIMITS:LIMITER/login/10.0.0.1/5/1/minute", lim, *spec, now);
    QCOMPARE(l.usedNow, 7); // refused hits are counted by limits' fixed window
    QCOMPARE(l.decision.remaining, 0);
    QVERIFY(l.decision.retryAfterUs > 40 * kSecond && l.decision.retryAfterUs <= 50 * kSecond);

    // Before limits 3.7 the keys had no "LIMITS:" prefix; an identifier may hold "/".
    m_conn->command({"SET", "LIMITER/api/v1/users/100/2/hour", "1"});
    const KeyKind old = classifyAll({"LIMITER/api/v1/users/100/2/hour"}, {}, now).at("LIMITER/api/v1/users/100/2/hour");
    QCOMPARE(old.label(), QStringLiteral("Python limits fixed window"));
    QCOMPARE(limitsFor(old, std::nullopt)->limit, 100);
    QCOMPARE(limitsFor(old, std::nullopt)->windowUs, 2 * 3600 * kSecond);
}

void TestFormats::pythonLimitsSlidingWindowWeighsThePreviousKey()
{
    // limits' sliding window: "{key}" created with PX 2 x window, renamed to "{key}/-1" when
    // its TTL falls under one window; estimate floor(prev x prev_ttl / window) + current.
    const QByteArray cur = "LIMITS:{LIMITER/api/k1/10/1/minute}", prev = cur + "/-1";
    m_conn->pipeline({{"SET", cur, "3", "PX", "110000"}, {"SET", prev, "8", "PX", "30000"}});
    const qint64 now = serverTimeUs(*m_conn);
    const auto kinds = classifyAll({cur, prev}, {}, now);
    QCOMPARE(kinds.at(cur).label(), QStringLiteral("Python limits sliding window"));
    QCOMPARE(kinds.at(prev).subject(prev), cur); // both keys: one limiter
    const auto spec = limitsFor(kinds.at(cur), std::nullopt);
    QVERIFY(spec);
    QCOMPARE(spec->limit, 10);
    const qint64 ttlBefore = m_conn->command({"PTTL", prev}).toInteger();
    const Usage u = peekAnyFormat(*m_conn, cur, kinds.at(cur), *spec, now);
    const qint64 ttlAfter = m_conn->command({"PTTL", prev}).toInteger();
    // 8 x about 30/60 = 3 (4 at most when the TTLs were read a little later), plus 3
    QVERIFY2(u.usedNow >= 3 + 8 * ttlAfter / 60000 && u.usedNow <= 3 + 8 * ttlBefore / 60000, qPrintable(QString::number(u.usedNow)));
    QVERIFY(u.decision.allowed);

    // The current key past its first window: it has become the previous one (the script's shift).
    m_conn->command({"DEL", prev});
    m_conn->command({"PEXPIRE", cur, "15000"});
    const Usage shifted = peekAnyFormat(*m_conn, cur, kinds.at(cur), *spec, now);
    QVERIFY2(shifted.usedNow <= 3 * 15000 / 60000 + 1, qPrintable(QString::number(shifted.usedNow)));
    QCOMPARE(keysJson().size(), size_t(1));
}

void TestFormats::pythonLimitsWrittenByTheLibraryItself()
{
    // Debian's python3-limits (2.8: keys without the "LIMITS:" prefix, which came in 3.7)
    // writes the keys itself; tools/install-deps.sh installs it for the tests.
    const QString python = QStringLiteral("/usr/bin/python3");
    QProcess probe;
    probe.start(python, {QStringLiteral("-c"), QStringLiteral("import limits, redis")});
    if (!QFileInfo::exists(python) || !probe.waitForFinished(30000) || probe.exitCode() != 0)
        QSKIP("python3-limits and python3-redis are not installed (tools/install-deps.sh installs them)");
    const QString script = QStringLiteral(R"(import sys
from limits import parse
from limits.storage import storage_from_string
from limits.strategies import FixedWindowRateLimiter, MovingWindowRateLimiter
storage = storage_from_string(sys.argv[1])
fixed, moving = FixedWindowRateLimiter(storage), MovingWindowRateLimiter(storage)
print([fixed.hit(parse("5/minute"), "login", "10.0.0.1") for _ in range(7)])
print([moving.hit(parse("3 per 10 second"), "search", "u9") for _ in range(4)])
)");
    QProcess run;
    run.setProcessChannelMode(QProcess::MergedChannels);
    run.start(python, {QStringLiteral("-c"), script, m_server.url()});
    QVERIFY(run.waitForFinished(60000));
    const QByteArray printed = run.readAll();
    QVERIFY2(run.exitCode() == 0, printed.constData());
    QCOMPARE(printed, QByteArray("[True, True, True, True, True, False, False]\n[True, True, True, False]\n"));

    const QByteArray fixedKey = "LIMITER/login/10.0.0.1/5/1/minute", movingKey = "LIMITER/search/u9/3/10/second";
    const auto before = dumps();
    const qint64 now = serverTimeUs(*m_conn);
    const auto kinds = classifyAll({fixedKey, movingKey}, {}, now);
    QCOMPARE(kinds.at(fixedKey).label(), QStringLiteral("Python limits fixed window"));
    QCOMPARE(kinds.at(movingKey).label(), QStringLiteral("Python limits moving window"));
    // The fixed window counted the two refused hits: 7 of 5, none left until the key expires.
    const Usage f = peekAnyFormat(*m_conn, fixedKey, kinds.at(fixedKey), *limitsFor(kinds.at(fixedKey), std::nullopt), now);
    QCOMPARE(f.usedNow, 7);
    QCOMPARE(f.decision.remaining, 0);
    QVERIFY(!f.decision.allowed);
    QVERIFY(f.decision.retryAfterUs > 0 && f.decision.retryAfterUs <= 60 * kSecond);
    // The moving window stored only the three it let through: full until the oldest is 10 s old.
    const Usage m = peekAnyFormat(*m_conn, movingKey, kinds.at(movingKey), *limitsFor(kinds.at(movingKey), std::nullopt), now);
    QCOMPARE(m.usedNow, 3);
    QCOMPARE(m.decision.limit, 3);
    QVERIFY(!m.decision.allowed);
    QVERIFY(m.decision.retryAfterUs > 0 && m.decision.retryAfterUs <= 10 * kSecond + 1);
    QCOMPARE(dumps(), before);
}

void TestFormats::overLimitStatesReadAsTheyAre()
{
    // Counted denials and stored denied attempts: used above the limit, remaining 0, never
    // negative and never clamped.
    m_conn->command({"SET", "rlflx:api:carol", "14", "PX", "60000"});
    std::vector<Command> adds;
    for (int i = 0; i < 14; ++i)
        adds.push_back({"ZADD", "attempts:dave", QByteArray::number(kNow - (14 - i) * 100000),
                        QUuid::createUuid().toString(QUuid::WithoutBraces).toLatin1()});
    m_conn->pipeline(adds);
    const QByteArray envoy = "api_user_eve_" + QByteArray::number(kNowS - kNowS % 60);
    m_conn->command({"SET", envoy, "25"});

    const std::vector<Policy> policies{policy("a", "rlflx:*", Algorithm::FixedWindow, 10, 60 * kSecond),
                                       policy("b", "attempts:*", Algorithm::SlidingLog, 10, 10 * kSecond),
                                       policy("c", "api_*", Algorithm::FixedWindow, 10, 60 * kSecond)};
    const auto kinds = classifyAll({"rlflx:api:carol", "attempts:dave", envoy}, policies, kNow);
    QCOMPARE(kinds.at("attempts:dave").label(), QStringLiteral("rolling-rate-limiter log"));
    for (const auto &[key, used] :
         {std::pair{QByteArray("rlflx:api:carol"), 14}, std::pair{QByteArray("attempts:dave"), 14}, std::pair{envoy, 25}}) {
        const KeyKind &kind = kinds.at(key);
        const LimitSpec spec = *limitsFor(kind, matchPolicy(policies, key)->spec);
        const Usage u = peekAnyFormat(*m_conn, kind.subject(key), kind, spec, kNow);
        QCOMPARE(u.usedNow, used);
        QCOMPARE(u.decision.used, used);
        QCOMPARE(u.decision.remaining, 0);
        QVERIFY(!u.decision.allowed);
        QVERIFY(u.decision.retryAfterUs > 0);
    }
    // The log's retry is the library's: timestamps[15 - 10] of the 15 attempts the refused one
    // makes, at -0.9 s, leaves the 10 s window in 9.1 s.
    const Usage log = peekAnyFormat(*m_conn, "attempts:dave", kinds.at("attempts:dave"), policies[1].spec, kNow);
    QCOMPARE(log.decision.retryAfterUs, 9100000);

    // `keys` says the same: used 14 of 10, remaining 0.
    setPolicy(policies[0]);
    const auto rows = keysJson();
    QCOMPARE(rows.at(QStringLiteral("rlflx:api:carol")).value(QStringLiteral("used")).toInteger(), 14);
    QCOMPARE(rows.at(QStringLiteral("rlflx:api:carol")).value(QStringLiteral("remaining")).toInteger(), 0);
}

void TestFormats::declaredFormatsNeedAPolicy()
{
    // redis-cell keys are the caller's own names (a TAT in ns) and bucket4j's are opaque: only
    // a policy's --format makes them limiters.
    m_conn->command({"SET", "cell:user1", QByteArray::number((kNow + 300000) * 1000)});
    m_conn->command({"SET", "b4j:user1", QByteArray("\x00\x01\x02rate\x00state", 13)});
    auto kinds = classifyAll({"cell:user1", "b4j:user1"}, {}, kNow);
    QCOMPARE(kinds.at("cell:user1").format, KeyFormat::Other);
    QCOMPARE(kinds.at("b4j:user1").format, KeyFormat::Other);

    const std::vector<Policy> policies{policy("cell", "cell:*", Algorithm::Gcra, 10, kSecond, QStringLiteral("redis-cell")),
                                       policy("b4j", "b4j:*", Algorithm::TokenBucket, 10, kSecond, QStringLiteral("bucket4j"))};
    kinds = classifyAll({"cell:user1", "b4j:user1"}, policies, kNow);
    QCOMPARE(kinds.at("cell:user1").label(), QStringLiteral("redis-cell GCRA"));
    const Usage cell = peekAnyFormat(*m_conn, "cell:user1", kinds.at("cell:user1"), policies[0].spec, kNow);
    QCOMPARE(cell.usedNow, 3); // TAT 300 ms ahead at 100 ms per request
    QCOMPARE(cell.decision.remaining, 6);
    QCOMPARE(cell.decision.resetAfterUs, 400000);

    // Envoy declared with a window that is no whole unit: nothing to read, no figures, no crash.
    const QByteArray envoyKey = "api_user_x_" + QByteArray::number(kNowS - kNowS % 60);
    m_conn->command({"SET", envoyKey, "4"});
    const Policy envoyPolicy = policy("e", "api_*", Algorithm::FixedWindow, 10, 1500000, QStringLiteral("envoy"));
    KeyKind envoyKind = classifyAll({envoyKey}, {envoyPolicy}, kNow).at(envoyKey);
    QCOMPARE(envoyKind.label(), QStringLiteral("Envoy ratelimit"));
    envoyKind.windowUs = 0; // as when no unit fits the start
    QCOMPARE(readUsage(*m_conn, {{envoyKind.base, envoyKind, envoyPolicy.spec}}, kNow).front(), std::nullopt);

    QCOMPARE(kinds.at("b4j:user1").label(), QStringLiteral("bucket4j (opaque)"));
    // Its own serialization header (format 1, configuration version 1, one bandwidth, the
    // bandwidth's version 1, then its fields) is recognised without a policy.
    QByteArray serialized("\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x01", 16);
    serialized += QByteArray(71 + 20, '\x07');
    m_conn->command({"SET", "quota:acme", serialized});
    QCOMPARE(classifyAll({"quota:acme"}, {}, kNow).at("quota:acme").label(), QStringLiteral("bucket4j (opaque)"));
    QVERIFY(!kinds.at("b4j:user1").readable());
    QCOMPARE(readUsage(*m_conn, {{"b4j:user1", kinds.at("b4j:user1"), policies[1].spec}}, kNow).front(), std::nullopt);
    InspectOptions o;
    o.nowUs = kNow;
    LimitResolver resolver(policies);
    const QJsonObject in = inspectKey(*m_conn, "b4j:user1", resolver, o);
    QCOMPARE(in.value(QStringLiteral("state")).toObject().value(QStringLiteral("opaque")).toBool(), true);
    QVERIFY(!in.contains(QStringLiteral("decision")));
}

void TestFormats::randomApplicationKeysStayOther()
{
    // 10,000 keys an application keeps: integers, timestamps (s, ms, µs, ns, float s), JSON,
    // UUIDs, hashes and sorted sets of ordinary data. None is taken for a limiter.
    QRandomGenerator rng(20261124);
    const qint64 nowS = kNowS;
    std::vector<Command> writes;
    std::vector<QByteArray> keys;
    const char *stems[] = {"user", "session", "cache:page", "counter", "ts", "order", "cart", "profile", "feature", "job"};
    for (int i = 0; i < 10000; ++i) {
        const QByteArray stem = stems[rng.bounded(10)];
        QByteArray key;
        switch (rng.bounded(4)) {
        case 0:
            key = stem + ":" + QByteArray::number(rng.bounded(1000000));
            break;
        case 1:
            key = stem + ":" + QUuid::createUuidV5(QUuid(), QString::number(i)).toString(QUuid::WithoutBraces).toLatin1();
            break;
        case 2:
            key = stem + "_" + QByteArray::number(rng.bounded(100000)) + "_" + QByteArray::number(i);
            break;
        default:
            key = stem + ":" + QByteArray::number(i) + ":" + QByteArray::number(nowS - rng.bounded(100000000));
        }
        key += ":" + QByteArray::number(i); // unique
        keys.push_back(key);
        switch (rng.bounded(10)) {
        case 0:
            writes.push_back({"SET", key, QByteArray::number(rng.bounded(1000))});
            break;
        case 1:
            writes.push_back({"SET", key, QByteArray::number(nowS - rng.bounded(86400))});
            break;
        case 2:
            writes.push_back({"SET", key, QByteArray::number((nowS - rng.bounded(86400)) * 1000)});
            break;
        case 3:
            writes.push_back({"SET", key, QByteArray::number((nowS - rng.bounded(86400)) * 1000000000LL)});
            break;
        case 4:
            writes.push_back({"SET", key, QByteArray::number(double(nowS) - rng.bounded(86400) + 0.5, 'f', 3)});
            break;
        case 5:
            writes.push_back({"SET", key, "{\"id\":" + QByteArray::number(i) + ",\"ts\":" + QByteArray::number(nowS) + "}"});
            break;
        case 6:
            writes.push_back({"SET", key, QUuid::createUuidV5(QUuid(), QString::number(i + 1)).toString().toLatin1()});
            break;
        case 7:
            writes.push_back({"HSET", key, "name", "x", "count", QByteArray::number(rng.bounded(10)), "updated", QByteArray::number(nowS)});
            break;
        case 8:
            writes.push_back({"ZADD", key, QByteArray::number(rng.bounded(1000)), "player" + QByteArray::number(i)});
            break;
        default:
            writes.push_back({"RPUSH", key, QByteArray::number(nowS), "b", "c"});
        }
    }
    for (size_t from = 0; from < writes.size(); from += 1000)
        m_conn->pipeline(
            std::vector<Command>(writes.begin() + qsizetype(from), writes.begin() + qsizetype(std::min(writes.size(), from + 1000))));
    qint64 limiters = 0;
    for (size_t from = 0; from < keys.size(); from += 1000) {
        const std::vector<QByteArray> batch(keys.begin() + qsizetype(from), keys.begin() + qsizetype(std::min(keys.size(), from + 1000)));
        for (const auto &[key, kind] : classifyAll(batch, {}, kNow)) {
            if (kind.isLimiter()) {
                qWarning() << "taken for" << kind.label() << ":" << key;
                ++limiters;
            }
        }
    }
    QCOMPARE(limiters, 0);
}

void TestFormats::longCounterWindowsNeedTheirPolicy()
{
    // A day's window id (about 20,000) is no sign of a counter by itself; a policy with a day's
    // window has its counters recognised and read.
    const qint64 day = serverTimeUs(*m_conn) / kSecond / 86400;
    m_conn->command({"SET", "daily:api:" + QByteArray::number(day), "5"});
    QVERIFY(keysJson().empty());
    setPolicy(policy("daily", "daily:*", Algorithm::FixedWindow, 100, 86400 * kSecond));
    const auto rows = keysJson();
    QCOMPARE(rows.size(), size_t(1));
    const QJsonObject row = rows.at(QStringLiteral("daily:api"));
    QCOMPARE(row.value(QStringLiteral("format")).toString(), QStringLiteral("counter window (86400s)"));
    QCOMPARE(row.value(QStringLiteral("used")).toInteger(), 5);
}

void TestFormats::twoKeyFormatsAreOneRowAndResetRemovesBoth()
{
    const qint64 nowS = serverTimeUs(*m_conn) / kSecond;
    m_conn->pipeline(
        {{"SETEX", "request_rate_limiter.{u7}.tokens", "20", "4"},
         // refreshed "in the future": no refill while the test reads it, whatever the clock does
         {"SETEX", "request_rate_limiter.{u7}.timestamp", "20", QByteArray::number(nowS + 10)},
         {"SET", "LIMITS:{LIMITER/api/k2/10/1/minute}", "2", "PX", "100000"},
         {"SET", "LIMITS:{LIMITER/api/k2/10/1/minute}/-1", "5", "PX", "20000"},
         {"SET", "laravel_database_laravel_cache_0123456789abcdef0123456789abcdef", "3", "EX", "60"},
         {"SET", "laravel_database_laravel_cache_0123456789abcdef0123456789abcdef:timer", QByteArray::number(nowS + 60), "EX", "60"},
         {"SET", "unrelated", "1"}});
    setPolicy(policy("spring", "request_rate_limiter.*", Algorithm::TokenBucket, 10, 5 * kSecond));
    const auto rows = keysJson();
    QCOMPARE(rows.size(), size_t(3));
    const QJsonObject spring = rows.at(QStringLiteral("request_rate_limiter.{u7}.tokens"));
    QCOMPARE(spring.value(QStringLiteral("format")).toString(), QStringLiteral("Spring Cloud Gateway token bucket"));
    QCOMPARE(spring.value(QStringLiteral("used")).toInteger(), 6);
    QCOMPARE(spring.value(QStringLiteral("limit")).toInteger(), 10);
    QVERIFY(rows.count(QStringLiteral("LIMITS:{LIMITER/api/k2/10/1/minute}")));
    QVERIFY(rows.count(QStringLiteral("laravel_database_laravel_cache_0123456789abcdef0123456789abcdef")));

    // Reset of the row (or of either key) deletes both keys of the limiter, and nothing else.
    for (const char *key : {"request_rate_limiter.{u7}.timestamp", "LIMITS:{LIMITER/api/k2/10/1/minute}",
                            "laravel_database_laravel_cache_0123456789abcdef0123456789abcdef"}) {
        const CliResult r = runCli({QStringLiteral("--url"), m_server.url(), QStringLiteral("--json"), QStringLiteral("reset"),
                                    QString::fromLatin1(key), QStringLiteral("--yes")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
    }
    QCOMPARE(m_conn->command({"DBSIZE"}).toInteger(), 3); // unrelated, the policy, the audit trail
    QCOMPARE(m_conn->command({"EXISTS", "unrelated"}).toInteger(), 1);
}

void TestFormats::windowKeysOfANameAreResetTogether()
{
    // Kong and Upstash keys carry their window: the row is the limiter's name, and a reset of
    // the name deletes every window key of it (old ones included), nothing else.
    const qint64 now = serverTimeUs(*m_conn);
    const qint64 minuteMs = (now / kSecond - now / kSecond % 60) * 1000;
    const QByteArray name = "ratelimit:r1:s1:198.51.100.4:minute";
    m_conn->pipeline(
        {{"SET", "ratelimit:r1:s1:198.51.100.4:" + QByteArray::number(minuteMs) + ":minute", "3", "EX", "60"},
         {"SET", "ratelimit:r1:s1:198.51.100.4:" + QByteArray::number(minuteMs - 60000) + ":minute", "9", "EX", "60"},
         {"SET", "ratelimit:r1:s1:198.51.100.4:" + QByteArray::number(minuteMs / 3600000 * 3600000) + ":hour", "11", "EX", "3600"},
         {"SET", "@upstash/ratelimit:u5:" + QByteArray::number(now / 1000 / 60000), "4"},
         {"SET", "@upstash/ratelimit:u5:" + QByteArray::number(now / 1000 / 60000 - 1), "6"},
         {"SET", "@upstash/ratelimit:u55:" + QByteArray::number(now / 1000 / 60000), "1"},
         // a token bucket whose identifier ends in a number: another limiter, not a window of u5
         {"HSET", "@upstash/ratelimit:u5:42", "refilledAt", QByteArray::number(now / 1000), "tokens", "3"}});
    const auto rows = keysJson();
    QVERIFY(rows.count(QString::fromLatin1(name)));
    QVERIFY(rows.count(QStringLiteral("ratelimit:r1:s1:198.51.100.4:hour")));
    QVERIFY(rows.count(QStringLiteral("@upstash/ratelimit:u5")));
    QCOMPARE(rows.size(), size_t(5));
    Resetter resetter(*m_conn, QStringLiteral("ratescope:"));
    const ResetPlan kong = resetter.planKeys({name});
    QCOMPARE(kong.keys.size(), 2);
    const ResetPlan upstash = resetter.planKeys({"@upstash/ratelimit:u5"});
    QCOMPARE(upstash.keys.size(), 2);
    resetter.execute(kong);
    resetter.execute(upstash);
    QCOMPARE(m_conn->command({"DBSIZE"}).toInteger(), 3); // the hourly Kong limiter, u55, the bucket u5:42
    QCOMPARE(m_conn->command({"EXISTS", "@upstash/ratelimit:u5:42"}).toInteger(), 1);
}

void TestFormats::checkAndBurstRefuseAnotherServicesLimiter()
{
    m_conn->command({"SET", "rlflx:api:frank", "2", "PX", "60000"});
    setPolicy(policy("rlf", "rlflx:*", Algorithm::FixedWindow, 10, 60 * kSecond));
    const auto before = dumps();
    for (const char *command : {"check", "burst"}) {
        QStringList args{QStringLiteral("--url"), m_server.url(), QString::fromLatin1(command), QStringLiteral("rlflx:api:frank")};
        if (QLatin1String(command) == QLatin1String("burst"))
            args << QStringLiteral("--algo") << QStringLiteral("fixed-window") << QStringLiteral("--limit") << QStringLiteral("10")
                 << QStringLiteral("--window") << QStringLiteral("1m") << QStringLiteral("--requests") << QStringLiteral("5");
        const CliResult r = runCli(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("rate-limiter-flexible") && r.err.contains("another service"), r.err.constData());
    }
    QCOMPARE(dumps(), before);

    // The name a Kong limiter is listed as (no key has it): refused alike, and peek reads the
    // current window key by Kong's rule.
    const qint64 now = serverTimeUs(*m_conn);
    const QByteArray window = "ratelimit:r9:s9:192.0.2.1:" + QByteArray::number((now / kSecond - now / kSecond % 3600) * 1000) + ":hour";
    m_conn->command({"SET", window, "3", "EX", "3600"});
    const QStringList limits{QStringLiteral("--algo"), QStringLiteral("fixed-window"), QStringLiteral("--limit"),
                             QStringLiteral("5"),      QStringLiteral("--window"),     QStringLiteral("1h")};
    const CliResult byName = runCli(
        QStringList{QStringLiteral("--url"), m_server.url(), QStringLiteral("check"), QStringLiteral("ratelimit:r9:s9:192.0.2.1:hour")} +
        limits);
    QCOMPARE(byName.exitCode, 2);
    QVERIFY2(byName.err.contains("Kong rate-limiting"), byName.err.constData());
    const CliResult peek = runCli(QStringList{QStringLiteral("--url"), m_server.url(), QStringLiteral("--json"), QStringLiteral("peek"),
                                              QStringLiteral("ratelimit:r9:s9:192.0.2.1:hour")} +
                                  limits);
    QVERIFY2(peek.exitCode == 0, peek.err.constData());
    QCOMPARE(QJsonDocument::fromJson(peek.out).object().value(QStringLiteral("used")).toInteger(), 4); // 3 there, 1 asked about
    QCOMPARE(m_conn->command({"EXISTS", "ratelimit:r9:s9:192.0.2.1:hour"}).toInteger(), 0);            // nothing created
}

void TestFormats::cliReadsWithoutWriting()
{
    // peek and inspect through the CLI on a key that states its limits, and on a declared
    // redis-cell key: answers from the formats' rules, nothing written.
    m_conn->command({"RPUSH", "LIMITS:LIMITER/dl/u1/2/1/hour", QByteArray::number(double(kNow - 10 * kSecond) / 1e6, 'f', 6)});
    const auto before = dumps();
    const CliResult peek = runCli({QStringLiteral("--url"), m_server.url(), QStringLiteral("--json"), QStringLiteral("peek"),
                                   QStringLiteral("LIMITS:LIMITER/dl/u1/2/1/hour"), QStringLiteral("--now-us"), QString::number(kNow)});
    QVERIFY2(peek.exitCode == 0, peek.err.constData());
    const QJsonObject p = QJsonDocument::fromJson(peek.out).object();
    QCOMPARE(p.value(QStringLiteral("used")).toInteger(), 2);
    QCOMPARE(p.value(QStringLiteral("limit")).toInteger(), 2);
    QCOMPARE(p.value(QStringLiteral("allowed")).toBool(), true);
    const CliResult in = runCli({QStringLiteral("--url"), m_server.url(), QStringLiteral("--json"), QStringLiteral("inspect"),
                                 QStringLiteral("LIMITS:LIMITER/dl/u1/2/1/hour"), QStringLiteral("--now-us"), QString::number(kNow)});
    QVERIFY2(in.exitCode == 0, in.err.constData());
    const QJsonObject i = QJsonDocument::fromJson(in.out).object();
    QCOMPARE(i.value(QStringLiteral("format")).toString(), QStringLiteral("Python limits moving window"));
    QCOMPARE(i.value(QStringLiteral("limits")).toObject().value(QStringLiteral("window_us")).toInteger(), 3600 * kSecond);
    QCOMPARE(dumps(), before);
}

QTEST_GUILESS_MAIN(TestFormats)
#include "tst_formats.moc"
