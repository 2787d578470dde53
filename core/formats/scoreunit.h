// How the scores of a sorted-set log count time: seconds, milliseconds or microseconds since
// the epoch (docs/key-formats.md). Detected by magnitude, or stated by a policy.
#pragma once

#include <QString>

namespace ratescope {

enum class ScoreUnit { Auto, Seconds, Milliseconds, Microseconds };
QString scoreUnitName(ScoreUnit u);            // "auto", "s", "ms", "us"
ScoreUnit parseScoreUnit(const QString &name); // throws UsageError
qint64 scoreUnitUs(ScoreUnit u);               // 1000000, 1000, 1 (Auto: 0)

// The score unit an epoch-like score implies: about 1e9 s, 1e12 ms, 1e15 us for dates
// between 2001 and 2286; Auto when it looks like no epoch time.
ScoreUnit detectScoreUnit(double score);

} // namespace ratescope
