// Human durations ("250ms", "60s", "5m", "2h", "1d"; a bare number is seconds) in microseconds.
#pragma once

#include <QString>

namespace ratescope {

// Throws UsageError for anything that is not a positive-or-zero duration with a known unit.
qint64 parseDurationUs(const QString &text);

// The shortest exact form: 1500000 -> "1.5s", 60000000 -> "1m", 250 -> "250us".
QString formatDurationUs(qint64 us);

// us / unit rounded up, for a wait of us >= 0: the whole units (ms, s) it needs. Without
// us + unit - 1, which overflows for a wait near the largest qint64.
inline qint64 unitsRoundedUp(qint64 us, qint64 unit)
{
    return us / unit + (us % unit != 0 ? 1 : 0);
}

// A wait for people to read, rounded up so that it is never too short: exact below 1ms
// ("250us"), to the millisecond below a minute ("8.567s"), to the second from there, in parts
// without the parts that are zero ("1m 5s", "2h 1s", "1d 3h"). Negative values are shown exactly.
QString formatWaitUs(qint64 us);

} // namespace ratescope
