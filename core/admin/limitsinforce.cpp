#include "admin/limitsinforce.h"

#include "base/errors.h"
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
}

std::vector<QByteArray> LimitResolver::overrideSubjects(const QByteArray &subject) const
{
    std::vector<QByteArray> keys{subject};
    if (QByteArray group = groupOf(m_policies, subject); !group.isEmpty())
        keys.push_back(std::move(group));
    return keys;
}

void LimitResolver::setOverride(const QByteArray &key, std::optional<Override> override)
{
    m_overrides.insert(key, std::move(override));
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
    if (const auto own = m_overrides.constFind(subject); own != m_overrides.cend() && own->has_value()) {
        override = **own;
    } else if (in.policy && in.policy->shards >= 2) {
        const QByteArray group = groupOf(m_policies, subject);
        if (const auto g = m_overrides.constFind(group); !group.isEmpty() && g != m_overrides.cend() && g->has_value()) {
            override = **g;
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

void LimitResolver::readOverrides(Connection &connection, const std::vector<QByteArray> &subjects)
{
    if (m_policies.empty())
        return; // an override changes a policy's limits: without policies it has none to change
    LimitResolver &resolver = *this;
    const MetadataNamespace &ns = m_ns;
    std::vector<QByteArray> keys;
    QSet<QByteArray> asked;
    for (const QByteArray &subject : subjects)
        for (QByteArray &k : resolver.overrideSubjects(subject))
            if (!resolver.overrideKnown(k) && !asked.contains(k)) {
                asked.insert(k);
                keys.push_back(std::move(k));
            }
    if (keys.empty())
        return;
    constexpr size_t kPerMget = 1000;
    std::vector<Command> commands;
    if (connection.isCluster()) {
        // Keys of many slots: one GET each, routed by the pipeline.
        for (const QByteArray &k : keys)
            commands.push_back({"GET", ns.key("override:" + k)});
    } else {
        for (size_t from = 0; from < keys.size(); from += kPerMget) {
            Command mget{"MGET"};
            for (size_t i = from; i < std::min(keys.size(), from + kPerMget); ++i)
                mget.push_back(ns.key("override:" + keys[i]));
            commands.push_back(std::move(mget));
        }
    }
    const std::vector<Reply> replies = connection.pipeline(commands);
    if (connection.isCluster()) {
        for (size_t i = 0; i < keys.size(); ++i)
            resolver.takeOverride(keys[i], replies[i]);
        return;
    }
    for (size_t c = 0; c < replies.size(); ++c) {
        const Reply &r = replies[c];
        r.orThrow(); // NOPERM on the namespace: the caller says so, rather than showing wrong limits
        for (size_t i = 0; i < r.size() && c * kPerMget + i < keys.size(); ++i)
            resolver.takeOverride(keys[c * kPerMget + i], r[i]);
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
