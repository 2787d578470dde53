#include "keys/reset.h"

#include "redis/connection.h"
#include "redis/scan.h"
#include "base/errors.h"
#include "base/glob.h"
#include "keys/inspector.h"
#include "formats/recognition.h"
#include "keys/keyscanner.h"
#include "base/keytext.h"
#include "formats/formatreaders.h"
#include "admin/policy.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

namespace ratescope {

namespace {

void sortUnique(QByteArrayList &keys)
{
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
}

constexpr int kScanCount = 1000;
constexpr qint64 kMaxScanRounds = 100000000; // a bound, not a limit anyone reaches

// visit(page) returns false to stop; returns whether the walk reached the end.
template <typename Visit> bool scanAll(Connection &c, const QByteArray &pattern, Visit visit)
{
    QByteArray cursor = "0";
    qint64 rounds = 0;
    do {
        const ScanStep page = scanStep(c, cursor, pattern, kScanCount);
        cursor = page.cursor;
        const QByteArrayList keys(page.names.begin(), page.names.end());
        if (!visit(keys))
            return false;
    } while (cursor != "0" && ++rounds < kMaxScanRounds);
    return true;
}

QString compactJson(const QJsonObject &o)
{
    return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

QString failureText(const std::exception_ptr &failure)
{
    try {
        std::rethrow_exception(failure);
    } catch (const std::exception &e) {
        return QString::fromUtf8(e.what());
    } catch (...) {
        return QStringLiteral("unexpected failure");
    }
}

} // namespace

bool isLimiterType(const QByteArray &type)
{
    return type == "zset" || type == "string" || type == "hash" || type == "list"; // list: Python limits' moving window
}

bool isMetadataKey(const MetadataNamespace &ns, const QByteArray &key)
{
    return ns.isRecord(key);
}

QByteArrayList Resetter::metadataKeys(const ResetPlan &plan) const
{
    QByteArrayList found;
    for (const QByteArray &k : plan.keys)
        if (isMetadataKey(m_ns, k))
            found << k;
    return found;
}

std::vector<std::pair<QByteArray, QByteArray>> Resetter::nonLimiterTypes(const ResetPlan &plan)
{
    std::vector<std::pair<QByteArray, QByteArray>> found;
    for (qsizetype first = 0; first < plan.keys.size(); first += kBatchSize) {
        std::vector<Command> types;
        const QByteArrayList batch = plan.keys.mid(first, kBatchSize);
        for (const QByteArray &k : batch)
            types.push_back({"TYPE", k});
        const auto replies = m_connection.pipeline(types);
        for (qsizetype i = 0; i < batch.size(); ++i) {
            const Reply &t = replies[size_t(i)].orThrow();
            if (t.bytes() == "none" || (isLimiterType(t.bytes()) && t.bytes() != "list"))
                continue;
            // A list is a limiter only when it is one (Python limits' moving window).
            if (t.bytes() == "list" &&
                classify(batch[i], "list", m_connection.pipeline(sampleCommands(batch[i], "list")), nowUs()).isLimiter())
                continue;
            found.emplace_back(batch[i], t.bytes());
        }
    }
    return found;
}

qint64 Resetter::holdBackNonLimiters(ResetPlan &plan)
{
    KeyRound round;
    round.nowUs = nowUs();
    round.ttl = false;
    round.policies = &policies();
    QSet<QByteArray> limiterKeys; // every key of a recognised limiter, its companions too
    std::vector<std::pair<QByteArray, QByteArray>> others;
    for (qsizetype first = 0; first < plan.keys.size(); first += kBatchSize) {
        const QByteArrayList batch = plan.keys.mid(first, kBatchSize);
        const KeyRoundResult read = readKeyRecords(m_connection, std::vector<QByteArray>(batch.begin(), batch.end()), round);
        for (const KeyRecord &r : read.records) {
            if (r.kind.isLimiter()) {
                limiterKeys.insert(r.key);
                if (r.kind.format == KeyFormat::Library)
                    for (const QByteArray &k : r.kind.reader->keys(r.kind, *round.nowUs))
                        limiterKeys.insert(k);
            } else if (r.type != "none" && !isMetadataKey(m_ns, r.key)) {
                others.emplace_back(r.key, r.type);
            }
        }
    }
    QSet<QByteArray> held;
    for (auto &[key, type] : others) {
        if (limiterKeys.contains(key))
            continue;
        held.insert(key);
        plan.heldBack.emplace_back(std::move(key), std::move(type));
    }
    plan.keys.removeIf([&held](const QByteArray &k) { return held.contains(k); });
    return held.size();
}

void Resetter::includeHeldBack(ResetPlan &plan)
{
    for (const auto &[key, type] : plan.heldBack)
        plan.keys << key;
    plan.heldBack.clear();
    sortUnique(plan.keys);
}

Resetter::Resetter(Connection &connection, MetadataNamespace ns)
    : m_connection(connection)
    , m_ns(std::move(ns))
{
}

QByteArrayList Resetter::counterWindows(const QByteArray &base)
{
    QByteArrayList windows;
    scanAll(m_connection, escapeGlob(base) + ":*", [&](const QByteArrayList &keys) {
        for (const QByteArray &k : keys) {
            QByteArray b;
            qint64 id = 0;
            if (splitCounterWindowKey(k, &b, &id) && b == base)
                windows << k;
        }
        return true;
    });
    return windows;
}

ResetPlan Resetter::planKeys(const QByteArrayList &keys)
{
    ResetPlan plan;
    plan.requested = keys;
    if (keys.isEmpty())
        throw UsageError(QStringLiteral("name at least one key, or give --match"));
    std::vector<Command> exists;
    for (const QByteArray &k : keys) {
        if (k.isEmpty())
            throw UsageError(QStringLiteral("an empty key name cannot be reset"));
        exists.push_back({"EXISTS", k});
    }
    const auto replies = m_connection.pipeline(exists);
    for (qsizetype i = 0; i < keys.size(); ++i) {
        if (replies[size_t(i)].toInteger() > 0) {
            plan.keys << keys[i];
            plan.keys << companionKeys(keys[i]);
        } else {
            // Another library's name (its windows), else the base of counter windows.
            const QByteArrayList windows = libraryWindows(keys[i]);
            plan.keys << (windows.isEmpty() ? counterWindows(keys[i]) : windows);
        }
    }
    sortUnique(plan.keys);
    return plan;
}

const std::vector<Policy> &Resetter::policies()
{
    if (!m_policies) {
        m_policies.emplace();
        if (!m_ns.isEmpty()) {
            try {
                *m_policies = PolicyStore(m_connection, m_ns).list();
            } catch (const ReplyError &) {
                // a user who may not read the policies: the keys are recognised by their shape alone
            }
        }
    }
    return *m_policies;
}

qint64 Resetter::nowUs()
{
    if (!m_nowUs)
        m_nowUs = serverTimeUs(m_connection);
    return *m_nowUs;
}

QByteArrayList Resetter::existing(const QByteArrayList &keys)
{
    QByteArrayList found;
    std::vector<Command> exists;
    for (const QByteArray &k : keys)
        exists.push_back({"EXISTS", k});
    const auto replies = m_connection.pipeline(exists);
    for (qsizetype i = 0; i < keys.size(); ++i)
        if (replies[size_t(i)].toInteger() > 0)
            found << keys[i];
    return found;
}

QByteArrayList Resetter::companionKeys(const QByteArray &key)
{
    // Another library's limiter kept in several keys (Spring Cloud Gateway's .tokens and
    // .timestamp, Python limits' two windows, Laravel's :timer): all of them go together.
    const auto policy = matchPolicy(policies(), key);
    const qint64 now = nowUs();
    const KeyKind kind = classifyKey(m_connection, key, now, policy ? policy->scoreUnit : ScoreUnit::Auto, std::nullopt,
                                      policy ? policy->format : QString());
    if (kind.format != KeyFormat::Library || !kind.reader->limiterNameOf(key, now).isEmpty())
        return {}; // not another library's, or one window of one: that key alone (its name resets them all)
    QByteArrayList others;
    for (const QByteArray &k : kind.reader->keys(kind, now))
        if (k != key)
            others << k;
    return others.isEmpty() ? others : existing(others);
}

QByteArrayList Resetter::libraryWindows(const QByteArray &name)
{
    // The name of a limiter whose keys carry their window (Kong, Envoy, Upstash, rack-attack):
    // every window key of it.
    const auto policy = matchPolicy(policies(), name);
    QByteArrayList windows;
    for (const FormatReader *f : formatReaders()) {
        const QByteArray glob = f->windowKeysGlob(name, policy && policy->format == f->name());
        if (glob.isEmpty())
            continue;
        scanAll(m_connection, glob, [&](const QByteArrayList &keys) {
            for (const QByteArray &k : keys)
                if (f->limiterNameOf(k, nowUs()) == name)
                    windows << k;
            return true;
        });
    }
    return windows;
}

ResetPlan Resetter::planPattern(const QByteArray &pattern, const std::function<bool(qint64, qint64)> &progress)
{
    if (pattern.isEmpty())
        throw UsageError(QStringLiteral("--match: the glob is empty (give '*' to reset every limiter)"));
    requireWellFormedGlob(pattern, QStringLiteral("--match"));
    ResetPlan plan;
    plan.pattern = pattern;
    const bool metadataNamed = m_ns.holds(pattern);
    plan.complete = scanAll(m_connection, pattern, [&](const QByteArrayList &keys) {
        for (const QByteArray &k : keys) {
            if (metadataNamed || !m_ns.holds(k))
                plan.keys << k;
            else
                ++plan.metadataLeftOut;
        }
        // SCAN MATCH filters on the server: each page looked at about COUNT keys, whatever it returned.
        plan.examined += kScanCount;
        // Matches counted before de-duplication: SCAN returns a key twice only rarely.
        return !progress || progress(plan.examined, plan.keys.size());
    });
    sortUnique(plan.keys); // SCAN may return a key twice
    return plan;
}

qint64 Resetter::leaveOutMetadata(ResetPlan &plan) const
{
    if (m_ns.isEmpty())
        return 0;
    const qsizetype before = plan.keys.size();
    plan.keys.removeIf([this](const QByteArray &k) { return m_ns.holds(k); });
    const qint64 removed = before - plan.keys.size();
    plan.metadataLeftOut += removed;
    return removed;
}

qint64 Resetter::execute(const ResetPlan &plan)
{
    qint64 deleted = 0;
    for (qsizetype first = 0; first < plan.keys.size(); first += kBatchSize) {
        Command unlink{"UNLINK"};
        unlink += plan.keys.mid(first, kBatchSize);
        deleted += m_connection.command(unlink).toInteger();
    }
    return deleted;
}

ResetRun Resetter::execute(const ResetPlan &plan, const std::function<bool(const ResetRun &)> &afterBatch)
{
    ResetRun run;
    run.planned = plan.keys.size();
    for (qsizetype first = 0; first < plan.keys.size(); first += kBatchSize) {
        const QByteArrayList batch = plan.keys.mid(first, kBatchSize);
        Command unlink{"UNLINK"};
        unlink += batch;
        try {
            run.deleted += m_connection.command(unlink).toInteger();
        } catch (...) {
            // Never sent again: after a lost connection the batch may have been deleted already.
            run.failure = std::current_exception();
            return run;
        }
        run.processed += batch.size();
        if (afterBatch && !afterBatch(run) && run.processed < run.planned) {
            run.stopped = true;
            return run;
        }
    }
    return run;
}

AuditEntry resetAuditEntry(const ResetPlan &plan, qint64 deleted)
{
    QStringList asked;
    for (const QByteArray &k : plan.requested)
        asked << displayKey(k);
    QJsonArray sample;
    for (qsizetype i = 0; i < std::min<qsizetype>(plan.keys.size(), 100); ++i)
        sample.append(displayKey(plan.keys[i]));
    AuditEntry e;
    e.action = QStringLiteral("reset");
    e.target = plan.pattern.isEmpty() ? asked.join(QLatin1Char(' ')) : QStringLiteral("match:") + displayKey(plan.pattern);
    e.before = compactJson({{QStringLiteral("keys"), sample}, {QStringLiteral("count"), plan.keys.size()}});
    e.after = compactJson({{QStringLiteral("deleted"), deleted}});
    e.count = deleted;
    return e;
}

AuditEntry resetIntentAuditEntry(const ResetPlan &plan)
{
    AuditEntry e = resetAuditEntry(plan, 0);
    e.action = QStringLiteral("reset.intent");
    e.after.clear();
    e.count = plan.keys.size();
    return e;
}

AuditEntry resetAuditEntry(const ResetPlan &plan, const ResetRun &run)
{
    AuditEntry e = resetAuditEntry(plan, run.deleted);
    if (run.finished())
        return e;
    QJsonObject after{{QStringLiteral("deleted"), run.deleted}, {QStringLiteral("processed"), run.processed}};
    if (run.failure)
        after.insert(QStringLiteral("error"), failureText(run.failure));
    else
        after.insert(QStringLiteral("cancelled"), true);
    e.after = compactJson(after);
    return e;
}

} // namespace ratescope
