#include "load/boundaryscenario.h"

#include <QDateTime>

#include "redis/connection.h"
#include "base/duration.h"
#include "base/errors.h"
#include "base/keytext.h"
#include "limiters/limiter.h"
#include "limiters/limiterscript.h"

#include <QElapsedTimer>

#include <chrono>
#include <thread>

namespace ratescope {

namespace {

constexpr qint64 kChunk = 1000;          // requests per pipelined round trip
constexpr qint64 kMinLeadUs = 5000;      // scheduler jitter between waking and firing
constexpr qint64 kComfortLeadUs = 50000; // preferred lead when the window allows it
constexpr qint64 kPastBoundaryUs = 200;  // fire the second burst this far past the boundary

} // namespace

QJsonObject BoundaryResult::toJson() const
{
    return {
        {QStringLiteral("admitted"), admitted()},
        {QStringLiteral("requests"), 2 * requestsPerBurst},
        {QStringLiteral("first_burst_allowed"), firstAllowed},
        {QStringLiteral("second_burst_allowed"), secondAllowed},
        {QStringLiteral("boundary_us"), boundaryUs},
        {QStringLiteral("first_burst_ended_before_boundary_us"), boundaryUs - firstEndUs},
        {QStringLiteral("second_burst_started_after_boundary_us"), secondStartUs - boundaryUs},
        {QStringLiteral("span_us"), secondEndUs - firstStartUs},
    };
}

BoundaryScenario::BoundaryScenario(Connection &connection, QByteArray key, LimitSpec spec)
    : m_connection(connection)
    , m_key(std::move(key))
    , m_spec(spec)
{
}

qint64 BoundaryScenario::serverTimeUs()
{
    const Reply r = m_connection.command({"TIME"});
    if (!r.isArray() || r.size() != 2)
        throw UnexpectedReplyError(QStringLiteral("TIME returned %1").arg(r.debugString()));
    return r[0].toInteger() * 1000000 + r[1].toInteger();
}

// How long `limit` decisions take here, from a few peeks (which write nothing).
qint64 BoundaryScenario::estimateBurstUs()
{
    const LimiterScript &script = LimiterScript::forAlgorithm(m_spec.algorithm);
    const qint64 sample = std::min<qint64>(m_spec.limit, 500);
    // Peek mode through plain EVALSHA or FCALL: writes nothing, and works before Redis 7 (no
    // EVALSHA_RO).
    const Command peek =
        script.command(m_key, Limiter::arguments(m_key, m_spec, std::nullopt, true), false, LimiterScript::callsOn(m_connection));
    QElapsedTimer timer;
    timer.start();
    serverTimeUs();
    const qint64 roundTripUs = timer.nsecsElapsed() / 1000 + 1;
    timer.restart();
    for (const Reply &r : m_connection.pipeline(std::vector<Command>(size_t(sample), peek)))
        Decision::fromReply(r);
    const double perRequestUs = double(timer.nsecsElapsed()) / 1000.0 / double(sample);
    const qint64 chunks = (m_spec.limit + kChunk - 1) / kChunk;
    return qint64(perRequestUs * double(m_spec.limit)) + chunks * roundTripUs;
}

// One burst of `limit` requests; returns how many were allowed.
qint64 BoundaryScenario::fire()
{
    const LimiterScript &script = LimiterScript::forAlgorithm(m_spec.algorithm);
    const Command check =
        script.command(m_key, Limiter::arguments(m_key, m_spec, std::nullopt, false), false, LimiterScript::callsOn(m_connection));
    qint64 allowed = 0;
    for (qint64 done = 0; done < m_spec.limit; done += kChunk) {
        const size_t n = size_t(std::min(kChunk, m_spec.limit - done));
        m_sent += qint64(n);
        for (const Reply &r : m_connection.pipeline(std::vector<Command>(n, check)))
            allowed += Decision::fromReply(r).allowed ? 1 : 0; // an error reply throws
    }
    return allowed;
}

// Sleeps until the server's clock reads at least targetUs (bounded: each round sleeps the
// remaining difference).
void BoundaryScenario::waitForServerTime(qint64 targetUs)
{
    for (int round = 0; round < 100; ++round) {
        const qint64 now = serverTimeUs();
        if (now >= targetUs)
            return;
        std::this_thread::sleep_for(std::chrono::microseconds(targetUs - now));
    }
    throw UnexpectedReplyError(QStringLiteral("the server's clock did not reach the window boundary"));
}

BoundaryResult BoundaryScenario::run()
{
    if (m_spec.cost != 1)
        throw UsageError(QStringLiteral("the boundary scenario sends requests of cost 1"));
    m_spec.validate();
    if (m_connection.command({"EXISTS", m_key}).integer() != 0)
        throw UsageError(QStringLiteral("key '%1' already exists: the boundary scenario needs a key without state").arg(displayKey(m_key)));
    if (LimiterScript::callsOn(m_connection) == ScriptCalls::Evalsha)
        LimiterScript::forAlgorithm(m_spec.algorithm).load(m_connection);

    const qint64 window = m_spec.windowUs;
    const qint64 lead = std::max(3 * estimateBurstUs() + kMinLeadUs, std::min(window / 8, kComfortLeadUs));
    if (2 * lead + kPastBoundaryUs >= window)
        throw UsageError(QStringLiteral("a %1 window is too short for two bursts of %2 requests "
                                        "here (each needs about %3): "
                                        "use a longer window or a lower limit")
                             .arg(formatDurationUs(window))
                             .arg(m_spec.limit)
                             .arg(formatDurationUs(lead)));

    BoundaryResult result;
    result.requestsPerBurst = m_spec.limit;
    const qint64 now = serverTimeUs();
    result.boundaryUs = (now / window + 1) * window;
    if (result.boundaryUs - now < lead + kMinLeadUs)
        result.boundaryUs += window; // too close to park before this one
    const qint64 waitUs = result.boundaryUs - lead - now;
    if (waitUs > kMaxWaitUs)
        throw UsageError(QStringLiteral("the next boundary of a %1 window is %2 away (%3): the scenario waits at most %4 for one; "
                                        "nothing was sent")
                             .arg(formatDurationUs(window), formatDurationUs(result.boundaryUs - now),
                                  QDateTime::fromMSecsSinceEpoch(result.boundaryUs / 1000, Qt::UTC).toString(Qt::ISODate),
                                  formatDurationUs(kMaxWaitUs)));
    if (onWait)
        onWait(waitUs, result.boundaryUs);

    waitForServerTime(result.boundaryUs - lead);
    result.firstStartUs = serverTimeUs();
    result.firstAllowed = fire();
    result.firstEndUs = serverTimeUs();
    if (result.firstEndUs >= result.boundaryUs)
        throw UsageError(QStringLiteral("the first burst ended %1 after the window boundary, so "
                                        "the result would be misleading: "
                                        "use a longer window or a lower limit")
                             .arg(formatDurationUs(result.firstEndUs - result.boundaryUs)));
    if (result.firstStartUs < result.boundaryUs - window)
        throw UsageError(QStringLiteral("the first burst started more than a window before the boundary (%1 early)")
                             .arg(formatDurationUs(result.boundaryUs - result.firstStartUs)));

    waitForServerTime(result.boundaryUs + kPastBoundaryUs);
    result.secondStartUs = serverTimeUs();
    if (result.secondStartUs < result.boundaryUs)
        throw UsageError(QStringLiteral("the server's clock went back across the window boundary; run the scenario again"));
    result.secondAllowed = fire();
    result.secondEndUs = serverTimeUs();
    if (result.secondEndUs - result.firstStartUs >= window)
        throw UsageError(QStringLiteral("the two bursts spanned %1, more than the %2 window: the "
                                        "result would be misleading "
                                        "(use a longer window or a lower limit)")
                             .arg(formatDurationUs(result.secondEndUs - result.firstStartUs), formatDurationUs(window)));
    return result;
}

} // namespace ratescope
