// `ratescope-cli reset`, `policy`, `override` and `audit`: the mutations, each refused in
// read-only mode before anything is sent, and each leaving exactly one audit entry.
#include "cli.h"
#include "limitoptions.h"
#include "lookupcommand.h"

#include "formats/formatreaders.h"

#include "admin/audit.h"
#include "base/duration.h"
#include "base/errors.h"
#include "base/glob.h"
#include "base/keytext.h"
#include "admin/policy.h"
#include "keys/reset.h"

#include <array>
#include <cstdio>
#include <QJsonArray>
#include <QJsonDocument>
#include <unistd.h>

namespace ratescope::cli {

namespace {

QString actor(const Cli &cli)
{
    return cli.operatorName().isEmpty() ? AuditLog::osUser() : cli.operatorName();
}

// Before a change: its audit entry must be writable, else nothing is changed.
void ensureAuditable(Cli &cli)
{
    cli.auditLog().ensureWritable();
}

// After a change: the entry. If it cannot be written after all (the connection died in
// between), say that the change itself was made.
void recordChange(Cli &cli, const AuditEntry &entry)
{
    try {
        cli.auditLog().append(entry, cli.operatorName());
    } catch (const Error &) {
        cli.err() << "ratescope-cli: " << entry.action << " was done, but its audit entry could not be written:\n";
        cli.err().flush();
        throw;
    }
}

// ---- reset ---------------------------------------------------------------------------

bool confirmOnTerminal(Cli &cli, qsizetype count)
{
    cli.err() << "Type " << count << " to delete " << count << " keys (anything else cancels): ";
    cli.err().flush();
    char line[64] = {};
    if (!std::fgets(line, sizeof line, stdin))
        return false;
    return QByteArray(line).trimmed() == QByteArray::number(count);
}

int runReset(Cli &cli)
{
    const bool dryRun = cli.args().isSet(QStringLiteral("dry-run"));
    const bool byPattern = cli.args().isSet(QStringLiteral("match"));
    const bool byLookup = cli.args().isSet(QStringLiteral("lookup"));
    const QStringList keys = cli.positional();
    if (int(byPattern) + int(byLookup) + int(!keys.isEmpty()) != 1)
        throw UsageError(QStringLiteral("give one of KEY..., --match GLOB or --lookup ID"));
    if (byPattern) { // the glob first: a bad one is the problem whatever else is missing
        const QByteArray glob = cli.bytes(cli.args().value(QStringLiteral("match")));
        if (glob.isEmpty()) // as keys refuses it
            throw UsageError(QStringLiteral("--match: the glob is empty (give '*' to reset every limiter)"));
        requireWellFormedGlob(glob, QStringLiteral("--match"));
    }
    if (!dryRun)
        cli.requireWritable(QStringLiteral("reset"));
    const bool interactive = ::isatty(STDIN_FILENO) && !cli.json();
    if (!dryRun && !cli.args().isSet(QStringLiteral("yes")) && !interactive)
        throw UsageError(
            QStringLiteral("reset deletes keys: add --yes (not on a terminal, so there is nobody to ask), or --dry-run to preview"));

    if (!dryRun)
        ensureAuditable(cli);
    Resetter resetter(cli.connection(), cli.ns());
    QByteArrayList exact;
    for (const QString &k : keys)
        exact << cli.keyBytes(k);
    QByteArray lookupId;
    if (byLookup) {
        // Exactly the limiters `lookup ID` lists: their keys (a counter's or another library's
        // base takes its keys, a shard group its shards), never another key holding the ID.
        LookupOptions options;
        options.id = lookupId = cli.bytes(cli.args().value(QStringLiteral("lookup")));
        const LookupResult found = lookUp(cli, options);
        if (!found.complete) {
            cli.err() << "interrupted: the lookup is partial, so nothing was deleted\n";
            return kExitInterrupted;
        }
        for (const LookupRow &row : found.rows)
            exact << row.keys;
        if (exact.isEmpty()) {
            if (cli.json())
                cli.printJson({{QStringLiteral("matched"), 0}, {QStringLiteral("deleted"), 0}, {QStringLiteral("dry_run"), dryRun}});
            else
                cli.out() << "no limiter holds " << displayKey(lookupId) << ": nothing to delete\n";
            return ExitOk;
        }
    }
    ResetPlan plan = byPattern ? resetter.planPattern(cli.bytes(cli.args().value(QStringLiteral("match")))) : resetter.planKeys(exact);
    // A pattern deletes limiters only: keys that are no limiter (an application's strings,
    // hashes, sets, ...) are held back and listed apart, deleted only when asked for.
    const bool includeOthers = cli.args().isSet(QStringLiteral("include-non-limiters"));
    if (byPattern && !includeOthers)
        resetter.holdBackNonLimiters(plan);

    // Ratescope's own records and keys no limiter could be are deleted only when asked for by
    // name (the refusal says which and how); a dry run refuses alike, so it previews truly.
    auto named = [](const QByteArrayList &keys) {
        QStringList shown;
        for (qsizetype i = 0; i < std::min<qsizetype>(keys.size(), 10); ++i)
            shown << displayKey(keys[i]);
        return shown.join(QStringLiteral(", ")) + (keys.size() > 10 ? QStringLiteral(" and %1 more").arg(keys.size() - 10) : QString());
    };
    if (const QByteArrayList meta = resetter.metadataKeys(plan); !meta.isEmpty() && !cli.args().isSet(QStringLiteral("include-metadata")))
        throw UsageError(
            QStringLiteral("refusing to delete Ratescope's own records under '%1': %2 (add --include-metadata to delete them too)")
                .arg(cli.ns().text(), named(meta)));
    // Named keys: those of a type no limiter uses need --force (a pattern has held them back).
    std::vector<std::pair<QByteArray, QByteArray>> foreign;
    if (!byPattern && !cli.args().isSet(QStringLiteral("force")))
        foreign = resetter.nonLimiterTypes(plan);
    if (!foreign.empty()) {
        QByteArrayList keys;
        QStringList types;
        for (const auto &[k, t] : foreign) {
            keys << k;
            if (!types.contains(QString::fromUtf8(t)))
                types << QString::fromUtf8(t);
        }
        throw UsageError(QStringLiteral("refusing to delete keys of a type no limiter uses (%1): %2 (limiters are zset, string or hash; "
                                        "add --force to delete them anyway)")
                             .arg(types.join(QStringLiteral(", ")), named(keys)));
    }

    // JSON: "keys" as text (escaped when not UTF-8); then "keys_base64", all of them exactly.
    QJsonArray listed, listedBase64;
    bool allPlain = true;
    for (const QByteArray &k : plan.keys) {
        allPlain = allPlain && isPlainKey(k);
        listed.append(isUtf8(k) ? QString::fromUtf8(k) : displayKey(k));
        listedBase64.append(QString::fromLatin1(k.toBase64()));
    }
    QJsonArray heldBack;
    for (const auto &[k, type] : plan.heldBack)
        heldBack.append(QJsonObject{{QStringLiteral("key"), isUtf8(k) ? QString::fromUtf8(k) : displayKey(k)},
                                    {QStringLiteral("key_base64"), QString::fromLatin1(k.toBase64())},
                                    {QStringLiteral("type"), QString::fromUtf8(type)}});
    const auto withKeys = [&](QJsonObject o) {
        o.insert(QStringLiteral("keys"), listed);
        if (!allPlain)
            o.insert(QStringLiteral("keys_base64"), listedBase64);
        if (byPattern)
            o.insert(QStringLiteral("held_back"), heldBack);
        return o;
    };
    if (!cli.json()) {
        const qsizetype shown = std::min<qsizetype>(plan.keys.size(), 50);
        for (qsizetype i = 0; i < shown; ++i)
            cli.out() << "  " << displayKey(plan.keys[i]) << '\n'; // escaped: a key cannot forge a line
        if (plan.keys.size() > shown)
            cli.out() << "  ... and " << plan.keys.size() - shown << " more\n";
        cli.out() << plan.keys.size() << (plan.keys.size() == 1 ? " key" : " keys")
                  << (dryRun ? " would be deleted (dry run)\n" : " to delete\n");
        if (!plan.heldBack.empty()) {
            const bool one = plan.heldBack.size() == 1;
            cli.out() << plan.heldBack.size() << (one ? " key matches but is no limiter" : " keys match but are no limiters")
                      << ", held back (--include-non-limiters deletes " << (one ? "it" : "them") << " too):\n";
            const size_t shownHeld = std::min<size_t>(plan.heldBack.size(), 50);
            for (size_t i = 0; i < shownHeld; ++i)
                cli.out() << "  " << displayKey(plan.heldBack[i].first) << " (" << QString::fromUtf8(plan.heldBack[i].second) << ")\n";
            if (plan.heldBack.size() > shownHeld)
                cli.out() << "  ... and " << plan.heldBack.size() - shownHeld << " more\n";
        }
        cli.out().flush();
    }
    if (dryRun || plan.keys.isEmpty()) {
        if (cli.json())
            cli.printJson(withKeys(
                {{QStringLiteral("matched"), plan.keys.size()}, {QStringLiteral("deleted"), 0}, {QStringLiteral("dry_run"), dryRun}}));
        return ExitOk;
    }
    if (!cli.args().isSet(QStringLiteral("yes")) && !confirmOnTerminal(cli, plan.keys.size())) {
        cli.err() << "cancelled: nothing deleted\n";
        return ExitUsage;
    }
    // The intent first: a reset cut short (server killed, connection lost) still leaves a trace.
    AuditLog log = cli.auditLog();
    // A lookup's reset is recorded under the customer it was for.
    const auto underTarget = [&](AuditEntry e) {
        if (byLookup)
            e.target = QStringLiteral("lookup:") + displayKey(lookupId);
        return e;
    };
    log.append(underTarget(resetIntentAuditEntry(plan)), cli.operatorName());
    const ResetRun run = resetter.execute(plan, {}); // never throws: a failure ends the run
    const qint64 deleted = run.deleted;
    QString auditProblem;
    try {
        // The console's reset writes the very same entry (core builds it).
        log.append(underTarget(resetAuditEntry(plan, run)), cli.operatorName());
    } catch (const Error &e) {
        auditProblem = e.message();
    }
    if (cli.json()) {
        QJsonObject o = withKeys(
            {{QStringLiteral("matched"), plan.keys.size()}, {QStringLiteral("deleted"), deleted}, {QStringLiteral("dry_run"), false}});
        if (!run.finished()) {
            o.insert(QStringLiteral("complete"), false);
            o.insert(QStringLiteral("processed"), run.processed);
        }
        cli.printJson(o);
    } else {
        cli.out() << "deleted " << deleted << (deleted == 1 ? " key" : " keys") << (run.finished() ? "\n" : " (confirmed)\n");
        cli.out().flush();
    }
    if (!auditProblem.isEmpty()) {
        cli.err() << "ratescope-cli: the reset's outcome could not be recorded (its intent was): " << auditProblem << '\n';
        cli.err().flush();
    }
    if (run.failure) {
        cli.err() << "ratescope-cli: reset stopped after " << run.processed << " of " << run.planned << " keys: " << deleted
                  << " deletions confirmed; the batch under way (up to " << Resetter::kBatchSize
                  << " keys) may or may not have been deleted\n";
        cli.err().flush();
        std::rethrow_exception(run.failure);
    }
    return ExitOk;
}

// ---- policy ----------------------------------------------------------------------------

void printPolicy(Cli &cli, const Policy &p)
{
    if (cli.json()) {
        cli.printJson(p.toJson());
        return;
    }
    cli.printFields({
        {QStringLiteral("name"), p.name},
        {QStringLiteral("match"), displayKey(p.match)},
        {QStringLiteral("algorithm"), algorithmLabel(p.spec)},
        {QStringLiteral("limit"), QStringLiteral("%1 per %2").arg(p.spec.limit).arg(formatDurationUs(p.spec.windowUs))},
        {QStringLiteral("cost"), QString::number(p.spec.cost)},
        {QStringLiteral("shards"), p.shards ? QStringLiteral("%1 (each shard limit / %1)").arg(p.shards) : QStringLiteral("no")},
        {QStringLiteral("score_unit"), scoreUnitName(p.scoreUnit)},
        {QStringLiteral("format"), p.format.isEmpty() ? QStringLiteral("by key shape") : p.format},
        {QStringLiteral("enforced"),
         p.enforced ? QStringLiteral("yes (services use the library)") : QStringLiteral("no (declared for inspection)")},
        {QStringLiteral("description"), p.description},
        {QStringLiteral("version"), QString::number(p.version)},
        {QStringLiteral("updated"), QStringLiteral("%1 by %2").arg(p.updatedAt.toString(Qt::ISODate), p.updatedBy)},
    });
}

QString policyName(const QStringList &rest)
{
    if (rest.size() != 1 || rest[0].trimmed().isEmpty())
        throw UsageError(QStringLiteral("expected exactly one policy NAME"));
    return rest[0];
}

int runPolicy(Cli &cli)
{
    QStringList p = cli.positional();
    if (p.isEmpty())
        throw UsageError(QStringLiteral("policy needs an action: list, get NAME, set NAME ..., delete NAME"));
    const QString action = p.takeFirst();
    if (action == QLatin1String("list")) {
        const auto policies = cli.policies();
        // Columns as wide as their widest cell as shown (escaped, wide characters two columns),
        // at least 24, 32 and 16: a long or wide name never pushes the rest of its row along.
        std::vector<std::array<QString, 3>> rows;
        std::array<int, 3> widths = {24, 32, 16};
        for (const Policy &pol : policies) {
            if (cli.json()) {
                cli.printJson(pol.toJson());
                continue;
            }
            rows.push_back({escapeControls(pol.name), displayKey(pol.match), algorithmName(pol.spec.algorithm)});
            for (size_t i = 0; i < widths.size(); ++i)
                widths[i] = std::max(widths[i], displayWidth(rows.back()[i]));
        }
        for (size_t r = 0; r < rows.size(); ++r) {
            const Policy &pol = policies[r];
            cli.out() << padToWidth(rows[r][0], widths[0]) << ' ' << padToWidth(rows[r][1], widths[1]) << ' '
                      << padToWidth(rows[r][2], widths[2]) << ' '
                      << QStringLiteral("%1/%2").arg(pol.spec.limit).arg(formatDurationUs(pol.spec.windowUs)) << "  v" << pol.version
                      << '\n';
        }
        if (!cli.json() && policies.empty())
            cli.err() << "no policies under namespace '" << cli.ns().text() << "'\n";
        return ExitOk;
    }
    if (action == QLatin1String("get")) {
        const QString name = policyName(p);
        const auto pol = PolicyStore(cli.connection(), cli.ns()).get(name);
        if (!pol) // exit 6, as an edit of a policy that does not exist
            throw ConflictError(QStringLiteral("no policy named '%1'").arg(name));
        printPolicy(cli, *pol);
        return ExitOk;
    }
    if (action == QLatin1String("set")) {
        const QString name = policyName(p);
        cli.requireWritable(QStringLiteral("policy set"));
        Policy pol;
        pol.name = name;
        if (!cli.args().isSet(QStringLiteral("match")))
            throw UsageError(QStringLiteral("--match is required"));
        pol.match = cli.bytes(cli.args().value(QStringLiteral("match")));
        if (!cli.args().isSet(QStringLiteral("algo")))
            throw UsageError(QStringLiteral("--algo is required"));
        pol.spec.algorithm = parseAlgorithm(cli.args().value(QStringLiteral("algo")));
        pol.spec.limit = cli.integerOption(QStringLiteral("limit"), 1, kMaxLimit);
        pol.spec.windowUs = cli.durationOptionUs(QStringLiteral("window"));
        pol.spec.buckets = subBucketsFrom(cli, pol.spec.algorithm);
        pol.spec.cost = cli.integerOption(QStringLiteral("cost"), 1, kMaxLimit, 1);
        pol.scoreUnit =
            parseScoreUnit(cli.args().value(QStringLiteral("score-unit")).isEmpty() ? QStringLiteral("auto")
                                                                                    : cli.args().value(QStringLiteral("score-unit")));
        pol.description = cli.args().value(QStringLiteral("description"));
        pol.enforced = !cli.args().isSet(QStringLiteral("declared-only"));
        if (cli.args().isSet(QStringLiteral("shards")))
            pol.shards = int(cli.integerOption(QStringLiteral("shards"), 2, kMaxPolicyShards));
        if (cli.args().isSet(QStringLiteral("format")))
            pol.format = parseFormatReader(cli.args().value(QStringLiteral("format")))->name();
        pol.validate(); // before anything is sent
        PolicyStore store(cli.connection(), cli.ns());
        ensureAuditable(cli);
        std::optional<Policy> current;
        qint64 currentVersion = 0;
        try {
            current = store.get(name);
            currentVersion = current ? current->version : 0;
        } catch (const UnexpectedReplyError &) {
            currentVersion = store.storedVersion(name); // a record this build cannot read: a set replaces it
        }
        // Based on what the caller says it saw, else on what is there now.
        const qint64 basedOn = cli.integerOption(QStringLiteral("based-on"), 0, std::numeric_limits<qint64>::max(), currentVersion);
        const Policy stored = store.set(pol, basedOn, actor(cli));
        recordChange(cli, policySetAuditEntry(current, stored));
        printPolicy(cli, stored);
        return ExitOk;
    }
    if (action == QLatin1String("delete")) {
        const QString name = policyName(p);
        cli.requireWritable(QStringLiteral("policy delete"));
        PolicyStore store(cli.connection(), cli.ns());
        const auto current = store.get(name);
        if (!current)
            throw ConflictError(QStringLiteral("no policy named '%1' (nothing was changed)").arg(name));
        const qint64 basedOn = cli.integerOption(QStringLiteral("based-on"), 1, std::numeric_limits<qint64>::max(), current->version);
        ensureAuditable(cli);
        const Policy removed = store.remove(name, basedOn, actor(cli));
        recordChange(cli, policyDeleteAuditEntry(removed));
        if (cli.json())
            cli.printJson({{QStringLiteral("deleted"), name}});
        else
            cli.out() << "deleted policy " << name << '\n';
        return ExitOk;
    }
    throw UsageError(QStringLiteral("unknown policy action '%1' (list, get, set, delete)").arg(cli.shown(action)));
}

// ---- override --------------------------------------------------------------------------

void printOverride(Cli &cli, const Override &o)
{
    if (cli.json()) {
        cli.printJson(o.toJson());
        return;
    }
    cli.printFields({
        {QStringLiteral("key"), displayKey(o.key)},
        {QStringLiteral("limit"), QString::number(o.limit)},
        {QStringLiteral("window"), o.windowUs ? formatDurationUs(o.windowUs) : QStringLiteral("(the policy's)")},
        {QStringLiteral("set"), QStringLiteral("%1 by %2").arg(o.setAt.toString(Qt::ISODate), o.setBy)},
        {QStringLiteral("expires"), o.expiresAt.toString(Qt::ISODate)},
    });
}

// The limit and window of `override set` (the key aside).
Override overrideFromOptions(Cli &cli)
{
    Override o;
    o.limit = cli.integerOption(QStringLiteral("limit"), 1, kMaxLimit);
    o.windowUs = 0; // the policy's
    if (cli.args().isSet(QStringLiteral("window"))) {
        // Given, it is a window like check's: 0 is not "the policy's", it is refused.
        o.windowUs = cli.durationOptionUs(QStringLiteral("window"));
        if (o.windowUs < kMinWindowUs || o.windowUs > kMaxWindowUs)
            throw UsageError(QStringLiteral("--window must be between %1 and %2, not %3")
                                 .arg(formatDurationUs(kMinWindowUs), formatDurationUs(kMaxWindowUs), formatDurationUs(o.windowUs)));
    }
    return o;
}

// override set --lookup ID: the same temporary limit for each limiter `lookup ID` lists that
// a policy covers (an override changes a policy's limits; the others are named and skipped),
// one audit entry each.
int grantToLookup(Cli &cli)
{
    cli.requireWritable(QStringLiteral("override set"));
    const Override granted = overrideFromOptions(cli);
    const qint64 forUs = cli.durationOptionUs(QStringLiteral("for"));
    ensureAuditable(cli); // before the pass: a change that cannot be recorded is refused first
    LookupOptions options;
    options.id = cli.bytes(cli.args().value(QStringLiteral("lookup")));
    const LookupResult found = lookUp(cli, options);
    if (!found.complete) {
        cli.err() << "interrupted: the lookup is partial, so nothing was granted\n";
        return kExitInterrupted;
    }
    std::vector<const LookupRow *> covered, skipped;
    for (const LookupRow &row : found.rows)
        (row.policy.isEmpty() ? skipped : covered).push_back(&row);
    for (const LookupRow *row : skipped)
        cli.err() << "skipped " << displayKey(row->key) << ": no policy covers it, so an override would change nothing\n";
    if (covered.empty()) {
        if (cli.json())
            cli.printJson({{QStringLiteral("granted"), 0}});
        else
            cli.out() << "no limiter of " << displayKey(options.id) << " that a policy covers: nothing granted\n";
        return ExitOk;
    }
    OverrideStore store(cli.connection(), cli.ns());
    for (const LookupRow *row : covered) {
        Override o = granted;
        o.key = row->key; // a shard group's base: the whole group's limit
        const auto previous = store.set(o, forUs, actor(cli));
        const auto stored = store.get(o.key);
        recordChange(cli, overrideSetAuditEntry(o.key, previous, stored));
        if (stored)
            printOverride(cli, *stored);
        if (!cli.json())
            cli.out() << '\n';
    }
    if (!cli.json())
        cli.out() << "granted " << covered.size() << (covered.size() == 1 ? " override" : " overrides") << '\n';
    return ExitOk;
}

int runOverride(Cli &cli)
{
    QStringList p = cli.positional();
    if (p.isEmpty())
        throw UsageError(QStringLiteral("override needs an action: set KEY --limit N [--window D] --for D, clear KEY, get KEY, list"));
    const QString action = p.takeFirst();
    if (action == QLatin1String("list")) {
        for (const Override &o : OverrideStore(cli.connection(), cli.ns()).list()) {
            if (cli.json())
                cli.printJson(o.toJson());
            else
                cli.out() << displayKey(o.key).leftJustified(40) << " limit " << o.limit << " until " << o.expiresAt.toString(Qt::ISODate)
                          << " by " << escapeControls(o.setBy) << '\n';
        }
        return ExitOk;
    }
    if (action == QLatin1String("set") && cli.args().isSet(QStringLiteral("lookup"))) {
        if (!p.isEmpty())
            throw UsageError(QStringLiteral("give either KEY or --lookup ID"));
        return grantToLookup(cli);
    }
    if (p.size() != 1)
        throw UsageError(QStringLiteral("expected exactly one KEY"));
    const QByteArray key = cli.keyBytes(p[0]);
    if (action == QLatin1String("get")) {
        const auto o = OverrideStore(cli.connection(), cli.ns()).get(key);
        if (!o)
            throw ConflictError(QStringLiteral("no override for %1 (none was set, or it expired)").arg(displayKey(key)));
        printOverride(cli, *o);
        return ExitOk;
    }
    if (action == QLatin1String("set")) {
        cli.requireWritable(QStringLiteral("override set"));
        Override o = overrideFromOptions(cli);
        o.key = key;
        const qint64 forUs = cli.durationOptionUs(QStringLiteral("for"));
        OverrideStore store(cli.connection(), cli.ns());
        ensureAuditable(cli);
        const auto previous = store.set(o, forUs, actor(cli));
        const auto stored = store.get(key);
        recordChange(cli, overrideSetAuditEntry(key, previous, stored));
        if (stored)
            printOverride(cli, *stored);
        return ExitOk;
    }
    if (action == QLatin1String("clear")) {
        cli.requireWritable(QStringLiteral("override clear"));
        ensureAuditable(cli);
        const auto removed = OverrideStore(cli.connection(), cli.ns()).clear(key, actor(cli));
        if (removed) // clearing nothing changed nothing: no entry
            recordChange(cli, overrideClearAuditEntry(key, removed));
        if (cli.json())
            cli.printJson({{QStringLiteral("cleared"), removed.has_value()}});
        else
            cli.out() << (removed ? "override cleared\n" : "there was no override: nothing changed, nothing audited\n");
        return ExitOk;
    }
    throw UsageError(QStringLiteral("unknown override action '%1' (set, clear, get, list)").arg(cli.shown(action)));
}

// ---- audit -----------------------------------------------------------------------------

int runAudit(Cli &cli)
{
    const int max = int(cli.integerOption(QStringLiteral("max"), 1, 100000, 50));
    // audit writes nothing, so the global --reason is its filter: entries whose reason matches.
    const QByteArray reasonGlob = cli.reason().toUtf8();
    if (!reasonGlob.isEmpty())
        requireWellFormedGlob(reasonGlob, QStringLiteral("--reason"));
    std::vector<AuditEntry> entries;
    AuditLog log = cli.auditLog();
    if (reasonGlob.isEmpty()) {
        entries = log.list(max);
    } else {
        // Newest first, a page at a time, until `max` match or the trail (capped) ends.
        QString before;
        for (;;) {
            const std::vector<AuditEntry> page = log.olderThan(before, 1000);
            for (const AuditEntry &e : page)
                if (!e.reason.isEmpty() && globMatch(reasonGlob, e.reason.toUtf8()) && qsizetype(entries.size()) < max)
                    entries.push_back(e);
            if (page.size() < 1000 || qsizetype(entries.size()) >= max)
                break;
            before = page.back().id;
        }
    }
    for (const AuditEntry &e : entries) {
        if (cli.json()) {
            cli.printJson({{QStringLiteral("id"), e.id},
                           {QStringLiteral("time"), e.time.toString(Qt::ISODateWithMs)},
                           {QStringLiteral("actor"), e.actor},
                           {QStringLiteral("os_user"), e.osUser},
                           {QStringLiteral("host"), e.host},
                           {QStringLiteral("action"), e.action},
                           {QStringLiteral("target"), e.target},
                           {QStringLiteral("before"), e.before},
                           {QStringLiteral("after"), e.after},
                           {QStringLiteral("count"), e.count},
                           {QStringLiteral("version"), e.version},
                           {QStringLiteral("reason"), e.reason}});
            continue;
        }
        // Every field may come from another writer of the stream: none may move the cursor or forge a line.
        cli.out() << e.time.toString(Qt::ISODate) << "  " << escapeControls(e.actor).leftJustified(12) << ' '
                  << escapeControls(e.host).leftJustified(14) << ' ' << escapeControls(e.action).leftJustified(15) << ' '
                  << escapeControls(e.target) << "  (" << e.count << ")";
        if (!e.reason.isEmpty())
            cli.out() << "  reason: " << escapeControls(e.reason);
        cli.out() << '\n';
    }
    return ExitOk;
}

// ---- settings --------------------------------------------------------------------------

int runSettings(Cli &cli)
{
    QStringList p = cli.positional();
    const QString action = p.isEmpty() ? QStringLiteral("get") : p.takeFirst();
    if (action == QLatin1String("get")) {
        if (!p.isEmpty())
            throw UsageError(QStringLiteral("settings get takes nothing more"));
        const NamespaceSettings settings = readNamespaceSettings(cli.connection(), cli.ns());
        if (cli.json())
            cli.printJson({{QStringLiteral("namespace"), cli.ns().text()}, {QStringLiteral("require_reason"), settings.requireReason}});
        else
            cli.printFields({{QStringLiteral("namespace"), cli.ns().text()},
                             {QStringLiteral("require-reason"), settings.requireReason ? QStringLiteral("on (every change needs --reason)")
                                                                                       : QStringLiteral("off")}});
        return ExitOk;
    }
    if (action != QLatin1String("set"))
        throw UsageError(QStringLiteral("unknown settings action '%1' (get, set NAME on|off)").arg(cli.shown(action)));
    if (p.size() != 2)
        throw UsageError(QStringLiteral("settings set needs a NAME and on or off (settings: %1)").arg(namespaceSettingNames().join(", ")));
    if (!namespaceSettingNames().contains(p[0]))
        throw UsageError(QStringLiteral("unknown setting '%1' (settings: %2)").arg(escapeControls(p[0]), namespaceSettingNames().join(", ")));
    if (p[1] != QLatin1String("on") && p[1] != QLatin1String("off"))
        throw UsageError(QStringLiteral("%1 is on or off, not '%2'").arg(p[0], escapeControls(p[1])));
    cli.requireWritable(QStringLiteral("settings set"));
    const bool on = p[1] == QLatin1String("on");
    ensureAuditable(cli); // turning it off needs a reason while it is on
    const bool was = readNamespaceSettings(cli.connection(), cli.ns()).requireReason;
    if (was == on) {
        if (cli.json())
            cli.printJson({{QStringLiteral("require_reason"), on}, {QStringLiteral("changed"), false}});
        else
            cli.out() << p[0] << " is already " << p[1] << ": nothing changed, nothing audited\n";
        return ExitOk;
    }
    const Reply r = cli.connection().command({"HSET", settingsKey(cli.ns()), p[0].toUtf8(), on ? "1" : "0"});
    if (r.isError())
        throw ReplyError(QStringLiteral("%1 (writing the settings %2; nothing was changed)").arg(r.text(), QString::fromUtf8(settingsKey(cli.ns()))));
    AuditEntry entry;
    entry.action = QStringLiteral("settings.set");
    entry.target = p[0];
    entry.before = was ? QStringLiteral("on") : QStringLiteral("off");
    entry.after = p[1];
    entry.count = 1;
    recordChange(cli, entry);
    if (cli.json())
        cli.printJson({{QStringLiteral("require_reason"), on}, {QStringLiteral("changed"), true}});
    else
        cli.out() << p[0] << " is now " << p[1] << '\n';
    return ExitOk;
}

} // namespace

void registerAdministration(QList<Subcommand> &commands)
{
    commands.append(
        {QStringLiteral("reset"),
         QStringLiteral("reset KEY... | --match GLOB | --lookup ID [--dry-run] [--yes] [--force] [--include-non-limiters] "
                        "[--include-metadata]"),
         QStringLiteral("Delete limiter keys: exact names (taken literally), or a SCAN snapshot of a pattern,\n"
                        "previewed first; exactly the previewed keys are deleted. Counter bases take their windows.\n"
                        "A pattern deletes limiters only: matching keys that are no limiter are listed apart."),
         {{QStringLiteral("match"), QStringLiteral("Keys matching this glob (metadata only if the glob starts with the namespace)."),
           QStringLiteral("GLOB")},
          {QStringLiteral("dry-run"), QStringLiteral("Only show what would be deleted.")},
          {QStringLiteral("force"), QStringLiteral("Also delete named keys of types no limiter uses (stream, list, set, ...).")},
          {QStringLiteral("include-non-limiters"),
           QStringLiteral("With --match: also delete the matching keys that are no limiter (held back by default).")},
          {QStringLiteral("include-metadata"), QStringLiteral("Also delete Ratescope's own records (policies, overrides, audit trail).")},
          {QStringLiteral("yes"), QStringLiteral("Do not ask (required when not on a terminal).")},
          lookupOption()},
         false,
         runReset});
    commands.append(
        {QStringLiteral("policy"),
         QStringLiteral("policy list | get NAME | set NAME --match GLOB --algo A --limit N --window D [--cost C] [--sub-buckets B] "
                        "[--shards N] [--format NAME] | delete NAME"),
         QStringLiteral("Policies: which limits apply to which keys. Edits based on a stale version are refused."),
         {{QStringLiteral("match"), QStringLiteral("Key glob the policy covers (a plain key: exact match)."), QStringLiteral("GLOB")},
          {QStringLiteral("algo"), QStringLiteral("Algorithm."), QStringLiteral("A")},
          {QStringLiteral("limit"), QStringLiteral("Limit per window."), QStringLiteral("N")},
          {QStringLiteral("window"), QStringLiteral("Window length."), QStringLiteral("D")},
          {QStringLiteral("cost"), QStringLiteral("Default cost of a request."), QStringLiteral("C")},
          subBucketsOption(),
          {QStringLiteral("score-unit"), QStringLiteral("Score unit of foreign logs it covers: auto, s, ms, us."), QStringLiteral("U")},
          {QStringLiteral("description"), QStringLiteral("What it is for."), QStringLiteral("TEXT")},
          {QStringLiteral("declared-only"), QStringLiteral("Declared for inspection; services do not enforce it through Ratescope.")},
          {QStringLiteral("shards"), QStringLiteral("The keys are N shards <base>:<n> sharing the limit (2..1024)."), QStringLiteral("N")},
          {QStringLiteral("format"), QStringLiteral("Read the keys as this library's format (`formats` lists them)."),
           QStringLiteral("NAME")},
          {QStringLiteral("based-on"), QStringLiteral("The version this edit is based on (refused if it changed since)."),
           QStringLiteral("V")}},
         false,
         runPolicy});
    commands.append({QStringLiteral("override"),
                     QStringLiteral("override set KEY|--lookup ID --limit N [--window D] --for D | clear KEY | get KEY | list"),
                     QStringLiteral("Temporary limits for one key, or for each limiter `lookup ID` lists; they expire by themselves."),
                     {{QStringLiteral("limit"), QStringLiteral("The temporary limit."), QStringLiteral("N")},
                      {QStringLiteral("window"), QStringLiteral("A temporary window (default: the policy's)."), QStringLiteral("D")},
                      {QStringLiteral("for"), QStringLiteral("How long it lasts, e.g. 2h."), QStringLiteral("D")},
                      lookupOption()},
                     false,
                     runOverride});
    commands.append({QStringLiteral("audit"),
                     QStringLiteral("audit [--max N] [--reason GLOB]"),
                     QStringLiteral("Who changed what and why, newest first. With --reason, only the entries whose reason\n"
                                    "matches the glob (e.g. --reason 'TICKET-42*')."),
                     {{QStringLiteral("max"), QStringLiteral("How many entries (default 50)."), QStringLiteral("N")}},
                     false,
                     runAudit});
    commands.append({QStringLiteral("settings"),
                     QStringLiteral("settings [get] | set require-reason on|off"),
                     QStringLiteral("The namespace's settings. require-reason on: every change (CLI and console) must give a reason\n"
                                    "(--reason), else it is refused before anything is sent. Changing a setting is audited."),
                     {},
                     false,
                     runSettings});
}

} // namespace ratescope::cli
