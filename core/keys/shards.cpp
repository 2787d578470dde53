#include "keys/shards.h"

#include "redis/connection.h"
#include "redis/scan.h"
#include "base/errors.h"
#include "base/glob.h"
#include "keys/keyscanner.h"

#include <QHash>

#include <algorithm>
#include <map>

namespace ratescope {


namespace {

bool shardableFormat(KeyFormat f)
{
    switch (f) {
    case KeyFormat::SlidingLog:
    case KeyFormat::SlidingCounter:
    case KeyFormat::FixedWindow:
    case KeyFormat::TokenBucket:
    case KeyFormat::Gcra:
    case KeyFormat::SlidingBuckets:
    case KeyFormat::ForeignSlidingLog:
        return true;
    default:
        return false;
    }
}

} // namespace

std::vector<ShardGroup> findShardGroups(const std::vector<std::pair<QByteArray, KeyKind>> &keys, const std::vector<Policy> &policies)
{
    struct Found {
        std::map<int, QByteArray> byNumber;
        QSet<int> formats;
        std::optional<Policy> policy;
    };
    std::map<QByteArray, Found> bases;
    for (const auto &[key, kind] : keys) {
        QByteArray base;
        int n = 0;
        if (!shardableFormat(kind.format) || !splitShardKey(key, &base, &n))
            continue;
        Found &f = bases[base];
        f.byNumber[n] = key;
        f.formats.insert(int(kind.format));
        if (!f.policy)
            f.policy = matchPolicy(policies, key);
    }
    std::vector<ShardGroup> groups;
    for (auto &[base, f] : bases) {
        if (f.formats.size() != 1)
            continue; // shards hold one kind of state
        ShardGroup g;
        g.base = base;
        g.format = KeyFormat(*f.formats.begin());
        g.policy = f.policy;
        const int lowest = f.byNumber.begin()->first, highest = f.byNumber.rbegin()->first;
        if (f.policy && f.policy->shards >= 2) {
            // Declared: numbered from 0 unless a shard numbered N is there (then 1..N).
            g.declared = true;
            g.count = f.policy->shards;
            g.from = highest == g.count && lowest >= 1 ? 1 : 0;
            if (highest >= g.from + g.count || lowest < g.from)
                continue; // numbers outside the declared shards: not this policy's group
        } else {
            // Inferred: exactly 0..N-1, at least two and at most kMaxInferredShards. Keys
            // numbered from 1 are ids more often than shards (rl:user:1 .. rl:user:5 are five
            // users): shards numbered 1..N are a policy's to declare.
            const int count = int(f.byNumber.size());
            if (count < 2 || count > kMaxInferredShards || lowest != 0 || highest - lowest + 1 != count)
                continue;
            g.from = lowest;
            g.count = count;
        }
        for (const auto &[n, key] : f.byNumber)
            g.keys.push_back(key);
        groups.push_back(std::move(g));
    }
    return groups;
}

std::vector<UsageTarget> shardTargets(const ShardGroup &group)
{
    std::vector<UsageTarget> targets;
    if (!group.policy)
        return targets;
    const bool declared = group.declared && group.policy->shards >= 2;
    for (int i = 0; i < group.count; ++i) {
        const QByteArray key = group.shardKey(i);
        const auto own = group.shardOverrides.find(i);
        const std::optional<Override> shardOwn = own != group.shardOverrides.end() ? std::optional(own->second) : std::nullopt;
        // Each shard has the limits every command and view gives its key (limitsOf, as
        // LimitResolver resolves it): its own override, else, in a declared group, its share
        // of the group's override or policy (shard n of N taking share n mod N); in an
        // inferred group the policy limits each key it matches, so a shard has it whole.
        const LimitSpec share = limitsOf(*group.policy, shardOwn ? shardOwn : (declared ? group.override : std::nullopt), key);
        KeyKind kind;
        kind.format = group.format;
        targets.push_back({key, kind, share});
    }
    return targets;
}

qint64 groupLimit(const ShardGroup &group)
{
    if (!group.policy)
        return 0;
    if (!group.declared || !group.shardOverrides.empty()) {
        qint64 sum = 0;
        for (const UsageTarget &t : shardTargets(group))
            sum += t.spec.limit;
        return sum;
    }
    return group.override ? group.override->limit : group.policy->spec.limit;
}

void readGroupOverrides(OverrideStore &store, ShardGroup &group)
{
    std::vector<QByteArray> keys{group.base};
    for (int i = 0; i < group.count; ++i)
        keys.push_back(group.shardKey(i));
    const auto found = store.getMany(keys);
    // An override of the base is the group's limit only where a policy declares the group:
    // a shard of an inferred group is limited as its own key, which that override does not name.
    group.override = group.declared ? found[0] : std::nullopt;
    group.shardOverrides.clear();
    for (int i = 0; i < group.count; ++i)
        if (found[size_t(i) + 1])
            group.shardOverrides.emplace(i, *found[size_t(i) + 1]);
}

ShardUsage sumShards(const std::vector<std::optional<Usage>> &shards)
{
    ShardUsage u;
    for (size_t i = 0; i < shards.size(); ++i) {
        if (!shards[i])
            continue;
        u.used += shards[i]->usedNow;
        u.limit += shards[i]->decision.limit;
        u.denying = u.denying || !shards[i]->decision.allowed;
        if (u.busiest < 0 || shards[i]->usedNow > u.busiestUsed) {
            u.busiest = int(i);
            u.busiestUsed = shards[i]->usedNow;
        }
    }
    u.skew = u.used > 0 ? double(u.busiestUsed) * double(shards.size()) / double(u.used) : 0;
    return u;
}

Usage groupUsage(const ShardUsage &sum, qint64 groupLimit)
{
    Decision d;
    d.limit = groupLimit;
    d.used = sum.used;
    d.remaining = std::max<qint64>(0, groupLimit - sum.used);
    d.allowed = !sum.denying;
    return Usage{sum.used, d};
}

std::optional<ShardGroupState> readShardGroup(Connection &connection, const QByteArray &base, const std::vector<Policy> &policies,
                                              qint64 nowUs, OverrideStore *overrides)
{
    std::vector<QByteArray> candidates;
    QByteArray cursor = "0";
    qint64 scanned = 0;
    do {
        const ScanStep page = scanStep(connection, cursor, escapeGlob(base) + ":*", 1000);
        cursor = page.cursor;
        for (const QByteArray &k : page.names) {
            QByteArray b;
            int n = 0;
            if (splitShardKey(k, &b, &n) && b == base)
                candidates.push_back(k);
        }
        scanned += qint64(page.names.size()) + 1;
    } while (cursor != "0" && scanned < kMaxShardScan);
    if (candidates.size() < 2 && !matchPolicy(policies, base + ":0"))
        return std::nullopt;
    KeyRound round;
    round.nowUs = nowUs;
    round.policies = &policies;
    const KeyRoundResult read = readKeyRecords(connection, candidates, round);
    std::vector<std::pair<QByteArray, KeyKind>> keys;
    for (const KeyRecord &r : read.records)
        keys.emplace_back(r.key, r.kind);
    for (const ShardGroup &g : findShardGroups(keys, policies)) {
        if (g.base != base)
            continue;
        ShardGroupState state;
        state.group = g;
        if (overrides)
            readGroupOverrides(*overrides, state.group);
        state.usage.resize(size_t(g.count));
        if (g.policy) {
            state.usage = readUsage(connection, shardTargets(state.group), nowUs);
            state.sum = sumShards(state.usage);
            state.sum.limit = groupLimit(state.group);
        }
        return state;
    }
    return std::nullopt;
}

} // namespace ratescope
