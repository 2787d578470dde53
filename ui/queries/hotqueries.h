// The Hot view's steps of core's HotScanner: a few scan pages at a time, the first read, the
// second read ranked (with the usage of those shown).
#pragma once

#include "limitqueries.h"
#include "load/hotlimiters.h"

#include <functional>
#include <utility>
#include <vector>

namespace ratescope {
class Connection;
}

namespace ratescope::ui {

struct HotScanStep {
    bool done = false; // the scan is complete
    qint64 scanned = 0;
    qint64 keys = 0;
    qint64 sampleAbove = 0;
};
// At most maxPages scan pages, fewer when yield(), called between two, says stop (the
// console's runs the reads waiting on the connection there and says go on).
HotScanStep hotScanStep(Connection &c, HotScanner &scanner, int maxPages, const std::function<bool()> &yield);

// The first read of every limiter found.
bool hotFirstRead(Connection &c, HotScanner &scanner);

// The second read: every limiter found (first), those ranked first by order, at most max, with
// their usage read (second).
std::pair<qint64, HotPass> hotSecondRead(Connection &c, HotScanner &scanner, HotOrder order, int max);

} // namespace ratescope::ui
