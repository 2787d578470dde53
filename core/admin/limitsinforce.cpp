#include "admin/limitsinforce.h"

#include "base/errors.h"
#include "formats/keyshapes.h"
#include "formats/usage.h"
#include "redis/connection.h"

#include <QJsonDocument>

namespace ratescope {

QString limitSourceName(LimitSource source)
{
    switch (source) {
    case LimitSource::Arguments:
        return QStringLiteral("arguments");
    case LimitSource::Override:
        return QStringLiteral("override");
    case LimitSource::GroupOverride:
        return QStringLiteral("group override");
    case LimitSource::Policy:
        return QStringLiteral("policy");
    case LimitSource::KeyState:
        return QStringLiteral("key");
    case LimitSource::None:
        break;
    }
    return QStringLiteral("none");
}

LimitResolver::LimitResolver(std::vector<Policy> policies, MetadataNamespace ns)
    : m_policies(std::move(policies))
    , m_ns(std::move(ns))
{
    for (const Policy &p : m_policies)
        m_sharded = m_sharded || p.shards >= 2;
}

std::vector<QByteArray> LimitResolver::overrideSubjects(const QByteArray &subject) const
{
    std::vector<QByteArray> keys{subject};
    appendGroup(subject, keys);
    return keys;
}

void LimitResolver::appendGroup(const QByteArray &subject, std::vector<QByteArray> &keys) const
{
    // Only a policy that declares shards makes groups: the policy walk only then.
    if (!m_sharded)
        return;
    if (QByteArray group = groupOf(m_policies, subject); !group.isEmpty())
        keys.push_back(std::move(group));
}

void LimitResolver::setOverride(const QByteArray &key, std::optional<Override> override)
{
    if (override)
        m_overrides.insert(key, std::move(*override));
    else
        m_overrides.remove(key);
}

void LimitResolver::takeOverride(const QByteArray &key, const Reply &storedValue)
{
    std::optional<Override> found;
    if (!storedValue.isNil() && !storedValue.isError() && storedValue.type() == Reply::Type::String) {
        const QJsonDocument doc = QJsonDocument::fromJson(storedValue.bytes());
        if (doc.isObject()) {
            try {
                found = Override::fromJson(doc.object());
            } catch (const Error &) {
                // a record this build cannot read: no override, as for every view alike
            }
        }
    }
    setOverride(key, std::move(found));
}

LimitsInForce LimitResolver::resolve(const QByteArray &subject, const KeyKind &kind) const
{
    return resolve(subject, kind, std::nullopt);
}

LimitsInForce LimitResolver::resolve(const QByteArray &subject, const KeyKind &kind, const std::optional<LimitSpec> &arguments) const
{
    LimitsInForce in;
    in.policy = findPolicy(m_policies, subject);
    if (arguments) {
        in.spec = limitsAsRead(kind, *arguments);
        in.source = LimitSource::Arguments;
        return in;
    }
    // The key's own override, else its group's (a shard <base>:<n> of a sharded policy).
    std::optional<Override> override;
    bool groupWide = false;
    if (!in.policy || m_overrides.isEmpty()) {
        // none to apply: an override only changes a policy's limits
    } else if (const auto own = m_overrides.constFind(subject); own != m_overrides.cend()) {
        override = *own;
    } else if (in.policy->shards >= 2) {
        const QByteArray group = groupOf(m_policies, subject);
        if (const auto g = m_overrides.constFind(group); !group.isEmpty() && g != m_overrides.cend()) {
            override = *g;
            groupWide = true;
        }
    }
    if (in.policy) {
        in.spec = limitsOf(*in.policy, override, subject);
        in.source = LimitSource::Policy;
        if (override) {
            in.override = override;
            in.source = groupWide ? LimitSource::GroupOverride : LimitSource::Override;
        }
    }
    if (kind.format == KeyFormat::Library && kind.keyLimits && !in.spec)
        in.source = LimitSource::KeyState;
    // As the key is read: another library's stated limits or window, a stored shape's algorithm.
    in.spec = limitsFor(kind, in.spec);
    if (in.spec && kind.format != KeyFormat::Library)
        if (const auto a = kind.algorithm())
            in.spec->algorithm = *a;
    if (!in.spec)
        in.source = LimitSource::None;
    return in;
}

std::vector<Command> LimitResolver::overrideReads(const MetadataNamespace &ns, const QByteArray &subject)
{
    const QByteArray prefix = ns.key("override:");
    std::vector<Command> reads{{"GET", prefix + subject}};
    QByteArray base;
    int n = 0;
    if (splitShardKey(subject, &base, &n))
        reads.push_back({"GET", prefix + base});
    return reads;
}

void LimitResolver::readOverrides(Connection &connection, const std::vector<QByteArray> &subjects)
{
    if (m_policies.empty())
        return; // an override changes a policy's limits: without policies it has none to change
    // Pipelines of at most kPerPipeline subjects, so that a pass over millions holds a bounded
    // share of the commands and replies at once.
    constexpr size_t kPerPipeline = 100000;
    const bool cluster = connection.isCluster();
    for (size_t from = 0; from < subjects.size(); from += kPerPipeline) {
        const std::vector<QByteArray> part(subjects.begin() + qsizetype(from),
                                           subjects.begin() + qsizetype(std::min(subjects.size(), from + kPerPipeline)));
        OverrideReads reads = overrideCommands(part, cluster);
        const std::vector<Reply> replies = connection.pipeline(reads.commands);
        takeOverrides(reads, replies.data());
    }
}

LimitResolver::OverrideReads LimitResolver::overrideCommands(const std::vector<QByteArray> &subjects, bool cluster) const
{
    OverrideReads reads;
    if (m_policies.empty())
        return reads; // nothing to read
    // Subjects and their groups' bases; a key asked twice is harmless (and rare: SCAN may
    // return a key twice, shards share a base), so no set is built for a million keys.
    // Only subjects a policy covers: an override changes a policy's limits, no other's
    // (resolve()), so a scan of keys no policy matches reads none.
    reads.keys.reserve(subjects.size());
    for (const QByteArray &subject : subjects) {
        if (!findPolicy(m_policies, subject))
            continue;
        reads.keys.push_back(subject);
        appendGroup(subject, reads.keys);
    }
    if (reads.keys.empty())
        return reads;
    // A few keys (one limiter: itself and its group) go as a GET each, as on a cluster (keys
    // of many slots, routed by the pipeline): the commands a caller reads ahead for one key
    // (Connection::prefetch, overrideReads). Else an MGET per kPerMget keys.
    constexpr size_t kPerMget = 1000;
    const QByteArray prefix = m_ns.key("override:");
    reads.each = cluster || reads.keys.size() <= kGetEachUpTo;
    if (reads.each) {
        for (const QByteArray &k : reads.keys)
            reads.commands.push_back({"GET", prefix + k});
        return reads;
    }
    for (size_t at = 0; at < reads.keys.size(); at += kPerMget) {
        const size_t to = std::min(reads.keys.size(), at + kPerMget);
        Command mget{"MGET"};
        mget.reserve(qsizetype(to - at + 1));
        for (size_t i = at; i < to; ++i)
            mget.push_back(prefix + reads.keys[i]);
        reads.commands.push_back(std::move(mget));
    }
    return reads;
}

void LimitResolver::takeOverrides(const OverrideReads &reads, const Reply *replies)
{
    if (reads.each) {
        for (size_t i = 0; i < reads.keys.size(); ++i)
            if (!replies[i].orThrow().isNil()) // NOPERM on the namespace: said, rather than showing wrong limits
                takeOverride(reads.keys[i], replies[i]);
        return;
    }
    constexpr size_t kPerMget = 1000;
    for (size_t c = 0; c < reads.commands.size(); ++c) {
        const Reply &r = replies[c];
        r.orThrow();
        const size_t first = c * kPerMget;
        for (size_t i = 0; i < r.size() && first + i < reads.keys.size(); ++i)
            if (!r[i].isNil())
                takeOverride(reads.keys[first + i], r[i]);
    }
}

EffectiveLimits readLimitsInForce(Connection &connection, const MetadataNamespace &ns, const std::vector<Policy> &policies,
                                  const QByteArray &subject, const KeyKind &kind)
{
    LimitResolver resolver(policies, ns);
    resolver.readOverrides(connection, {subject});
    return effectiveOf(resolver.resolve(subject, kind));
}

EffectiveLimits effectiveOf(const LimitsInForce &in)
{
    EffectiveLimits e;
    if (in.policy)
        e.policy = *in.policy;
    e.override = in.override;
    e.spec = in.spec;
    e.source = in.source;
    return e;
}

} // namespace ratescope
