// How the console writes numbers, sizes and durations: short, with units, the same everywhere.
#pragma once

#include "limiters/algorithm.h"

#include <QString>

namespace ratescope::ui {

QString formatCount(qint64 n);              // 1234567 -> "1,234,567"
QString formatCountShort(qint64 n);         // for narrow cells: 9999 -> "9,999", 12345 -> "12k", 1000000 -> "1.0M"
QString formatUsage(qint64 used, qint64 limit);      // "60 / 60", "1,000,000 / 1,000,000"
QString formatUsageShort(qint64 used, qint64 limit); // "60 / 60", "1.0M / 1.0M"
QString formatKeys(qint64 n);               // 1 -> "1 key", 1234 -> "1,234 keys"
QString formatSize(qint64 bytes);           // 472 -> "472 B", 1536 -> "1.5 KiB"
QString formatSpan(qint64 us);              // 850000 -> "850 ms", 4200000 -> "4.2 s", 3723000000 -> "1 h 02 m"
// How long ago, in whole seconds under a minute ("42 s ago"), else as formatSpan ("3 m 05 s ago");
// a negative age is a clock ahead of this machine's.
QString formatAgo(qint64 ms);
QString formatTtl(qint64 pttlMs);           // -1 -> "no expiry", -2 -> "gone", -3 -> "?", else a span
QString formatRoundTrip(double ms);         // 0.214 -> "0.21 ms", 12.3 -> "12 ms"
QString formatLimit(const LimitSpec &spec); // "60 per 10 s", "120 per 1 m (cost 2)"

// A tooltip holding server-supplied text (keys, names, operators): Qt reads any tooltip whose
// first line looks like markup as rich text, so such text is escaped and wrapped; a key named
// <img src=...> shows as itself. Line breaks are kept.
QString plainToolTip(const QString &text);

} // namespace ratescope::ui
