#include "hotqueries.h"

#include "redis/connection.h"

namespace ratescope::ui {

HotScanStep hotScanStep(Connection &c, HotScanner &scanner, int maxPages, const std::function<bool()> &yield)
{
    int pages = 0;
    const bool done = scanner.scan(c, [&] { return ++pages >= maxPages || (yield && yield()); });
    return HotScanStep{done, scanner.scanned(), scanner.keysInDatabase(), scanner.sampleAbove()};
}

bool hotFirstRead(Connection &c, HotScanner &scanner)
{
    scanner.firstRead(c);
    return true;
}

std::pair<qint64, HotPass> hotSecondRead(Connection &c, HotScanner &scanner, HotOrder order, int max)
{
    HotPass pass = scanner.secondRead(c);
    const qint64 found = qint64(pass.limiters.size());
    HotScanner::rank(pass.limiters, order, max);
    if (!pass.usageRead)
        scanner.readUsage(c, pass.limiters, pass.nowUs);
    return {found, std::move(pass)};
}

} // namespace ratescope::ui
