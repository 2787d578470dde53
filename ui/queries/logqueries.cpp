#include "logqueries.h"

#include "base/errors.h"
#include "formats/scoreunit.h"
#include "keys/inspector.h"
#include "redis/connection.h"

#include <QScopeGuard>

#include <cmath>

namespace ratescope::ui {

namespace {

// Where a read looks, for a score unit: the chart's axis, the window read (one window more
// before the axis, for the rolling count at its start) and the entries' page.
struct LogPlan {
    qint64 axisFromUs = 0;
    qint64 readFromUs = 0;
    LogWindowQuery window;
    qint64 pageFromUs = 0;
    qint64 pageToUs = 0;
};

ScoreUnit unitOf(const KeyKind &kind, ScoreUnit asked)
{
    return kind.unit != ScoreUnit::Auto ? kind.unit : asked != ScoreUnit::Auto ? asked : ScoreUnit::Microseconds;
}

// With limits: the window(s) ending now. Without: from the oldest entry (at least a minute).
LogPlan planOf(const LogReadRequest &request, ScoreUnit unit, std::optional<qint64> oldestUs)
{
    LogPlan p;
    p.window.key = request.key;
    p.window.unit = unit;
    p.window.toUs = request.nowUs + 1; // an entry admitted at now is in the window
    p.window.entryCap = LogReadRequest::kEntryCap;
    if (request.spec) {
        const qint64 w = request.spec->windowUs;
        p.axisFromUs = request.nowUs - (request.history ? 2 : 1) * w;
        p.readFromUs = p.axisFromUs - w + 1; // (t - window, t] at the axis start
        p.window.buckets = LogReadRequest::kBucketsPerWindow * (request.history ? 3 : 2);
    } else {
        p.axisFromUs = std::min(oldestUs.value_or(request.nowUs), request.nowUs - 60 * 1000000LL);
        p.readFromUs = p.axisFromUs;
        p.window.buckets = 300;
    }
    p.window.fromUs = p.readFromUs;
    // (axis start, now] with limits (an entry at the start has expired), else from the oldest.
    p.pageFromUs = request.filter ? request.filter->first : request.spec ? p.axisFromUs + 1 : p.axisFromUs;
    p.pageToUs = request.filter ? request.filter->second : request.nowUs + 1;
    return p;
}

// The peeks a read asks: a request of cost 1, and of the policy's cost when it is not 1.
std::vector<LimitSpec> peekSpecs(const LimitSpec &spec)
{
    LimitSpec one = spec;
    one.cost = 1;
    std::vector<LimitSpec> specs{one};
    if (spec.cost != 1)
        specs.push_back(spec);
    return specs;
}

} // namespace

std::vector<Command> logReadsAhead(Connection &c, const LogReadRequest &request)
{
    std::vector<Command> reads{{"TYPE", request.key}};
    for (Command &read : classifyReads(request.key))
        reads.push_back(std::move(read));
    if (!request.spec) {
        reads.push_back({"ZRANGE", request.key, "0", "0", "WITHSCORES"}); // the oldest: the rest waits for it
        return reads;
    }
    const KeyKind kind = request.expected.value_or(KeyKind{});
    const LogPlan plan = planOf(request, unitOf(kind, request.unit), std::nullopt);
    for (Command &read : logWindowReads(plan.window, request.expectBucketed))
        reads.push_back(std::move(read));
    std::optional<ScriptCalls> calls = c.scriptCalls();
    if (request.expected && kind.isLimiter() && calls) { // (unknown calls: asked of the server first)
        try {
            for (const LimitSpec &s : peekSpecs(*request.spec))
                for (Command &read : usageCommands(c, {request.key, kind, s}, request.nowUs, calls))
                    reads.push_back(std::move(read));
        } catch (const UsageError &) {
            // said by the peek itself
        }
    }
    for (Command &read : logPageReads(request.key, plan.window.unit, plan.pageFromUs, plan.pageToUs, request.pageOffset, request.pageSize))
        reads.push_back(std::move(read));
    return reads;
}

LogRead readLog(Connection &c, const LogReadRequest &request)
{
    std::vector<Command> ahead;
    try {
        ahead = logReadsAhead(c, request);
    } catch (const UsageError &) {
        // a range the read refuses below, saying why
    }
    // With its first request (none at all when a key view read them along with the key).
    c.readAlong(ahead);
    const auto forget = qScopeGuard([&] { c.forget(ahead); }); // the connection lives on: nothing read now answers later
    LogRead r;
    r.nowUs = request.nowUs;
    r.spec = request.spec;
    r.type = c.command({"TYPE", request.key}).text();
    r.kind = classifyKey(c, request.key, request.nowUs, request.unit, request.spec);
    if (r.type != QLatin1String("zset") && r.type != QLatin1String("none"))
        throw UsageError(QStringLiteral("'%1' is a %2, not a sliding log").arg(QString::fromUtf8(request.key), r.type));
    const ScoreUnit unit = unitOf(r.kind, request.unit);
    std::optional<qint64> oldestUs;
    if (!request.spec) {
        const Reply oldest = c.command({"ZRANGE", request.key, "0", "0", "WITHSCORES"});
        if (oldest.size() == 2)
            oldestUs = qint64(std::llround(oldest[1].bytes().toDouble() * double(scoreUnitUs(unit))));
    }
    const LogPlan plan = planOf(request, unit, oldestUs);
    r.axisFromUs = plan.axisFromUs;
    r.readFromUs = plan.readFromUs;
    r.window = readLogWindow(c, plan.window);
    if (request.spec && r.kind.isLimiter()) {
        try {
            const std::vector<LimitSpec> specs = peekSpecs(*request.spec);
            r.forOne = peekAnyFormat(c, request.key, r.kind, specs.front(), request.nowUs);
            if (specs.size() > 1)
                r.forCost = peekAnyFormat(c, request.key, r.kind, specs.back(), request.nowUs);
        } catch (const UsageError &e) {
            r.peekProblem = e.message();
        } catch (const ReplyError &e) {
            r.peekProblem = e.message();
        }
    }
    r.page = readLogPage(c, request.key, unit, plan.pageFromUs, plan.pageToUs, request.pageOffset, request.pageSize);
    return r;
}

} // namespace ratescope::ui
