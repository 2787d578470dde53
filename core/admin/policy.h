// Policies (which limits apply to which keys) and overrides (temporary limits for one key),
// stored under Ratescope's namespace (docs/key-formats.md).
#pragma once

#include "limiters/algorithm.h"
#include "formats/scoreunit.h"
#include "admin/audit.h"
#include "admin/metadatanamespace.h"
#include "base/glob.h"

#include <optional>
#include <QDateTime>
#include <QJsonObject>
#include <vector>

namespace ratescope {

class Connection;
struct KeyKind;

// The fields of a policy a problem belongs to, so an editor can say it next to that field.
enum class PolicyField { Name, Match, Limit, Window, Cost, Format };
struct PolicyProblem {
    PolicyField field;
    QString message; // LimitSpec::validate's words for the limits, without the policy's name
};

constexpr int kMaxPolicyNameLength = 200;         // characters, none of them control or invisible formatting
constexpr int kMaxPolicyDescriptionLength = 1000; // the same, and one line

inline constexpr int kMaxPolicyShards = 1024;

struct Policy {
    QString name;
    QByteArray match; // key glob (Redis semantics), valid UTF-8 (stored as JSON text); a literal key is an exact match
    LimitSpec spec;   // algorithm, limit, window, default cost
    ScoreUnit scoreUnit = ScoreUnit::Auto;
    QString description;
    bool enforced = true; // services enforce it through the library; false: declared for inspection only
    // A sharded limiter: the keys it matches are shards <base>:<n> of limiters whose group
    // shares spec.limit (each shard limit / shards; the first limit % shards one more). 0: not
    // sharded (the key browser and `keys` still infer shards from the keys themselves).
    int shards = 0;
    // Another library's format the matching keys are read as (formats/formatreaders.h, `ratescope-cli
    // formats`): for key shapes that need saying. Empty: recognised by their shape.
    QString format;
    qint64 version = 0; // 1 on creation, +1 on every change
    QDateTime updatedAt;
    QString updatedBy;

    void validate() const; // throws UsageError (the first of problems(), naming the policy)
    std::vector<PolicyProblem> problems() const;
    QJsonObject toJson() const;
    static Policy fromJson(const QJsonObject &o); // throws UnexpectedReplyError for a malformed record
    // A record as stored under `field` of the policies hash: JSON of a policy named `field` that
    // Policy::problems() finds nothing wrong with (a hand-written limit -5, window 0 or limit
    // 1e30, a value that is no JSON object). Else UnexpectedReplyError saying what.
    static Policy fromRecord(const QByteArray &field, const QByteArray &value);
};

// The policy for a key: an exact (literal) match beats any glob; among globs the most
// specific (longest without wildcards) wins; ties go to the lexically first name.
std::optional<Policy> matchPolicy(const std::vector<Policy> &policies, const QByteArray &key);
// The same, without a copy: the matching element of `policies`, or null.
const Policy *findPolicy(const std::vector<Policy> &policies, const QByteArray &key);

class PolicyStore {
public:
    PolicyStore(Connection &connection, MetadataNamespace ns);

    QByteArray hashKey() const { return hashKeyIn(m_ns); }
    static QByteArray hashKeyIn(const MetadataNamespace &ns) { return ns.key("policies"); } // list() reads it whole (HGETALL)
    QByteArray eventsChannel() const { return m_ns.key("events"); }

    // Every policy this build can read. A record it cannot parse (written by a newer build,
    // or by hand) is skipped, not fatal: the others keep working; when `skipped` is given,
    // one line per skipped record is appended to it ("policy record 'x' skipped: ...").
    std::vector<Policy> list(QStringList *skipped = nullptr);
    std::optional<Policy> get(const QString &name);
    // The version a record states, whether or not it can be read as a policy (0: none).
    qint64 storedVersion(const QString &name);
    // Writes the policy if its current version is still `basedOnVersion` (0: it must not
    // exist yet). Otherwise throws ConflictError naming who changed it and when. Publishes
    // the change on the events channel. Returns the stored policy (new version).
    Policy set(Policy policy, qint64 basedOnVersion, const QString &actor);
    // Deletes under the same rule; returns the deleted policy.
    Policy remove(const QString &name, qint64 basedOnVersion, const QString &actor);

private:
    QJsonObject compareAndSet(const QString &name, qint64 basedOnVersion, const QByteArray &newJson, const QByteArray &event);

    Connection &m_connection;
    MetadataNamespace m_ns;
};

// A temporary limit for one key ("give this customer 2x for 2 hours"); expires by itself.
struct Override {
    QByteArray key;
    qint64 limit = 0;
    qint64 windowUs = 0; // 0: keep the policy's window
    QDateTime setAt;
    QString setBy;
    QDateTime expiresAt;

    QJsonObject toJson() const;
    static Override fromJson(const QJsonObject &o);
};

class OverrideStore {
public:
    OverrideStore(Connection &connection, MetadataNamespace ns);

    QByteArray storageKey(const QByteArray &limiterKey) const { return m_ns.key("override:" + limiterKey); }
    std::optional<Override> get(const QByteArray &key);
    // The overrides of several keys in one pipelined round, in the keys' order.
    std::vector<std::optional<Override>> getMany(const std::vector<QByteArray> &keys);
    // The override in force for a key: its own, else, for a shard of a sharded policy, the
    // one of its whole group (groupOf).
    std::optional<Override> forKey(const QByteArray &key, const std::vector<Policy> &policies);
    // Replaces any override of the key; returns the previous one.
    std::optional<Override> set(const Override &o, qint64 forUs, const QString &actor);
    // Returns the removed override, if there was one.
    std::optional<Override> clear(const QByteArray &key, const QString &actor);
    std::vector<Override> list();

private:
    void publish(const char *type, const QByteArray &key, const QString &actor);

    Connection &m_connection;
    MetadataNamespace m_ns;
};

// Where the limits in force come from (admin/limitsinforce.h states the order).
enum class LimitSource {
    None,          // no limits apply
    Arguments,     // given with the command
    Override,      // the key's own override
    GroupOverride, // its shard group's override
    Policy,        // the matching policy
    KeyState,      // another library's key stating its own limits
};
// What applies to a key right now: the override if any, else the policy's limits (a shard
// <base>:<n> of a policy with `shards` N: its share of the limit, shard n mod N). Asked of
// LimitResolver (admin/limitsinforce.h), the one place that decides it.
struct EffectiveLimits {
    std::optional<Policy> policy;
    std::optional<Override> override;
    std::optional<LimitSpec> spec;
    LimitSource source = LimitSource::None;
};
// `override` may be the key's own or its group's (then the group's limit is shared out as the
// policy's is).
EffectiveLimits effectiveLimits(const std::vector<Policy> &policies, const std::optional<Override> &override, const QByteArray &key);
// The limits of `policy` for `key` (a shard's share), with `override`'s in their place.
LimitSpec limitsOf(const Policy &policy, const std::optional<Override> &override, const QByteArray &key);

// The group a key is a shard of: <base> for <base>:<n> when the policy matching the key
// declares shards and n is one of them; empty otherwise. An override of the base covers
// the whole group.
QByteArray groupOf(const std::vector<Policy> &policies, const QByteArray &key);

// Why check, burst and boundary must not write to `key` (shown as `shownKey`), or empty when
// they may: one of Ratescope's own records under the namespace; a key whose policy declares
// another library's format (a new key there is that library's, and a Ratescope hash or log in
// its place would break it); a key recognised as another service's limiter (notOursToDecide).
QString notOursToWrite(const QString &shownKey, const QByteArray &key, const MetadataNamespace &ns, const Policy *policy,
                       const KeyKind &kind);

// The one audit entry each change leaves, built here so that the CLI and the console write
// exactly the same entries (action, target, before/after as compact JSON, count).
AuditEntry policySetAuditEntry(const std::optional<Policy> &before, const Policy &stored);
AuditEntry policyDeleteAuditEntry(const Policy &removed);
AuditEntry overrideSetAuditEntry(const QByteArray &key, const std::optional<Override> &previous, const std::optional<Override> &stored);
AuditEntry overrideClearAuditEntry(const QByteArray &key, const std::optional<Override> &removed);

} // namespace ratescope
