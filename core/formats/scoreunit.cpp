#include "formats/scoreunit.h"

#include "base/errors.h"

namespace ratescope {

QString scoreUnitName(ScoreUnit u)
{
    switch (u) {
    case ScoreUnit::Auto:
        return QStringLiteral("auto");
    case ScoreUnit::Seconds:
        return QStringLiteral("s");
    case ScoreUnit::Milliseconds:
        return QStringLiteral("ms");
    case ScoreUnit::Microseconds:
        return QStringLiteral("us");
    }
    return {};
}

ScoreUnit parseScoreUnit(const QString &name)
{
    for (ScoreUnit u : {ScoreUnit::Auto, ScoreUnit::Seconds, ScoreUnit::Milliseconds, ScoreUnit::Microseconds})
        if (scoreUnitName(u) == name)
            return u;
    throw UsageError(QStringLiteral("unknown score unit '%1' (auto, s, ms or us)").arg(name));
}

qint64 scoreUnitUs(ScoreUnit u)
{
    switch (u) {
    case ScoreUnit::Seconds:
        return 1000000;
    case ScoreUnit::Milliseconds:
        return 1000;
    case ScoreUnit::Microseconds:
        return 1;
    case ScoreUnit::Auto:
        break;
    }
    return 0;
}

ScoreUnit detectScoreUnit(double score)
{
    // 1e9 s is 2001-09; 1e10 s is 2286. The same span in ms and us.
    if (score >= 1e9 && score < 1e10)
        return ScoreUnit::Seconds;
    if (score >= 1e12 && score < 1e13)
        return ScoreUnit::Milliseconds;
    if (score >= 1e15 && score < 1e16)
        return ScoreUnit::Microseconds;
    return ScoreUnit::Auto;
}

} // namespace ratescope
