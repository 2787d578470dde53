// Sharded limiters: a hot limiter split into keys <base>:<n> (n in 0..N-1 or 1..N), each
// holding the same kind of limiter state, is one logical limiter. Declared by a policy
// (`shards`): the shards share the policy's limit out. Inferred from the keys alone: each
// shard has what its own key is given (a policy limits every key it matches), and the
// group enforces the sum.
#pragma once

#include "formats/recognition.h"
#include "formats/keyshapes.h"
#include "admin/policy.h"
#include "formats/usage.h"

class QByteArray;

#include <map>
#include <optional>
#include <vector>

namespace ratescope {

struct ShardGroup {
    QByteArray base;
    KeyFormat format = KeyFormat::Other;
    int from = 0;                           // 0 or 1
    int count = 0;                          // N: shards from..from+N-1
    std::vector<QByteArray> keys;           // the shards found, in shard order
    std::optional<Policy> policy;           // the policy that matches the shards, if any
    bool declared = false;                  // the policy says `shards` (else inferred)
    std::optional<Override> override;       // an override of the base: the group's limit (shared out as the policy's)
    std::map<int, Override> shardOverrides; // shard index -> its own override, which beats its share

    QByteArray shardKey(int i) const { return base + ":" + QByteArray::number(from + i); }
};

// The shard groups among classified keys (key, class): limiters of one of Ratescope's own
// formats or a foreign log (counter windows never: their numbers are window ids) whose keys
// are <base>:<n>. A group is inferred when its numbers are exactly 0..N-1, 2 <= N <=
// kMaxInferredShards, all of one format (keys numbered from 1, or more of them, look like
// limiters per numeric id, not shards); a policy with `shards` N that matches the keys makes
// them one group, numbered from 0 or 1, whatever shards exist (missing ones are empty). Keys
// in no group are left out of the result.
inline constexpr int kMaxInferredShards = 64;
std::vector<ShardGroup> findShardGroups(const std::vector<std::pair<QByteArray, KeyKind>> &keys, const std::vector<Policy> &policies);

// How full a group is, from its shards' usage (nullopt where a shard could not be read):
// used summed, against the group limit; the busiest shard and the skew (the busiest shard's
// used times N over the sum: 1 is even).
struct ShardUsage {
    qint64 used = 0;
    qint64 limit = 0;
    int busiest = -1; // shard index
    qint64 busiestUsed = 0;
    double skew = 0;
    bool denying = false; // some shard would deny a request now
};
ShardUsage sumShards(const std::vector<std::optional<Usage>> &shards);
// The group's usage as one limiter's: used summed against the group's limit, denying when a
// shard would deny (no retry time: each shard has its own).
Usage groupUsage(const ShardUsage &sum, qint64 groupLimit);
// What to read for each shard of a group with a policy: its key, format and limits, those
// a one-key read of it resolves (shard order); empty without a policy.
std::vector<UsageTarget> shardTargets(const ShardGroup &group);
// What the group enforces in all: a declared group's override's or policy's limit; the sum
// of what each shard enforces when shards have overrides of their own or the group is inferred.
qint64 groupLimit(const ShardGroup &group);

// A sharded limiter read whole, by its base (a key that does not exist itself): its shards
// (SCAN MATCH <base>:*, at most kMaxScanned keys looked at), each one's usage with its share
// of the policy's limit, and the sum. nullopt when the base has no shard group.
struct ShardGroupState {
    ShardGroup group;
    std::vector<std::optional<Usage>> usage; // per shard index, 0..count-1; nullopt: no limits or unreadable
    ShardUsage sum;                          // limit: the group's (groupLimit), when there is a policy
};
inline constexpr qint64 kMaxShardScan = 100000;
// The group's overrides, in one round: the base's (the group's limit) and each shard's own.
void readGroupOverrides(OverrideStore &store, ShardGroup &group);
// With `overrides`, the group is read under them (readGroupOverrides).
std::optional<ShardGroupState> readShardGroup(Connection &connection, const QByteArray &base, const std::vector<Policy> &policies,
                                              qint64 nowUs, OverrideStore *overrides = nullptr);

} // namespace ratescope
