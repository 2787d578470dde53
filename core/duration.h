// Human durations ("250ms", "60s", "5m", "2h", "1d"; a bare number is seconds) in microseconds.
#pragma once

#include <QString>

namespace ratescope {

// Throws UsageError for anything that is not a positive-or-zero duration with a known unit.
qint64 parseDurationUs(const QString &text);

// The shortest exact form: 1500000 -> "1.5s", 60000000 -> "1m", 250 -> "250us".
QString formatDurationUs(qint64 us);

} // namespace ratescope
