// Reading a stretch of a sorted-set log for a chart, read-only: the entries themselves when few
// enough, otherwise counts per time bucket from the server (one pipelined round of ZCOUNT), so a
// log of millions of entries is never downloaded.
#pragma once

#include "admin/policy.h"
#include "redis/resp.h"

#include <QByteArray>

#include <vector>

namespace ratescope {

class Connection;

struct LogEntry {
    qint64 timeUs = 0; // the score in µs, rounded to the nearest µs
    double score = 0;  // as stored
    QByteArray member;
    qint64 cost = 1;
};

struct LogBucket {
    qint64 fromUs = 0; // [fromUs, toUs)
    qint64 toUs = 0;
    qint64 count = 0; // entries, not cost units
};

struct LogWindowQuery {
    QByteArray key;
    ScoreUnit unit = ScoreUnit::Microseconds; // Auto reads as µs (Ratescope's own logs)
    qint64 fromUs = 0;                        // [fromUs, toUs)
    qint64 toUs = 0;
    int buckets = 100;       // 1..10000
    qint64 entryCap = 10000; // read the entries only when the range holds no more than this
};

struct LogWindow {
    qint64 total = 0;              // entries in [fromUs, toUs), by ZCOUNT
    bool bucketed = false;         // more than the cap: only the counts were read
    std::vector<LogEntry> entries; // oldest first; empty when bucketed
    // Always query.buckets equal slices of the range (the last one takes the remainder); counted
    // on the server when bucketed, from the entries otherwise, with the same bounds either way.
    std::vector<LogBucket> buckets;
    qint64 entriesRead = 0; // members transferred for this read
};

// One ZCOUNT, then either ZRANGE BYSCORE of the entries or the pipelined ZCOUNTs of the buckets.
// Throws UsageError for a bad query, ReplyError/ConnectionError as the connection does.
LogWindow readLogWindow(Connection &connection, const LogWindowQuery &query);
// The commands readLogWindow() sends, for a caller that reads them ahead with others in one
// round (Connection::prefetch): its ZCOUNT, then the entries or, with `bucketed` (a guess,
// from the previous read: the range holds more than the cap), the buckets' ZCOUNTs. A wrong
// guess costs readLogWindow() the round it would have taken anyway.
std::vector<Command> logWindowReads(const LogWindowQuery &query, bool bucketed);

// One page of the entries in [fromUs, toUs), oldest first (ZRANGE BYSCORE LIMIT), and how many
// the range holds.
struct LogPage {
    qint64 total = 0;
    qint64 offset = 0;
    std::vector<LogEntry> entries;
};
LogPage readLogPage(Connection &connection, const QByteArray &key, ScoreUnit unit, qint64 fromUs, qint64 toUs, qint64 offset, int count);
// The pipeline readLogPage() sends (ZCOUNT and ZRANGE of the range).
std::vector<Command> logPageReads(const QByteArray &key, ScoreUnit unit, qint64 fromUs, qint64 toUs, qint64 offset, int count);

// The score bound for a time: the smallest double whose time (scoreToUs: the score in µs,
// rounded to the nearest µs) is at least timeUs, so that [fromUs, toUs) is the score range
// [bound(from), (bound(to)), exact for s, ms and µs scores alike, whatever double another service
// stored; the text round-trips through the server's strtod.
double scoreBound(qint64 timeUs, ScoreUnit unit);
QByteArray scoreBoundText(double bound);

// What one entry costs: the ":<cost>" of a ticket member ("245:4"), 1 for anything else.
qint64 memberCost(const QByteArray &member);

} // namespace ratescope
