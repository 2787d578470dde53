#include "admin/policy.h"

#include "formats/keyshapes.h"

#include "redis/connection.h"
#include "redis/scan.h"
#include "base/duration.h"
#include "base/errors.h"
#include "base/glob.h"
#include "base/inputcheck.h"
#include "base/keytext.h"
#include "formats/formatreaders.h"

#include <QJsonDocument>

namespace ratescope {


std::vector<PolicyProblem> Policy::problems() const
{
    std::vector<PolicyProblem> found;
    if (name.trimmed().isEmpty() || name.size() > kMaxPolicyNameLength)
        found.push_back({PolicyField::Name, QStringLiteral("a policy needs a name (1-%1 characters)").arg(kMaxPolicyNameLength)});
    else if (const QString bad = unsafeCharacterProblem(name); !bad.isEmpty())
        found.push_back({PolicyField::Name, QStringLiteral("the policy name %1").arg(bad)});
    if (description.size() > kMaxPolicyDescriptionLength)
        found.push_back({PolicyField::Name, QStringLiteral("the description is too long (%1 characters; at most %2)")
                                                .arg(description.size())
                                                .arg(kMaxPolicyDescriptionLength)});
    else if (const QString bad = unsafeCharacterProblem(description); !bad.isEmpty())
        found.push_back({PolicyField::Name, QStringLiteral("the description %1").arg(bad)});
    if (match.isEmpty())
        found.push_back({PolicyField::Match, QStringLiteral("policy '%1' needs a key pattern (--match)").arg(name)});
    else if (!isUtf8(match)) // stored in JSON text, it would come back with U+FFFD and match other keys
        found.push_back({PolicyField::Match, QStringLiteral("key pattern: not valid UTF-8 (%1); a policy is stored as JSON text, "
                                                            "which cannot hold it: a ? matches any one byte")
                                                 .arg(displayKey(match))});
    else if (const QString glob = globSyntaxProblem(match); !glob.isEmpty())
        found.push_back({PolicyField::Match, QStringLiteral("key pattern: %1").arg(glob)});
    // LimitSpec::validate's own words, each checked alone so that each lands on its field.
    auto check = [&](PolicyField field, const LimitSpec &s) {
        try {
            s.validate();
            return true;
        } catch (const UsageError &e) {
            found.push_back({field, e.message()});
            return false;
        }
    };
    const bool limitOk = check(PolicyField::Limit, {Algorithm::SlidingLog, spec.limit, kMinWindowUs, 1});
    bool windowOk = check(PolicyField::Window, {Algorithm::SlidingLog, 1, spec.windowUs, 1});
    if (windowOk && spec.algorithm == Algorithm::SlidingBuckets) // the bucket count fits the window
        windowOk = check(PolicyField::Window, {spec.algorithm, 1, spec.windowUs, 1, spec.buckets});
    if (limitOk && windowOk)
        check(PolicyField::Cost, spec);
    if (shards != 0 && (shards < 2 || shards > kMaxPolicyShards))
        found.push_back({PolicyField::Limit, QStringLiteral("shards must be between 2 and %1, not %2").arg(kMaxPolicyShards).arg(shards)});
    else if (shards != 0 && limitOk && spec.limit / shards < spec.cost)
        found.push_back({PolicyField::Limit, QStringLiteral("a limit of %1 over %2 shards gives each %3, less than the cost %4")
                                                 .arg(spec.limit)
                                                 .arg(shards)
                                                 .arg(spec.limit / shards)
                                                 .arg(spec.cost)});
    if (!format.isEmpty() && !findFormatReader(format))
        found.push_back({PolicyField::Format, QStringLiteral("unknown format '%1' (`ratescope-cli formats` lists them)").arg(format)});
    return found;
}

void Policy::validate() const
{
    const auto found = problems();
    if (found.empty())
        return;
    const PolicyProblem &first = found.front();
    if (first.field == PolicyField::Name || (first.field == PolicyField::Match && match.isEmpty()))
        throw UsageError(first.message);
    throw UsageError(QStringLiteral("policy '%1': %2").arg(name, first.message));
}

QJsonObject Policy::toJson() const
{
    QJsonObject o{
        {QStringLiteral("name"), name},
        {QStringLiteral("match"), QString::fromUtf8(match)},
        {QStringLiteral("algorithm"), algorithmName(spec.algorithm)},
        {QStringLiteral("limit"), spec.limit},
        {QStringLiteral("window_us"), spec.windowUs},
        {QStringLiteral("cost"), spec.cost},
        {QStringLiteral("score_unit"), scoreUnitName(scoreUnit)},
        {QStringLiteral("description"), description},
        {QStringLiteral("enforced"), enforced},
        {QStringLiteral("version"), version},
        {QStringLiteral("updated_at"), updatedAt.isValid() ? updatedAt.toMSecsSinceEpoch() : 0},
        {QStringLiteral("updated_by"), updatedBy},
    };
    if (spec.algorithm == Algorithm::SlidingBuckets)
        o.insert(QStringLiteral("buckets"), spec.buckets);
    if (shards)
        o.insert(QStringLiteral("shards"), shards); // absent when not sharded: older builds read the record alike
    if (!format.isEmpty())
        o.insert(QStringLiteral("format"), format); // the same: absent for keys read by their shape
    return o;
}

Policy Policy::fromJson(const QJsonObject &o)
{
    try {
        Policy p;
        p.name = o.value(QStringLiteral("name")).toString();
        p.match = o.value(QStringLiteral("match")).toString().toUtf8();
        p.spec.algorithm = parseAlgorithm(o.value(QStringLiteral("algorithm")).toString());
        p.spec.limit = o.value(QStringLiteral("limit")).toInteger();
        p.spec.windowUs = o.value(QStringLiteral("window_us")).toInteger();
        p.spec.cost = o.value(QStringLiteral("cost")).toInteger(1);
        p.spec.buckets = o.value(QStringLiteral("buckets")).toInt(kDefaultBuckets);
        p.scoreUnit = parseScoreUnit(o.value(QStringLiteral("score_unit")).toString(QStringLiteral("auto")));
        p.description = o.value(QStringLiteral("description")).toString();
        p.enforced = o.value(QStringLiteral("enforced")).toBool(true);
        p.shards = o.value(QStringLiteral("shards")).toInt(0);
        p.format = o.value(QStringLiteral("format")).toString();
        p.version = o.value(QStringLiteral("version")).toInteger();
        p.updatedAt = QDateTime::fromMSecsSinceEpoch(o.value(QStringLiteral("updated_at")).toInteger(), Qt::UTC);
        p.updatedBy = o.value(QStringLiteral("updated_by")).toString();
        return p;
    } catch (const UsageError &e) {
        throw UnexpectedReplyError(QStringLiteral("malformed policy record: %1").arg(e.message()));
    }
}

Policy Policy::fromRecord(const QByteArray &field, const QByteArray &value)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(value, &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        throw UnexpectedReplyError(QStringLiteral("malformed policy record: not a JSON object (%1)")
                                       .arg(error.error != QJsonParseError::NoError ? error.errorString()
                                                                                     : QStringLiteral("JSON, but no object")));
    const Policy p = fromJson(doc.object());
    if (p.name.toUtf8() != field)
        throw UnexpectedReplyError(QStringLiteral("malformed policy record: its name '%1' is not the field '%2' it is stored under")
                                       .arg(escapeControls(p.name), displayKey(field)));
    if (const auto found = p.problems(); !found.empty())
        throw UnexpectedReplyError(QStringLiteral("malformed policy record: %1").arg(found.front().message));
    return p;
}

std::optional<Policy> matchPolicy(const std::vector<Policy> &policies, const QByteArray &key)
{
    const Policy *best = findPolicy(policies, key);
    return best ? std::optional<Policy>(*best) : std::nullopt;
}

const Policy *findPolicy(const std::vector<Policy> &policies, const QByteArray &key)
{
    const Policy *best = nullptr;
    auto rank = [](const Policy &p) { return std::pair(isLiteralPattern(p.match) ? 1 : 0, globSpecificity(p.match)); };
    for (const Policy &p : policies) {
        if (!globMatch(p.match, key))
            continue;
        if (!best || rank(p) > rank(*best) || (rank(p) == rank(*best) && p.name < best->name))
            best = &p;
    }
    return best;
}

PolicyStore::PolicyStore(Connection &connection, MetadataNamespace ns)
    : m_connection(connection)
    , m_ns(std::move(ns))
{
}

std::vector<Policy> PolicyStore::list(QStringList *skipped)
{
    const Reply r = m_connection.command({"HGETALL", hashKey()});
    std::vector<Policy> policies;
    for (size_t i = 0; i + 1 < r.size(); i += 2) {
        try {
            policies.push_back(Policy::fromRecord(r[i].bytes(), r[i + 1].bytes()));
        } catch (const UnexpectedReplyError &e) {
            if (skipped)
                *skipped << QStringLiteral("policy record '%1' skipped: %2").arg(displayKey(r[i].bytes()), e.message());
        }
    }
    std::sort(policies.begin(), policies.end(), [](const Policy &a, const Policy &b) { return a.name < b.name; });
    return policies;
}

std::optional<Policy> PolicyStore::get(const QString &name)
{
    const Reply r = m_connection.command({"HGET", hashKey(), name.toUtf8()});
    if (r.isNil())
        return std::nullopt;
    return Policy::fromRecord(name.toUtf8(), r.bytes());
}

qint64 PolicyStore::storedVersion(const QString &name)
{
    const Reply r = m_connection.command({"HGET", hashKey(), name.toUtf8()});
    return r.isNil() ? 0 : QJsonDocument::fromJson(r.bytes()).object().value(QStringLiteral("version")).toInteger(0);
}

// One key, one script: the version check and the write cannot be interleaved with another
// editor's, and the script stays cluster-safe (PUBLISH names no key).
static const QByteArray kCompareAndSet = R"lua(
local current = redis.call('HGET', KEYS[1], ARGV[1])
local version = 0
if current then
  local ok, decoded = pcall(cjson.decode, current)
  if ok and type(decoded) == 'table' and tonumber(decoded.version) then version = tonumber(decoded.version) end
end
if version ~= tonumber(ARGV[2]) then return {0, current or ''} end
if ARGV[3] == '' then redis.call('HDEL', KEYS[1], ARGV[1]) else redis.call('HSET', KEYS[1], ARGV[1], ARGV[3]) end
redis.call('PUBLISH', ARGV[4], ARGV[5])
return {1, current or ''}
)lua";

QJsonObject PolicyStore::compareAndSet(const QString &name, qint64 basedOnVersion, const QByteArray &newJson, const QByteArray &event)
{
    const Reply r = m_connection.command(
        {"EVAL", kCompareAndSet, "1", hashKey(), name.toUtf8(), QByteArray::number(basedOnVersion), newJson, eventsChannel(), event});
    const QJsonObject current = QJsonDocument::fromJson(r[1].bytes()).object();
    if (r[0].integer() == 1)
        return current;
    if (current.isEmpty())
        // Never existed, or deleted since: the store cannot tell which, so it says neither.
        throw ConflictError(QStringLiteral("policy '%1' does not exist (your edit was based on version %2; --based-on 0 creates it)")
                                .arg(name)
                                .arg(basedOnVersion));
    const Policy theirs = Policy::fromJson(current);
    if (basedOnVersion == 0)
        throw ConflictError(QStringLiteral("policy '%1' already exists (version %2, by %3 at %4)")
                                .arg(name)
                                .arg(theirs.version)
                                .arg(theirs.updatedBy, theirs.updatedAt.toString(Qt::ISODate)));
    throw ConflictError(
        QStringLiteral("policy '%1' was changed by %2 at %3 (now version %4; your edit was based on version %5): reload and try again")
            .arg(name, theirs.updatedBy, theirs.updatedAt.toString(Qt::ISODate))
            .arg(theirs.version)
            .arg(basedOnVersion));
}

Policy PolicyStore::set(Policy policy, qint64 basedOnVersion, const QString &actor)
{
    policy.validate();
    // Ratescope's own records are no limiters: a policy covering them would have services
    // enforce limits on, and the console read, the policies hash itself.
    if (!m_ns.isEmpty() && globReachesPrefix(policy.match, m_ns.bytes()))
        throw UsageError(QStringLiteral("policy '%1': the pattern '%2' covers keys under '%3', where Ratescope keeps its own "
                                        "records (policies, overrides, audit); make it narrower")
                             .arg(policy.name, QString::fromUtf8(policy.match), m_ns.text()));
    policy.version = basedOnVersion + 1;
    policy.updatedAt = QDateTime::currentDateTimeUtc();
    policy.updatedBy = actor;
    const QByteArray event = QJsonDocument(QJsonObject{{QStringLiteral("type"), QStringLiteral("policy.set")},
                                                       {QStringLiteral("name"), policy.name},
                                                       {QStringLiteral("version"), policy.version}})
                                 .toJson(QJsonDocument::Compact);
    compareAndSet(policy.name, basedOnVersion, QJsonDocument(policy.toJson()).toJson(QJsonDocument::Compact), event);
    return policy;
}

Policy PolicyStore::remove(const QString &name, qint64 basedOnVersion, const QString &actor)
{
    if (basedOnVersion < 1)
        throw UsageError(QStringLiteral("deleting policy '%1' needs the version it is based on").arg(name));
    const QByteArray event = QJsonDocument(QJsonObject{{QStringLiteral("type"), QStringLiteral("policy.delete")},
                                                       {QStringLiteral("name"), name},
                                                       {QStringLiteral("by"), actor}})
                                 .toJson(QJsonDocument::Compact);
    return Policy::fromJson(compareAndSet(name, basedOnVersion, QByteArray(), event));
}

QJsonObject Override::toJson() const
{
    QJsonObject o{
        {QStringLiteral("limit"), limit},
        {QStringLiteral("window_us"), windowUs},
        {QStringLiteral("set_at"), setAt.toMSecsSinceEpoch()},
        {QStringLiteral("set_by"), setBy},
        {QStringLiteral("expires_at"), expiresAt.toMSecsSinceEpoch()},
    };
    insertBytes(o, QStringLiteral("key"), key); // key_base64 too when it is not text
    return o;
}

Override Override::fromJson(const QJsonObject &o)
{
    Override v;
    const QJsonValue base64 = o.value(QStringLiteral("key_base64"));
    v.key = base64.isString() ? QByteArray::fromBase64(base64.toString().toLatin1()) : o.value(QStringLiteral("key")).toString().toUtf8();
    v.limit = o.value(QStringLiteral("limit")).toInteger();
    v.windowUs = o.value(QStringLiteral("window_us")).toInteger();
    v.setAt = QDateTime::fromMSecsSinceEpoch(o.value(QStringLiteral("set_at")).toInteger(), Qt::UTC);
    v.setBy = o.value(QStringLiteral("set_by")).toString();
    v.expiresAt = QDateTime::fromMSecsSinceEpoch(o.value(QStringLiteral("expires_at")).toInteger(), Qt::UTC);
    return v;
}

OverrideStore::OverrideStore(Connection &connection, MetadataNamespace ns)
    : m_connection(connection)
    , m_ns(std::move(ns))
{
}

namespace {

// A stored override record (GET's reply); nullopt for none.
std::optional<Override> overrideOf(const Reply &r)
{
    if (r.isNil() || r.isError())
        return std::nullopt;
    return Override::fromJson(QJsonDocument::fromJson(r.bytes()).object());
}

} // namespace

std::optional<Override> OverrideStore::get(const QByteArray &key)
{
    return overrideOf(m_connection.command({"GET", storageKey(key)})); // an error reply is thrown
}

std::vector<std::optional<Override>> OverrideStore::getMany(const std::vector<QByteArray> &keys)
{
    std::vector<Command> gets;
    for (const QByteArray &k : keys)
        gets.push_back({"GET", storageKey(k)});
    std::vector<std::optional<Override>> found;
    for (const Reply &r : m_connection.pipeline(gets))
        found.push_back(overrideOf(r));
    return found;
}

std::optional<Override> OverrideStore::forKey(const QByteArray &key, const std::vector<Policy> &policies)
{
    if (auto own = get(key))
        return own;
    const QByteArray group = groupOf(policies, key);
    return group.isEmpty() ? std::nullopt : get(group);
}

std::optional<Override> OverrideStore::set(const Override &o, qint64 forUs, const QString &actor)
{
    if (o.key.isEmpty())
        throw UsageError(QStringLiteral("an override needs a key"));
    if (o.limit < 1 || o.limit > kMaxLimit)
        throw UsageError(QStringLiteral("override limit must be between 1 and %1, not %2").arg(kMaxLimit).arg(o.limit));
    if (o.windowUs != 0 && (o.windowUs < kMinWindowUs || o.windowUs > kMaxWindowUs))
        throw UsageError(QStringLiteral("override window must be between 1ms and 366d"));
    if (forUs < 1000 || forUs > kMaxWindowUs)
        throw UsageError(QStringLiteral("an override must last between 1ms and 366d (--for), not %1").arg(formatDurationUs(forUs)));
    Override stored = o;
    stored.setAt = QDateTime::currentDateTimeUtc();
    stored.setBy = actor;
    const qint64 ms = (forUs + 999) / 1000;
    stored.expiresAt = stored.setAt.addMSecs(ms);
    // SET ... GET returns the previous value in the same atomic step.
    const Reply previous = m_connection.command(
        {"SET", storageKey(o.key), QJsonDocument(stored.toJson()).toJson(QJsonDocument::Compact), "PX", QByteArray::number(ms), "GET"});
    publish("override.set", o.key, actor);
    if (previous.isNil())
        return std::nullopt;
    return Override::fromJson(QJsonDocument::fromJson(previous.bytes()).object());
}

std::optional<Override> OverrideStore::clear(const QByteArray &key, const QString &actor)
{
    const Reply previous = m_connection.command({"GETDEL", storageKey(key)});
    if (previous.isNil())
        return std::nullopt;
    publish("override.clear", key, actor);
    return Override::fromJson(QJsonDocument::fromJson(previous.bytes()).object());
}

std::vector<Override> OverrideStore::list()
{
    std::vector<Override> result;
    const QByteArray pattern = escapeGlob(m_ns.key("override:")) + "*";
    QByteArray cursor = "0";
    int rounds = 0;
    do {
        const ScanStep page = scanStep(m_connection, cursor, pattern, 1000);
        cursor = page.cursor;
        std::vector<Command> gets;
        for (const QByteArray &k : page.names)
            gets.push_back({"GET", k});
        for (const Reply &v : m_connection.pipeline(gets))
            if (!v.isNil() && !v.isError())
                result.push_back(Override::fromJson(QJsonDocument::fromJson(v.bytes()).object()));
    } while (cursor != "0" && ++rounds < 1000000);
    std::sort(result.begin(), result.end(), [](const Override &a, const Override &b) { return a.key < b.key; });
    return result;
}

void OverrideStore::publish(const char *type, const QByteArray &key, const QString &actor)
{
    m_connection.command({"PUBLISH", m_ns.key("events"),
                          QJsonDocument(QJsonObject{{QStringLiteral("type"), QLatin1String(type)},
                                                    {QStringLiteral("key"), displayKey(key)},
                                                    {QStringLiteral("by"), actor}})
                              .toJson(QJsonDocument::Compact)});
}


LimitSpec limitsOf(const Policy &policy, const std::optional<Override> &override, const QByteArray &key)
{
    LimitSpec spec = policy.spec;
    // A shard of a sharded limiter gets its share of the group's limit (shard n of N: n mod N,
    // which is n for shards numbered from 0 and n - 1 .. wrapping N to 0 from 1).
    QByteArray base;
    int n = 0;
    const bool shard = policy.shards >= 2 && splitShardKey(key, &base, &n) && n <= policy.shards;
    if (shard) {
        spec.limit = std::max<qint64>(1, shardShare(spec.limit, policy.shards, n % policy.shards));
        spec.cost = std::min(spec.cost, spec.limit);
    }
    if (override) {
        // The group's override is the group's limit: this shard gets its share of it.
        const bool groupWide = shard && override->key == base && override->key != key;
        spec.limit = groupWide ? std::max<qint64>(1, shardShare(override->limit, policy.shards, n % policy.shards)) : override->limit;
        if (override->windowUs)
            spec.windowUs = override->windowUs;
        spec.cost = std::min(spec.cost, spec.limit);
    }
    return spec;
}

EffectiveLimits effectiveLimits(const std::vector<Policy> &policies, const std::optional<Override> &override, const QByteArray &key)
{
    EffectiveLimits e;
    e.policy = matchPolicy(policies, key);
    e.override = override;
    if (e.policy)
        e.spec = limitsOf(*e.policy, override, key);
    return e;
}

QByteArray groupOf(const std::vector<Policy> &policies, const QByteArray &key)
{
    QByteArray base;
    int n = 0;
    const Policy *p = findPolicy(policies, key);
    if (p && p->shards >= 2 && splitShardKey(key, &base, &n) && n <= p->shards)
        return base;
    return {};
}

namespace {

QString compactJson(const QJsonObject &o)
{
    return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

AuditEntry auditEntry(const QString &action, const QString &target, const QString &before, const QString &after, qint64 count)
{
    AuditEntry e;
    e.action = action;
    e.target = target;
    e.before = before;
    e.after = after;
    e.count = count;
    return e;
}

} // namespace

QString notOursToWrite(const QString &shownKey, const QByteArray &key, const MetadataNamespace &ns, const Policy *policy,
                       const KeyKind &kind)
{
    if (ns.isRecord(key))
        return QStringLiteral("'%1' is one of Ratescope's own records under '%2' (policies, overrides, audit): no limiter is written "
                              "there")
            .arg(shownKey, ns.text());
    if (policy && !policy->format.isEmpty())
        return QStringLiteral("'%1' is covered by policy '%2', which declares its keys %3 limiters: that library decides on them, and "
                              "Ratescope's scripts never write to them (peek and inspect read them)")
            .arg(shownKey, policy->name, policy->format);
    return notOursToDecide(shownKey, kind);
}

AuditEntry policySetAuditEntry(const std::optional<Policy> &before, const Policy &stored)
{
    return auditEntry(QStringLiteral("policy.set"), stored.name, before ? compactJson(before->toJson()) : QString(),
                      compactJson(stored.toJson()), 1);
}

AuditEntry policyDeleteAuditEntry(const Policy &removed)
{
    return auditEntry(QStringLiteral("policy.delete"), removed.name, compactJson(removed.toJson()), QString(), 1);
}

AuditEntry overrideSetAuditEntry(const QByteArray &key, const std::optional<Override> &previous, const std::optional<Override> &stored)
{
    return auditEntry(QStringLiteral("override.set"), displayKey(key), previous ? compactJson(previous->toJson()) : QString(),
                      stored ? compactJson(stored->toJson()) : QString(), 1);
}

AuditEntry overrideClearAuditEntry(const QByteArray &key, const std::optional<Override> &removed)
{
    return auditEntry(QStringLiteral("override.clear"), displayKey(key), removed ? compactJson(removed->toJson()) : QString(), QString(),
                      removed ? 1 : 0);
}

} // namespace ratescope
