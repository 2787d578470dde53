#include "policyqueries.h"

#include "admin/audit.h"
#include "base/errors.h"
#include "formats/recognition.h"
#include "formats/usage.h"
#include "keys/keyscanner.h"
#include "redis/connection.h"
#include "redis/scan.h"

#include <set>

namespace ratescope::ui {

std::pair<std::vector<Policy>, std::vector<Override>> readPoliciesAndOverrides(Connection &c, const MetadataNamespace &ns)
{
    return {PolicyStore(c, ns).list(), OverrideStore(c, ns).list()};
}

PolicyPreview previewPolicyStep(Connection &c, const MetadataNamespace &ns, PolicyPreview soFar, qint64 budget, int pagesPerStep,
                                int listed, const std::atomic<bool> &cancel)
{
    PolicyPreview &r = soFar;
    const qint64 count = std::min<qint64>(1000, budget);
    if (r.pages == 0)
        r.total = c.command({"DBSIZE"}).integer();
    for (int step = 0; step < pagesPerStep; ++step) {
        const ScanStep page = scanStep(c, r.cursor, r.glob, count);
        r.cursor = page.cursor;
        ++r.pages;
        for (const QByteArray &k : page.names) {
            // Ratescope's own policies, overrides and audit are not limiters a policy governs.
            if (ns.holds(k)) {
                ++r.excluded;
                continue;
            }
            ++r.matched;
            if (r.keys.size() < size_t(listed))
                r.keys.push_back(k);
        }
        r.complete = r.cursor == "0";
        r.scanned = r.complete ? r.total : std::min(r.total, r.pages * count);
        r.stopped = !r.complete && r.pages * count >= budget;
        if (r.complete || r.stopped || cancel.load())
            break;
    }
    return r;
}

PolicyEffect readPolicyEffect(Connection &c, const MetadataNamespace &ns, const std::vector<QByteArray> &keys,
                              const std::vector<Policy> &policies, const QString &name, const LimitSpec &proposed,
                              std::optional<qint64> frozenNowUs)
{
    PolicyEffect r;
    const qint64 nowUs = frozenNowUs ? *frozenNowUs : serverTimeUs(c);
    std::vector<Command> types;
    for (const QByteArray &k : keys)
        types.push_back({"TYPE", k});
    const auto typeReplies = c.pipeline(types);
    std::vector<Command> samples;
    std::vector<std::pair<size_t, size_t>> ranges;
    for (size_t i = 0; i < keys.size(); ++i) {
        const auto commands = sampleCommands(keys[i], typeReplies[i].bytes());
        ranges.emplace_back(samples.size(), commands.size());
        samples.insert(samples.end(), commands.begin(), commands.end());
    }
    const auto sampleReplies = c.pipeline(samples);
    std::vector<UsageTarget> targets;
    std::set<QByteArray> seen; // a counter's windows are one limiter: its base
    for (size_t i = 0; i < keys.size(); ++i) {
        const auto [first, n] = ranges[i];
        const std::vector<Reply> mine(sampleReplies.begin() + qsizetype(first), sampleReplies.begin() + qsizetype(first + n));
        const auto winner = matchPolicy(policies, keys[i]);
        const KeyKind kind = classify(keys[i], typeReplies[i].bytes(), mine, nowUs, winner ? winner->scoreUnit : ScoreUnit::Auto,
                                       winner ? winner->format : QString());
        if (!kind.isLimiter()) {
            ++r.notLimiters;
            continue;
        }
        const QByteArray subject = kind.subject(keys[i]); // a counter's windows, a library's two keys: one limiter
        if (!seen.insert(subject).second)
            continue;
        const auto governing = matchPolicy(policies, subject);
        if (!governing || governing->name != name) {
            ++r.otherPolicy;
            continue;
        }
        if (!kind.readable()) {
            ++r.notLimiters; // recognised, never decoded: nothing to tell
            continue;
        }
        targets.push_back({subject, kind, limitsFor(kind, proposed).value_or(proposed)});
    }
    // A key with an override keeps it whatever the policy says.
    std::vector<Command> gets;
    for (const UsageTarget &t : targets)
        gets.push_back({"EXISTS", OverrideStore(c, ns).storageKey(t.key)});
    const auto exists = c.pipeline(gets);
    std::vector<UsageTarget> governed;
    for (size_t i = 0; i < targets.size(); ++i) {
        if (exists[i].isInteger() && exists[i].integer() > 0)
            ++r.overridden;
        else
            governed.push_back(targets[i]);
    }
    for (const auto &u : readUsage(c, governed, nowUs)) {
        if (!u) {
            ++r.unreadable;
            continue;
        }
        ++r.read;
        if (!u->decision.allowed)
            ++r.atLimit;
    }
    return r;
}

namespace {

// A policy changed only when its audit entry can be written (checked first), recorded as op;
// or the conflict that stopped it, with the policy named `name` as it is now. change makes the
// change and returns the policy it concerns and its audit entry.
template <typename Change>
PolicyChange auditedPolicyChange(Connection &c, const MetadataNamespace &ns, const QString &name, const QString &op, Change change)
{
    PolicyChange r;
    AuditLog log(c, ns);
    log.ensureWritable(); // no change without its record
    PolicyStore store(c, ns);
    try {
        const auto [policy, entry] = change(store);
        log.append(entry, op);
        r.stored = policy;
    } catch (const ConflictError &e) {
        r.conflict = e.message();
        r.theirs = store.get(name);
    }
    return r;
}

} // namespace

PolicyChange storePolicy(Connection &c, const MetadataNamespace &ns, const Policy &p, qint64 basedOn, const QString &actor,
                         const QString &op)
{
    return auditedPolicyChange(c, ns, p.name, op, [&](PolicyStore &store) {
        const auto current = store.get(p.name);
        const Policy stored = store.set(p, basedOn, actor);
        return std::pair(stored, policySetAuditEntry(current, stored));
    });
}

PolicyChange removePolicy(Connection &c, const MetadataNamespace &ns, const QString &name, qint64 basedOn, const QString &actor,
                          const QString &op)
{
    return auditedPolicyChange(c, ns, name, op, [&](PolicyStore &store) {
        const Policy removed = store.remove(name, basedOn, actor);
        return std::pair(removed, policyDeleteAuditEntry(removed));
    });
}

std::optional<Override> storeOverride(Connection &c, const MetadataNamespace &ns, const Override &o, qint64 forUs,
                                      const QString &actor, const QString &op)
{
    AuditLog(c, ns).ensureWritable(); // no change without its record
    OverrideStore store(c, ns);
    const auto previous = store.set(o, forUs, actor);
    const auto stored = store.get(o.key);
    AuditLog(c, ns).append(overrideSetAuditEntry(o.key, previous, stored), op);
    return stored;
}

bool removeOverride(Connection &c, const MetadataNamespace &ns, const QByteArray &key, const QString &actor, const QString &op)
{
    AuditLog(c, ns).ensureWritable(); // no change without its record
    const auto removed = OverrideStore(c, ns).clear(key, actor);
    if (removed) // clearing nothing changed nothing: no entry
        AuditLog(c, ns).append(overrideClearAuditEntry(key, removed), op);
    return removed.has_value();
}

} // namespace ratescope::ui
