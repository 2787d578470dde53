// Ratescope's sliding-buckets hash read with plain commands (HSCAN, HMGET), and the script's rule
// (lua/sliding-buckets.lua, docs/scripts.md) applied to what was read: the answer of the
// script's peek, for callers that read many keys in one round, that may not run scripts, or
// that show the buckets themselves (key view, inspect).
#pragma once

#include "limiters/algorithm.h"
#include "limiters/decision.h"
#include "redis/resp.h"

#include <map>
#include <optional>

namespace ratescope {

class Connection;

struct BucketHash {
    qint64 windowUs = 0;             // ws: the window the buckets were kept for
    int buckets = 0;                 // bn: B
    qint64 total = 0;                // t: the sum of the stored buckets
    qint64 low = 0;                  // l: the lowest bucket id that may be stored
    qint64 high = 0;                 // h: the newest bucket id with admissions
    std::map<qint64, qint64> counts; // bucket id -> admitted cost, as stored (-1: not a count)

    // One bucket's count, 0 when it is not stored.
    qint64 count(qint64 id) const
    {
        const auto it = counts.find(id);
        return it == counts.end() ? 0 : it->second;
    }
};

// The fields as HGETALL returns them; std::nullopt for a missing key (no fields). Throws
// ReplyError in the script's words for a hash the script did not write.
std::optional<BucketHash> parseBucketHash(const QByteArray &key, const Reply &hgetall);

// A hash read in bounded time whatever it holds: one HSCAN page of up to this many fields, which
// is every field of any hash the script writes (at most 5 + 3601) and never millions.
inline constexpr int kBucketScanCount = 8192;
// HSCAN key 0 COUNT kBucketScanCount: the reply is [cursor, [field, value, ...]].
Command bucketHashScan(const QByteArray &key);
// Whether that page is the whole hash (the scan ended in it).
bool isWholeHash(const Reply &hscan);
// The fields of that page, flat as HGETALL gives them (nil when the reply is not a scan page).
const Reply &scannedFields(const Reply &hscan);

// The state the script would read at nowUs under spec, from a page of bucketHashScan(key):
// the page when it is the whole hash; else (a hash larger than any the script keeps) the
// fields the script reads, asked by name (HMGET of ws, bn, t, l, h and every bucket it can
// reach: at most 5 + B + 3601 fields, a second HMGET when the clock is behind its newest bucket).
// Throws ReplyError as parseBucketHash.
std::optional<BucketHash> bucketStateFrom(Connection &connection, const QByteArray &key, const LimitSpec &spec, qint64 nowUs,
                                          const Reply &hscan);

// Where a time falls: bucket id = floor(t * B / window) and the part of it elapsed, in units of
// 1/B us (a bucket is `window` of them).
struct BucketPosition {
    qint64 id = 0;
    qint64 elapsed = 0;
};
BucketPosition bucketOf(qint64 timeUs, qint64 windowUs, int buckets);
// Where the script reads `state` at nowUs: bucketOf(now), or, when the clock went back behind
// the newest stored bucket, the first microsecond of that bucket.
BucketPosition readPosition(const BucketHash &state, qint64 nowUs, qint64 windowUs, int buckets);

// What the script's peek answers for `state` at nowUs (spec.algorithm is not looked at).
Decision bucketsDecision(const QByteArray &key, const LimitSpec &spec, const std::optional<BucketHash> &state, qint64 nowUs);

} // namespace ratescope
