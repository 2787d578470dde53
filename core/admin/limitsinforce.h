// The limits in force for a limiter: the one place every view and command asks what applies
// to a key now (the CLI's keys, inspect, check, peek, watch, top, burst and reset preview; the
// console's keys panel, key view, Monitor, Hot view, Burst page, Reset dialog and What-if
// page), so that no two of them can disagree. docs/key-formats.md (Policies) states the same
// order to users.
//
// Order of precedence, the first that applies wins:
//   1. limits given with the command (`check --limit 10 --window 1m`): what was asked for;
//   2. an override of the key itself (`override set`), while it lasts;
//   3. an override of the shard group the key is a shard of (<base>:<n> of a policy with
//      `shards`), set on <base>: the group's limit, shared out as the policy's is;
//   4. the most specific policy matching the key (a literal match beats any glob, then the
//      longest glob; ties to the first name): its limits, for a shard its share;
//   5. nothing: the key has no limits, unless it is another library's key that states its
//      own (then those, whatever the policy says of the limit and window).
// An override applies on top of a policy (it changes the limit, and the window when it gives
// one); an override of a key no policy matches is kept but has nothing to change. Last, the
// limits are made the ones the key is read with: another library's key may state its
// window or algorithm (formats/usage.h, limitsAsRead), and a key's stored shape its
// algorithm. A counter window ("api:acme:28475638") and another library's keys are asked for
// by their subject, the limiter they belong to (KeyKind::subject).
#pragma once

#include "admin/metadatanamespace.h"
#include "admin/policy.h"
#include "formats/keykind.h"
#include "redis/resp.h"

#include <QHash>
#include <optional>
#include <vector>

namespace ratescope {

class Connection;
class Reply;

QString limitSourceName(LimitSource source); // "arguments", "override", "group override", "policy", "key", "none"

struct LimitsInForce {
    const Policy *policy = nullptr;   // the matching policy (owned by the resolver), if any
    std::optional<Override> override; // the override applied, if any (the key's own or its group's)
    std::optional<LimitSpec> spec;    // the limits the key is read with; none: no limits
    LimitSource source = LimitSource::None;

    QString policyName() const { return policy ? policy->name : QString(); }
    bool overridden() const { return source == LimitSource::Override || source == LimitSource::GroupOverride; }
};

// Answers for one set of policies and the overrides read for it. Cheap to ask: a policy match
// is a walk over the policies, an override a hash lookup, so a pass over a million keys asks
// it for every one.
class LimitResolver {
public:
    LimitResolver() = default;
    // ns: where the overrides are stored (Ratescope's metadata namespace).
    explicit LimitResolver(std::vector<Policy> policies, MetadataNamespace ns = {});

    const std::vector<Policy> &policies() const { return m_policies; }
    const MetadataNamespace &ns() const { return m_ns; }

    // The keys whose overrides decide the limits of `subject`: itself, and for a shard of a
    // sharded policy its group's base. Read them (readOverrides, or a caller's own pipeline and
    // takeOverride) before asking resolve() about the subject.
    std::vector<QByteArray> overrideSubjects(const QByteArray &subject) const;
    // Reads the overrides deciding these subjects' limits: pipelined (on one server an MGET per
    // 1,000 keys; on a cluster a GET each), none for subjects no policy covers (an override
    // only changes a policy's limits). Throws the server's refusal (NOPERM on the namespace) rather
    // than answer without them.
    void readOverrides(Connection &connection, const std::vector<QByteArray> &subjects);
    static constexpr size_t kGetEachUpTo = 4; // keys read as a GET each, not MGET
    // readOverrides() in its steps, for callers that send the reads with other commands (the
    // key scanner's page round): the commands for these subjects (none without policies),
    // then their replies taken, in order.
    struct OverrideReads {
        std::vector<Command> commands;
        std::vector<QByteArray> keys; // whose overrides they read
        bool each = false;            // a GET per key, else an MGET per 1,000
    };
    OverrideReads overrideCommands(const std::vector<QByteArray> &subjects, bool cluster) const;
    void takeOverrides(const OverrideReads &reads, const Reply *replies);
    // Before the policies are known: the reads readOverrides() will send for one subject,
    // whatever the policies say (its own override, and its group's should it be a shard),
    // for Connection::prefetch. A GET nobody asks for later is one small reply thrown away.
    static std::vector<Command> overrideReads(const MetadataNamespace &ns, const QByteArray &subject);
    // Records what the store holds for a key (nullopt: no override); a reply that is not an
    // override record (nil, an error, malformed) counts as none. Only overrides are kept, so
    // that a pass over a million keys holds no more than the overrides it found.
    void setOverride(const QByteArray &key, std::optional<Override> override);
    void takeOverride(const QByteArray &key, const Reply &storedValue);

    // The limits in force for `subject` (a key, or the limiter a key belongs to) of this kind.
    // Overrides not read count as none.
    LimitsInForce resolve(const QByteArray &subject, const KeyKind &kind) const;
    // The same, with limits given with the command (which then win over everything).
    LimitsInForce resolve(const QByteArray &subject, const KeyKind &kind, const std::optional<LimitSpec> &arguments) const;

private:
    void appendGroup(const QByteArray &subject, std::vector<QByteArray> &keys) const; // its group's base, if it is a shard
    std::vector<Policy> m_policies;
    bool m_sharded = false; // some policy declares shards
    MetadataNamespace m_ns;
    QHash<QByteArray, Override> m_overrides; // the overrides read; a key not here has none
};

// The same as EffectiveLimits, the policy copied out (to outlive the resolver).
EffectiveLimits effectiveOf(const LimitsInForce &in);

// The limits in force for one subject, its overrides read here (one round trip): for the
// commands and views about a single key. The policy is copied out.
EffectiveLimits readLimitsInForce(Connection &connection, const MetadataNamespace &ns, const std::vector<Policy> &policies,
                                  const QByteArray &subject, const KeyKind &kind = {});


} // namespace ratescope
