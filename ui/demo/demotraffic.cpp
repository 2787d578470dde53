#include "demotraffic.h"

#include "redis/connection.h"
#include "base/errors.h"
#include "admin/policy.h"
#include "admin/limitsinforce.h"
#include "limiters/limiter.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QRandomGenerator>

#include <map>

namespace ratescope::ui {

namespace {

constexpr qint64 kSecond = 1000000;
const QString kNamespace = QStringLiteral("ratescope:");
const QString kActor = QStringLiteral("ratescope-demo");

Policy makePolicy(const char *name, const char *match, Algorithm a, qint64 limit, qint64 windowS, const char *description,
                  bool enforced = true, ScoreUnit unit = ScoreUnit::Auto)
{
    Policy p;
    p.name = QLatin1String(name);
    p.match = match;
    p.spec = {a, limit, windowS * kSecond, 1};
    p.description = QLatin1String(description);
    p.enforced = enforced;
    p.scoreUnit = unit;
    return p;
}

// Sliding buckets: a minute kept as twelve 5 s buckets.
Policy feedPolicy()
{
    Policy p = makePolicy("feed", "demo:feed:*", Algorithm::SlidingBuckets, 300, 60,
                          "Activity feed: 300 per minute, counted in twelve 5 s buckets (the oldest weighted)");
    p.spec.buckets = 12;
    return p;
}

constexpr qint64 kLimitsEveryMs = 1000; // how often the services read the limits in force

// The upload limit acme pays for: twice the policy's, for two hours (an override).
const QByteArray kOverriddenKey = "demo:upload:acme";
constexpr qint64 kOverriddenLimit = 40;

bool isLegacy(const DemoTraffic::Client &c)
{
    return c.policy == QLatin1String("legacy-counters");
}

bool isPartner(const DemoTraffic::Client &c)
{
    return c.policy == QLatin1String("partner-log");
}

// A service that counts in <base>:<minute id> strings, as many do with INCR.
bool legacyRequest(Connection &c, const QByteArray &base, const LimitSpec &spec, qint64 nowMs)
{
    const qint64 windowS = spec.windowUs / kSecond;
    const QByteArray key = base + ":" + QByteArray::number(nowMs / 1000 / windowS);
    const auto r = c.pipeline({{"INCR", key}, {"EXPIRE", key, QByteArray::number(2 * windowS)}});
    if (r[0].toInteger() <= spec.limit)
        return true;
    c.command({"DECR", key});
    return false;
}

bool isGateway(const DemoTraffic::Client &c)
{
    return c.policy == QLatin1String("gateway");
}

bool isFlexible(const DemoTraffic::Client &c)
{
    return c.policy == QLatin1String("node-login");
}

// Spring Cloud Gateway's RedisRateLimiter, as its request_rate_limiter.lua decides: tokens
// and the second they were counted at, refilled per whole second, both kept for twice the
// fill time (limit = burstCapacity, window = the time to fill it).
bool gatewayRequest(Connection &c, const QByteArray &stem, const LimitSpec &spec, qint64 nowMs)
{
    const QByteArray tokensKey = stem + ".tokens", timestampKey = stem + ".timestamp";
    const double capacity = double(spec.limit), rate = capacity * 1e6 / double(spec.windowUs);
    const qint64 now = nowMs / 1000;
    const auto r = c.pipeline({{"GET", tokensKey}, {"GET", timestampKey}});
    const double last = r[0].isNil() ? capacity : r[0].bytes().toDouble();
    const qint64 refreshed = r[1].isNil() ? 0 : r[1].bytes().toLongLong();
    const double filled = std::min(capacity, last + double(std::max<qint64>(0, now - refreshed)) * rate);
    const bool allowed = filled >= 1;
    const QByteArray ttl = QByteArray::number(qint64(2 * capacity / rate));
    c.pipeline({{"SETEX", tokensKey, ttl, QByteArray::number(allowed ? filled - 1 : filled)},
                {"SETEX", timestampKey, ttl, QByteArray::number(now)}});
    return allowed;
}

// rate-limiter-flexible's RateLimiterRedis: points consumed in "rlflx:<key>", a window that
// starts at the first request and ends when the key expires; refused requests count too.
bool flexibleRequest(Connection &c, const QByteArray &key, const LimitSpec &spec, qint64)
{
    const auto r = c.pipeline({{"SET", key, "0", "PX", QByteArray::number(spec.windowUs / 1000), "NX"}, {"INCRBY", key, "1"}});
    return r[1].toInteger() <= spec.limit;
}

// A gateway that logs requests in a sorted set scored in milliseconds, "<ms>-<random>" members.
bool partnerRequest(Connection &c, const QByteArray &key, const LimitSpec &spec, qint64 nowMs)
{
    const qint64 windowMs = spec.windowUs / 1000;
    const auto r = c.pipeline({{"ZREMRANGEBYSCORE", key, "-inf", QByteArray::number(nowMs - windowMs)}, {"ZCARD", key}});
    if (r[1].toInteger() >= spec.limit)
        return false;
    const QByteArray member = QByteArray::number(nowMs) + "-" + QByteArray::number(QRandomGenerator::global()->generateDouble(), 'f', 8);
    c.pipeline({{"ZADD", key, QByteArray::number(nowMs), member}, {"PEXPIRE", key, QByteArray::number(windowMs)}});
    return true;
}

} // namespace

std::vector<Policy> DemoTraffic::policies()
{
    return {
        makePolicy("api", "demo:api:*", Algorithm::SlidingLog, 60, 10, "Public API: 60 requests per 10 s per client, counted exactly"),
        makePolicy("search", "demo:search:*", Algorithm::SlidingCounter, 120, 30, "Search: 120 per 30 s, two weighted windows"),
        makePolicy("login", "demo:login:*", Algorithm::FixedWindow, 10, 10, "Login attempts: 10 per clock-aligned 10 s window"),
        makePolicy("upload", "demo:upload:*", Algorithm::TokenBucket, 20, 10, "Uploads: a bucket of 20, refilling 2 per second"),
        makePolicy("webhook", "demo:webhook:*", Algorithm::Gcra, 30, 10, "Webhooks: one per 333 ms, bursts of up to 30"),
        feedPolicy(),
        makePolicy("legacy-counters", "demo:legacy:*", Algorithm::FixedWindow, 100, 60,
                   "A legacy service's own INCR counters per minute, declared for inspection", false),
        makePolicy("partner-log", "demo:partner:*", Algorithm::SlidingLog, 50, 60,
                   "A partner gateway's sorted-set log in milliseconds, declared for inspection", false, ScoreUnit::Milliseconds),
        makePolicy("gateway", "request_rate_limiter.*", Algorithm::TokenBucket, 20, 10,
                   "The Spring Cloud Gateway in front: burstCapacity 20, replenishRate 2/s, declared for inspection", false),
        makePolicy("node-login", "rlflx:*", Algorithm::FixedWindow, 10, 30,
                   "The Node.js login service's rate-limiter-flexible: 10 points per 30 s, declared for inspection", false),
    };
}

std::vector<DemoTraffic::Client> DemoTraffic::clients()
{
    std::vector<Client> all;
    for (const char *service : {"api", "search", "login", "upload", "webhook", "feed"}) {
        const QByteArray prefix = QByteArray("demo:") + service + ":";
        const QString policy = QLatin1String(service);
        all.push_back({prefix + "acme", policy, Behaviour::Steady, 0.3});
        all.push_back({prefix + "globex", policy, Behaviour::Steady, 0.55});
        all.push_back({prefix + "initech", policy, Behaviour::Steady, 0.75});
        all.push_back({prefix + "umbrella", policy, Behaviour::Steady, 0.9});
        all.push_back({prefix + "hooli", policy, Behaviour::Bursty, 0});
        all.push_back({prefix + "stark", policy, Behaviour::Bursty, 0});
        all.push_back({prefix + "mallory", policy, Behaviour::Abusive, 0});
    }
    const QString legacy = QStringLiteral("legacy-counters"), partner = QStringLiteral("partner-log");
    all.push_back({"demo:legacy:acme", legacy, Behaviour::Steady, 0.4});
    all.push_back({"demo:legacy:globex", legacy, Behaviour::Steady, 0.8});
    all.push_back({"demo:legacy:mallory", legacy, Behaviour::Abusive, 0});
    all.push_back({"demo:partner:initech", partner, Behaviour::Steady, 0.5});
    all.push_back({"demo:partner:umbrella", partner, Behaviour::Steady, 0.95});
    all.push_back({"demo:partner:mallory", partner, Behaviour::Abusive, 0});
    // acme's ticket: the partner gateway refuses it (a script gone wrong), whatever else admits it.
    all.push_back({"demo:partner:acme", partner, Behaviour::Abusive, 0});
    const QString gateway = QStringLiteral("gateway"), flexible = QStringLiteral("node-login");
    all.push_back({"request_rate_limiter.{acme}", gateway, Behaviour::Steady, 0.6});
    all.push_back({"request_rate_limiter.{mallory}", gateway, Behaviour::Abusive, 0});
    all.push_back({"rlflx:globex", flexible, Behaviour::Steady, 0.5});
    all.push_back({"rlflx:acme", flexible, Behaviour::Steady, 0.3});
    all.push_back({"rlflx:mallory", flexible, Behaviour::Abusive, 0});
    return all;
}

std::map<QByteArray, LimitSpec> limitsInForce(Connection &connection, const std::vector<DemoTraffic::Client> &clients)
{
    std::map<QString, LimitSpec> builtIn;
    for (const Policy &p : DemoTraffic::policies())
        builtIn[p.name] = p.spec;
    LimitResolver resolver(PolicyStore(connection, kNamespace).list(), MetadataNamespace(kNamespace));
    std::vector<QByteArray> keys;
    for (const DemoTraffic::Client &c : clients)
        keys.push_back(c.key);
    resolver.readOverrides(connection, keys);
    std::map<QByteArray, LimitSpec> limits;
    for (const DemoTraffic::Client &c : clients) {
        const LimitsInForce in = resolver.resolve(c.key, KeyKind{});
        const auto fallback = builtIn.find(c.policy);
        if (in.spec)
            limits[c.key] = *in.spec;
        else if (fallback != builtIn.end())
            limits[c.key] = fallback->second;
    }
    return limits;
}

void simulateTick(Connection &connection, std::vector<DemoTraffic::Client> &clients, const std::map<QByteArray, LimitSpec> &limits,
                  qint64 nowMs, std::atomic<qint64> &allowed, std::atomic<qint64> &denied)
{
    Limiter limiter(connection);
    for (DemoTraffic::Client &c : clients) {
        const auto found = limits.find(c.key);
        if (found == limits.end())
            continue;
        const LimitSpec &spec = found->second;
        const double windowMs = double(spec.windowUs / 1000);
        const double perTick = double(spec.limit) * DemoTraffic::kTickMs / windowMs;
        switch (c.behaviour) {
        case DemoTraffic::Behaviour::Steady:
            c.carry += c.share * perTick;
            break;
        case DemoTraffic::Behaviour::Abusive:
            c.carry += 5 * perTick;
            break;
        case DemoTraffic::Behaviour::Bursty: {
            // The boundary test: the whole limit just before a window ends, again just after.
            const qint64 into = nowMs % qint64(windowMs);
            if (into < 2 * DemoTraffic::kTickMs || qint64(windowMs) - into <= 2 * DemoTraffic::kTickMs)
                c.carry += double(spec.limit) / 2;
            break;
        }
        }
        const int n = std::min(int(c.carry), 500);
        c.carry -= n;
        for (int i = 0; i < n; ++i) {
            bool ok;
            if (isLegacy(c))
                ok = legacyRequest(connection, c.key, spec, nowMs);
            else if (isPartner(c))
                ok = partnerRequest(connection, c.key, spec, nowMs);
            else if (isGateway(c))
                ok = gatewayRequest(connection, c.key, spec, nowMs);
            else if (isFlexible(c))
                ok = flexibleRequest(connection, c.key, spec, nowMs);
            else
                ok = limiter.check(c.key, spec).allowed;
            (ok ? allowed : denied).fetch_add(1);
        }
    }
}

DemoTraffic::DemoTraffic(ConnectionOptions options)
    : m_options(std::move(options))
{
}

DemoTraffic::~DemoTraffic()
{
    stop();
}

void DemoTraffic::seed(Connection &connection)
{
    PolicyStore store(connection, kNamespace);
    for (const Policy &p : policies()) {
        try {
            store.set(p, 0, kActor);
        } catch (const ConflictError &) {
            // already there (a second demo against the same server)
        }
    }
    Override more;
    more.key = kOverriddenKey;
    more.limit = kOverriddenLimit;
    OverrideStore(connection, kNamespace).set(more, 2 * 3600 * kSecond, kActor);
    // Unrelated keys live beside limiters in real servers: the console says they are none.
    connection.pipeline({{"HSET", "demo:session:7f3a", "user", "acme", "ttl", "1800"},
                         {"EXPIRE", "demo:session:7f3a", "1800"},
                         {"SET", "demo:feature-flags", "{\"new-search\":true}"}});
    // A first round, as if the services had been running for a while: steady clients part
    // way to their limit, bursty ones just after a burst, the abusive one far over it.
    auto clients = DemoTraffic::clients();
    const auto limits = limitsInForce(connection, clients);
    for (Client &c : clients) {
        const auto found = limits.find(c.key);
        const double limit = found == limits.end() ? 0 : double(found->second.limit);
        c.carry = c.behaviour == Behaviour::Steady ? 0.8 * c.share * limit : c.behaviour == Behaviour::Bursty ? limit : 3 * limit;
    }
    std::atomic<qint64> allowed{0}, denied{0};
    simulateTick(connection, clients, limits, QDateTime::currentMSecsSinceEpoch(), allowed, denied);
}

void DemoTraffic::start()
{
    if (m_thread)
        return;
    m_stop.store(false);
    m_thread.reset(QThread::create([this] { loop(); }));
    m_thread->setObjectName(QStringLiteral("demo traffic"));
    m_thread->start();
}

void DemoTraffic::stop()
{
    if (!m_thread)
        return;
    m_stop.store(true);
    m_thread->wait();
    m_thread.reset();
}

void DemoTraffic::loop()
{
    Connection connection(m_options); // created, used and destroyed on this thread
    auto clients = DemoTraffic::clients();
    std::map<QByteArray, LimitSpec> limits;
    QElapsedTimer clock;
    clock.start();
    qint64 next = 0, limitsReadAt = -kLimitsEveryMs;
    while (!m_stop.load()) {
        try {
            // The services read what is in force about once a second, as a service's cache
            // of its policies would: a policy changed in the console applies within a second.
            if (clock.elapsed() - limitsReadAt >= kLimitsEveryMs) {
                limits = limitsInForce(connection, clients);
                limitsReadAt = clock.elapsed();
            }
            simulateTick(connection, clients, limits, QDateTime::currentMSecsSinceEpoch(), m_allowed, m_denied);
        } catch (const Error &) {
            // The server is going away (exit) or restarting: try again a little later.
            for (int i = 0; i < 5 && !m_stop.load(); ++i)
                QThread::msleep(100);
        }
        next += kTickMs;
        const qint64 wait = next - clock.elapsed();
        if (wait > 0)
            QThread::msleep(quint64(wait));
        else
            next = clock.elapsed(); // fell behind: do not try to catch up in a rush
    }
}

} // namespace ratescope::ui
