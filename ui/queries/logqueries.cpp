#include "logqueries.h"

#include "base/errors.h"
#include "formats/scoreunit.h"
#include "keys/inspector.h"
#include "redis/connection.h"

#include <cmath>

namespace ratescope::ui {

LogRead readLog(Connection &c, const LogReadRequest &request)
{
    LogRead r;
    r.nowUs = request.nowUs;
    r.spec = request.spec;
    r.type = c.command({"TYPE", request.key}).text();
    r.kind = classifyKey(c, request.key, request.nowUs, request.unit, request.spec);
    if (r.type != QLatin1String("zset") && r.type != QLatin1String("none"))
        throw UsageError(QStringLiteral("'%1' is a %2, not a sliding log").arg(QString::fromUtf8(request.key), r.type));
    const ScoreUnit unit = r.kind.unit != ScoreUnit::Auto ? r.kind.unit
                           : request.unit != ScoreUnit::Auto  ? request.unit
                                                          : ScoreUnit::Microseconds;
    LogWindowQuery q;
    q.key = request.key;
    q.unit = unit;
    q.toUs = request.nowUs + 1; // an entry admitted at now is in the window
    q.entryCap = LogReadRequest::kEntryCap;
    if (request.spec) {
        const qint64 w = request.spec->windowUs;
        r.axisFromUs = request.nowUs - (request.history ? 2 : 1) * w;
        // One window more, for the rolling count at the axis start: (t - window, t].
        r.readFromUs = r.axisFromUs - w + 1;
        q.buckets = LogReadRequest::kBucketsPerWindow * (request.history ? 3 : 2);
    } else {
        // No window to go by: from the oldest entry (at least a minute) to now.
        const Reply oldest = c.command({"ZRANGE", request.key, "0", "0", "WITHSCORES"});
        const qint64 per = scoreUnitUs(unit);
        const qint64 oldestUs = oldest.size() == 2 ? qint64(std::llround(oldest[1].bytes().toDouble() * double(per))) : request.nowUs;
        r.axisFromUs = std::min(oldestUs, request.nowUs - 60 * 1000000LL);
        r.readFromUs = r.axisFromUs;
        q.buckets = 300;
    }
    q.fromUs = r.readFromUs;
    r.window = readLogWindow(c, q);
    if (request.spec && r.kind.isLimiter()) {
        try {
            LimitSpec one = *request.spec;
            one.cost = 1;
            r.forOne = peekAnyFormat(c, request.key, r.kind, one, request.nowUs);
            if (request.spec->cost != 1)
                r.forCost = peekAnyFormat(c, request.key, r.kind, *request.spec, request.nowUs);
        } catch (const UsageError &e) {
            r.peekProblem = e.message();
        } catch (const ReplyError &e) {
            r.peekProblem = e.message();
        }
    }
    // (axis start, now] with limits (an entry at the start has expired), else from the oldest.
    const qint64 pageFrom = request.filter ? request.filter->first : request.spec ? r.axisFromUs + 1 : r.axisFromUs;
    const qint64 pageTo = request.filter ? request.filter->second : request.nowUs + 1;
    r.page = readLogPage(c, request.key, unit, pageFrom, pageTo, request.pageOffset, request.pageSize);
    return r;
}

} // namespace ratescope::ui
