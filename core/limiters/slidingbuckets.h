// Ratescope's sliding-buckets hash read with plain commands (HGETALL), and the script's rule
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
