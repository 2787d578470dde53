// `ratescope-cli keys` and `inspect`: what limiters a database holds, and one in full. Read-only.
#include "cli.h"
#include "limitoptions.h"

#include "base/duration.h"
#include "base/errors.h"
#include "base/glob.h"
#include "keys/inspector.h"
#include "keys/keyscanner.h"
#include "base/keytext.h"
#include "keys/logwindow.h"
#include "limiters/limiterscript.h"
#include "keys/reset.h"
#include "redis/serverinfo.h"
#include "keys/shards.h"
#include "formats/usage.h"

#include <atomic>
#include <cmath>
#include <csignal>
#include <deque>
#include <map>
#include <memory>
#include <QDateTime>
#include <QJsonArray>

namespace ratescope::cli {

namespace {

std::optional<qint64> nowOption(const Cli &cli)
{
    if (!cli.args().isSet(QStringLiteral("now-us")))
        return std::nullopt;
    return cli.integerOption(QStringLiteral("now-us"), 0, kMaxNowUs);
}

QString ttlText(qint64 pttlMs)
{
    if (pttlMs == -1)
        return QStringLiteral("none");
    if (pttlMs < 0)
        return QStringLiteral("-");
    return formatWaitUs(pttlMs * 1000);
}

struct Row {
    QByteArray key;
    QString type, label;
    std::optional<Algorithm> algorithm;
    std::optional<Usage> usage;
    std::optional<LimitSpec> spec;
    QString policy;
    qint64 pttlMs = -1, memory = -1;
    qint64 windows = 0; // counter bases: how many window keys
    // A sharded limiter's group row: its shards, the busiest one and the skew.
    int shards = 0;
    QByteArray busiest;
    double skew = 0;
};

class KeysPrinter {
public:
    KeysPrinter(Cli &cli, bool memory)
        : m_cli(cli)
        , m_memory(memory)
    {
    }

    // Rows are written as they come and flushed a page at a time (flush()): one write per
    // page, not per row.
    void flush() { m_cli.flushOut(); }
    void print(const Row &r)
    {
        if (m_cli.json()) {
            JsonLine o; // a QJsonObject per row was two thirds of the listing's time
            o.add("type", r.type);
            o.add("format", r.label);
            o.add("ttl_ms", r.pttlMs);
            o.addBytes("key", r.key); // key_base64 too when it is not text
            if (r.algorithm)
                o.add("algorithm", algorithmName(*r.algorithm));
            if (!r.policy.isEmpty())
                o.add("policy", r.policy);
            if (r.usage) {
                o.add("used", r.usage->usedNow);
                o.add("limit", r.usage->decision.limit);
                o.add("remaining", std::max<qint64>(0, r.usage->decision.limit - r.usage->usedNow));
            }
            if (r.memory >= 0)
                o.add("memory", r.memory);
            if (r.windows)
                o.add("windows", r.windows);
            if (r.shards) {
                o.add("shards", r.shards);
                if (!r.busiest.isEmpty()) {
                    o.addBytes("busiest", r.busiest);
                    o.add("skew", std::round(r.skew * 1000) / 1000);
                }
            }
            m_cli.printJson(o, Cli::Flush::Later);
            return;
        }
        if (!m_header) {
            m_header = true;
            line(QStringLiteral("KEY"), QStringLiteral("ALGORITHM"), QStringLiteral("USED"), QStringLiteral("LIMIT"),
                 QStringLiteral("REMAINING"), QStringLiteral("TTL"), QStringLiteral("MEMORY"));
        }
        const QString dash = QStringLiteral("-");
        line(r.shards ? QStringLiteral("%1 · %2 shards").arg(displayKey(r.key)).arg(r.shards) : displayKey(r.key), r.label,
             r.usage ? QString::number(r.usage->usedNow) : dash, r.usage ? QString::number(r.usage->decision.limit) : dash,
             r.usage ? QString::number(std::max<qint64>(0, r.usage->decision.limit - r.usage->usedNow)) : dash, ttlText(r.pttlMs),
             r.memory >= 0 ? formatBytes(r.memory) : dash);
    }

private:
    void line(const QString &key, const QString &algo, const QString &used, const QString &limit, const QString &remaining,
              const QString &ttl, const QString &memory)
    {
        QTextStream &out = m_cli.out();
        out << key.leftJustified(40) << ' ' << algo.leftJustified(34) << ' ' << used.rightJustified(10) << ' ' << limit.rightJustified(10)
            << ' ' << remaining.rightJustified(10) << ' ' << ttl.rightJustified(10);
        if (m_memory)
            out << ' ' << memory.rightJustified(11);
        out << '\n';
    }

    Cli &m_cli;
    bool m_memory;
    bool m_header = false;
};

int runKeys(Cli &cli)
{
    KeyScanner::Options options;
    options.match = cli.bytes(cli.args().value(QStringLiteral("match")));
    if (cli.args().isSet(QStringLiteral("match")) && options.match.isEmpty()) // as reset --match '' is refused
        throw UsageError(QStringLiteral("--match: the glob is empty (leave --match out to list every key, or give '*')"));
    requireWellFormedGlob(options.match, QStringLiteral("--match"));
    options.type = cli.args().value(QStringLiteral("type")).toUtf8();
    if (cli.args().isSet(QStringLiteral("type")) && !isLimiterType(options.type))
        throw UsageError(QStringLiteral("--type must be a type limiters are stored in (zset, hash, string or list), not '%1'")
                             .arg(cli.args().value(QStringLiteral("type"))));
    options.memory = cli.args().isSet(QStringLiteral("memory"));
    options.nowUs = nowOption(cli);
    // The policies, the functions library's version, the clock and the first SCAN with the
    // handshake (one server: a cluster's SCAN walks its masters in turn).
    const bool cluster = cli.connectionOptions().transport == ConnectionOptions::Transport::Cluster;
    std::vector<Command> firstReads{{"HGETALL", PolicyStore::hashKeyIn(cli.ns())}};
    if (!cluster) {
        firstReads.push_back(LoadedLibrary::query());
        for (Command &read : KeyScanner::firstReads(options))
            firstReads.push_back(std::move(read));
    }
    Connection &c = cli.connection(firstReads);
    options.policies = cli.policies();
    // The server a page ahead of the listing (KeyScanner::Options::overlap).
    options.overlap = true;
    const qint64 max = cli.integerOption(QStringLiteral("max"), 1, std::numeric_limits<qint64>::max(), std::numeric_limits<qint64>::max());
    const bool all = cli.args().isSet(QStringLiteral("all"));
    const QByteArray ns = cli.ns().bytes();

    KeysPrinter printer(cli, options.memory);
    LimitResolver resolver(options.policies, cli.ns()); // the limits in force, as every view has them
    // A page's rows wait for their usage, read with the scanner's next round (or in one of
    // their own after the last page): the scanner's steps carry the next SCAN, a page's first
    // round, its overrides and the usage of the pages before it together. Rows are printed in
    // the order their pages were read.
    struct WaitingRows {
        std::vector<Row> rows;
        std::vector<UsageTarget> targets;
        std::vector<size_t> targetRow;
        std::vector<std::pair<size_t, size_t>> owned; // per target: first command, count (count 0: unreadable)
        std::vector<Command> commands;
        bool read = false; // the usage is in (or there is none to read)
    };
    std::deque<std::shared_ptr<WaitingRows>> waiting; // oldest first
    qint64 waitingRows = 0;
    // Which script calls the server takes, asked once for the whole listing (with the
    // handshake on one server, so never between the scanner's steps).
    std::optional<ScriptCalls> calls;
    if (!cluster && !options.policies.empty())
        calls = LimiterScript::callsOn(c);
    // The overrides of a page's keys go in the page's own first round.
    options.alsoPerPage = [&](const std::vector<QByteArray> &keys) {
        auto reads = std::make_shared<LimitResolver::OverrideReads>(resolver.overrideCommands(keys, c.isCluster()));
        return KeyScanner::PageReads{reads->commands, [&resolver, reads](Reply *replies) { resolver.takeOverrides(*reads, replies); }};
    };
    qint64 printed = 0;
    qint64 nowUs = 0;
    // The usage of waiting rows from their commands' replies (nullptr: read now).
    auto readUsageOf = [&](WaitingRows &w, Reply *replies) {
        std::vector<Reply> own;
        if (!replies && !w.commands.empty()) {
            own = c.pipeline(w.commands);
            replies = own.data();
        }
        if (!w.commands.empty())
            LimiterScript::resendNotLoaded(c, w.commands, replies); // the scripts lost: one round more
        for (size_t i = 0; i < w.targets.size(); ++i) {
            const auto [from, n] = w.owned[i];
            if (n == 0)
                continue;
            try {
                w.rows[w.targetRow[i]].usage = usageFromReplies(c, w.targets[i], replies + from, n, nowUs);
            } catch (const ConnectionError &) {
                throw;
            } catch (const Error &) {
                // changed type or vanished meanwhile: no figures
            }
        }
        w.read = true;
    };
    // The waiting rows whose usage is in, printed in order.
    auto printRead = [&] {
        bool any = false;
        while (!waiting.empty() && waiting.front()->read) {
            for (const Row &r : waiting.front()->rows) {
                if (printed++ >= max)
                    break;
                printer.print(r);
            }
            waitingRows -= qint64(waiting.front()->rows.size());
            waiting.pop_front();
            any = true;
        }
        if (any)
            printer.flush(); // the page shown as it is read
    };
    KeyScanner scanner(c, options);
    std::map<QByteArray, Row> counterBases;                       // grouped and printed at the end
    std::map<QByteArray, std::pair<Row, KeyKind>> libraryRows;   // other libraries' limiters: one row each, printed at the end
    std::vector<std::pair<QByteArray, KeyKind>> shardCandidates; // <base>:<n> limiters, grouped at the end
    std::map<QByteArray, Row> shardRows;
    // Ctrl-C or a failure mid-scan ends the listing early: what was read is printed, and a
    // last line says it is incomplete, so that nobody takes a partial table for the whole.
    InterruptFlag interrupt;
    std::exception_ptr failure;
    try {
        while (!scanner.atEnd() && printed < max && !interrupt.raised()) {
            std::vector<Row> rows;
            std::vector<UsageTarget> targets;
            std::vector<size_t> targetRow;
            const std::vector<KeyRecord> page = scanner.nextPage(); // may read usage sent before
            rows.reserve(page.size());
            nowUs = scanner.nowUs();
            printRead();
            // A counter window's or another library's limiter: its subject's override, in a
            // round of its own (only pages that have them).
            std::vector<QByteArray> subjects;
            for (const KeyRecord &rec : page)
                if (rec.kind.subject(rec.key) != rec.key)
                    subjects.push_back(rec.kind.subject(rec.key));
            resolver.readOverrides(c, subjects);
            for (const KeyRecord &rec : page) {
                if (!ns.isEmpty() && rec.key.startsWith(ns) && !all)
                    continue; // Ratescope's own metadata
                const LimitsInForce limits = resolver.resolve(rec.kind.subject(rec.key), rec.kind);
                const Policy *policy = limits.policy;
                if (!rec.kind.isLimiter() && !policy && !all)
                    continue;
                if (rec.kind.format == KeyFormat::Library) {
                    // A limiter of another library: its keys (two strings, window keys) are one row.
                    auto &[row, kind] = libraryRows[rec.kind.base];
                    if (row.key.isEmpty()) {
                        row.key = rec.kind.base;
                        row.type = QString::fromUtf8(rec.type);
                        row.label = rec.kind.label();
                        row.algorithm = rec.kind.algorithm();
                        kind = rec.kind;
                        if (policy)
                            row.policy = policy->name;
                        row.spec = limits.spec;
                    }
                    row.pttlMs = std::max(row.pttlMs, rec.pttlMs);
                    row.memory = rec.memory >= 0 ? std::max<qint64>(0, row.memory) + rec.memory : -1;
                    continue;
                }
                if (rec.kind.format == KeyFormat::CounterWindow) {
                    Row &base = counterBases[rec.kind.base];
                    base.key = rec.kind.base;
                    base.type = QStringLiteral("string");
                    base.label = rec.kind.label();
                    base.pttlMs = std::max(base.pttlMs, rec.pttlMs);
                    base.memory = rec.memory >= 0 ? std::max<qint64>(0, base.memory) + rec.memory : -1;
                    base.windows += 1;
                    if (policy)
                        base.policy = policy->name;
                    if (limits.spec) {
                        base.spec = limits.spec;
                        base.algorithm = limits.spec->algorithm;
                    }
                    continue;
                }
                Row r{rec.key,
                      QString::fromUtf8(rec.type),
                      rec.kind.label(),
                      rec.kind.algorithm(),
                      {},
                      {},
                      {},
                      rec.pttlMs,
                      rec.memory,
                      0,
                      0,
                      {},
                      0};
                QByteArray shardBase;
                int shardNumber = 0;
                if (rec.kind.isLimiter() && splitShardKey(rec.key, &shardBase, &shardNumber)) {
                    // Maybe a shard of a sharded limiter: listed once every key is known.
                    shardCandidates.emplace_back(rec.key, rec.kind);
                    shardRows.emplace(rec.key, std::move(r));
                    continue;
                }
                if (policy)
                    r.policy = policy->name;
                if (limits.spec) {
                    r.spec = limits.spec;
                    if (rec.kind.isLimiter()) {
                        targets.push_back({rec.key, rec.kind, *limits.spec});
                        targetRow.push_back(rows.size());
                    }
                }
                rows.push_back(std::move(r));
            }
            if (rows.empty())
                continue;
            // This page's usage: its commands go with the scanner's next step.
            auto w = std::make_shared<WaitingRows>();
            w->rows = std::move(rows);
            w->targets = std::move(targets);
            w->targetRow = std::move(targetRow);
            w->owned.assign(w->targets.size(), {0, 0});
            for (size_t i = 0; i < w->targets.size(); ++i) {
                try {
                    std::vector<Command> mine = usageCommands(c, w->targets[i], nowUs, calls);
                    w->owned[i] = {w->commands.size(), mine.size()};
                    for (Command &cmd : mine)
                        w->commands.push_back(std::move(cmd));
                } catch (const UsageError &) {
                    // unreadable with these limits, or no limiter: listed without figures
                }
            }
            waiting.push_back(w);
            waitingRows += qint64(w->rows.size());
            if (w->commands.empty())
                w->read = true;
            else if (scanner.atEnd() || printed + waitingRows >= max)
                readUsageOf(*w, nullptr); // no next step to ride with
            else
                scanner.sendAlong({w->commands, [&readUsageOf, w](Reply *replies) { readUsageOf(*w, replies); }});
            printRead();
        }
        // Interrupted, or enough rows: what is still waiting is read now.
        for (const auto &w : waiting)
            if (!w->read)
                readUsageOf(*w, nullptr);
        printRead();
    } catch (const std::exception &) {
        failure = std::current_exception();
    }
    if (failure)
        for (const auto &w : waiting)
            for (const Row &r : w->rows) { // read before the failure, listed without (some) figures
                if (printed++ >= max)
                    break;
                printer.print(r);
            }
    const bool complete = !failure && !interrupt.raised();
    // Sharded limiters: one row per group, used summed over its shards against the group's
    // limit; the keys <base>:<n> that make no group are listed one by one.
    if (!failure) {
        const auto groups = findShardGroups(shardCandidates, options.policies);
        for (const ShardGroup &g : groups) {
            if (printed++ >= max)
                break;
            const Row &first = shardRows.at(g.keys.front());
            Row row{g.base, first.type, first.label, first.algorithm, {}, {}, {}, -1, -1, 0, 0, {}, 0};
            row.shards = g.count;
            for (const QByteArray &k : g.keys) {
                const Row &shard = shardRows.at(k);
                row.pttlMs = std::max(row.pttlMs, shard.pttlMs);
                row.memory = shard.memory >= 0 ? std::max<qint64>(0, row.memory) + shard.memory : -1;
                shardRows.erase(k);
            }
            if (g.policy) {
                row.policy = g.policy->name;
                row.spec = g.policy->spec;
                try {
                    ShardGroup group = g;
                    OverrideStore overrides(c, cli.ns());
                    readGroupOverrides(overrides, group); // the whole group's limit, and shards' own
                    row.spec->limit = groupLimit(group);
                    if (group.override && group.override->windowUs)
                        row.spec->windowUs = group.override->windowUs;
                    const auto usage = readUsage(c, shardTargets(group), scanner.nowUs());
                    const ShardUsage sum = sumShards(usage);
                    row.usage = groupUsage(sum, row.spec->limit);
                    if (sum.busiest >= 0) {
                        row.busiest = g.shardKey(sum.busiest);
                        row.skew = sum.skew;
                    }
                } catch (const ReplyError &) {
                    // a shard of another type meanwhile: the group without figures
                }
            }
            printer.print(row);
        }
        // The rest, one by one, read in one pipelined round.
        std::map<QByteArray, KeyKind> kinds(shardCandidates.begin(), shardCandidates.end());
        std::vector<UsageTarget> targets;
        std::vector<Row *> targetRows;
        for (auto &[key, row] : shardRows) {
            const LimitsInForce limits = resolver.resolve(key, kinds[key]);
            if (limits.policy)
                row.policy = limits.policy->name;
            if (limits.spec) {
                row.spec = limits.spec;
                targets.push_back({key, kinds[key], *limits.spec});
                targetRows.push_back(&row);
            }
        }
        const auto usage = readUsage(c, targets, scanner.nowUs());
        for (size_t i = 0; i < usage.size(); ++i)
            targetRows[i]->usage = usage[i];
        for (const auto &[key, row] : shardRows) {
            if (printed++ >= max)
                break;
            printer.print(row);
        }
    }
    if (!failure) {
        std::vector<UsageTarget> targets;
        std::vector<Row *> targetRows;
        for (auto &[base, entry] : libraryRows) {
            auto &[row, kind] = entry;
            if (row.spec && kind.readable()) {
                targets.push_back({base, kind, *row.spec});
                targetRows.push_back(&row);
            }
        }
        try {
            const auto usage = readUsage(c, targets, scanner.nowUs());
            for (size_t i = 0; i < usage.size(); ++i)
                targetRows[i]->usage = usage[i];
        } catch (const ReplyError &) {
            // listed without figures
        }
    }
    for (const auto &[base, entry] : libraryRows) {
        if (printed++ >= max)
            break;
        printer.print(entry.first);
    }
    // Counter windows: the usage of every base listed, in one pipelined round.
    if (!failure) {
        std::vector<UsageTarget> targets;
        std::vector<Row *> targetRows;
        qint64 listed = printed;
        for (auto &[base, row] : counterBases) {
            if (listed++ >= max)
                break;
            if (!row.spec)
                continue;
            KeyKind kind;
            kind.format = KeyFormat::CounterWindow;
            kind.base = base;
            kind.windowSeconds = row.spec->windowUs / 1000000;
            targets.push_back({base, kind, *row.spec});
            targetRows.push_back(&row);
        }
        const auto usage = readUsage(c, targets, scanner.nowUs());
        for (size_t i = 0; i < usage.size(); ++i)
            targetRows[i]->usage = usage[i];
    }
    for (const auto &[base, row] : counterBases) {
        if (printed++ >= max)
            break;
        printer.print(row);
    }
    printer.flush();
    if (complete) {
        if (!cli.json() && printed == 0)
            cli.err() << "no limiter keys found (scanned " << scanner.scanned() << " keys; --all lists every key)\n";
        return ExitOk;
    }
    const int code = failure ? [&] {
        try {
            std::rethrow_exception(failure);
        } catch (const std::exception &e) {
            return cli.fail(e);
        }
    }()
                             : kExitInterrupted;
    const qint64 rows = std::min(printed, max);
    const QString reason = failure ? QStringLiteral("error") : QStringLiteral("interrupted");
    if (cli.json())
        cli.printJson({{QStringLiteral("incomplete"), true},
                       {QStringLiteral("reason"), reason},
                       {QStringLiteral("rows"), rows},
                       {QStringLiteral("scanned"), scanner.scanned()}});
    cli.err() << "incomplete: " << (failure ? "stopped by an error" : "interrupted") << " after " << rows << " rows (about "
              << scanner.scanned() << " keys scanned); the listing is partial\n";
    cli.err().flush();
    return code;
}

// Flattens nested JSON into "a.b  value" lines for the human form of inspect.
void flatten(const QString &prefix, const QJsonValue &v, QList<QPair<QString, QString>> &out)
{
    if (v.isObject()) {
        const QJsonObject o = v.toObject();
        for (auto it = o.begin(); it != o.end(); ++it) {
            if (it.key().endsWith(QLatin1String("_base64"))) // the bytes are shown with the field they belong to
                continue;
            const QString name = prefix.isEmpty() ? it.key() : prefix + QLatin1Char('.') + it.key();
            // Bytes that are not plain text (a member with a newline, invalid UTF-8): quoted and
            // escaped from their exact bytes, as `keys` and the key line show a key.
            const QJsonValue bytes = o.value(it.key() + QLatin1String("_base64"));
            if (bytes.isString())
                out.append({name, displayKey(QByteArray::fromBase64(bytes.toString().toLatin1()))});
            else
                flatten(name, it.value(), out);
        }
    } else if (v.isArray()) {
        const QJsonArray a = v.toArray();
        for (qsizetype i = 0; i < a.size(); ++i)
            flatten(QStringLiteral("%1[%2]").arg(prefix).arg(i), a[i], out);
    } else {
        const QString text = v.isString() ? v.toString()
                             : v.isBool() ? (v.toBool() ? QStringLiteral("yes") : QStringLiteral("no"))
                                          : v.toVariant().toString();
        const bool isDuration = prefix.endsWith(QStringLiteral("_us")) && !prefix.endsWith(QStringLiteral("time_us")) &&
                                !prefix.endsWith(QStringLiteral("now_us")) && !prefix.endsWith(QStringLiteral("last_update_us")) &&
                                !prefix.endsWith(QStringLiteral("tat_us")) && v.isDouble();
        out.append({prefix, isDuration ? QStringLiteral("%1 (%2)").arg(text, formatWaitUs(std::llround(v.toDouble()))) : text});
    }
}

// A sliding-buckets limiter's counts, oldest (partly counted) first: all of them up to 61
// buckets; above, how many hold requests and the first 20 of those ("#position count").
QString bucketCountsText(const QJsonArray &counts)
{
    constexpr qsizetype kAll = 61, kListed = 20;
    QStringList parts;
    if (counts.size() <= kAll) {
        for (const QJsonValue &c : counts)
            parts << QString::number(c.toInteger());
        return parts.join(QLatin1Char(' ')) + QStringLiteral(" (oldest first)");
    }
    qint64 holding = 0, most = 0;
    for (qsizetype i = 0; i < counts.size(); ++i) {
        const qint64 n = counts[i].toInteger();
        most = std::max(most, n);
        if (n > 0 && ++holding <= kListed)
            parts << QStringLiteral("#%1 %2").arg(i).arg(n);
    }
    QString text =
        QStringLiteral("%1 buckets, oldest first; %2 hold requests, at most %3 in one").arg(counts.size()).arg(holding).arg(most);
    if (holding > 0)
        text += QStringLiteral(": ") + parts.join(QStringLiteral(", ")) + (holding > kListed ? QStringLiteral(", ...") : QString());
    return text + QStringLiteral(" (each count: --json)");
}

// Counts per bucket as one line of ▁▂▃▄▅▆▇█: an empty bucket is the lowest bar, any entry
// at least the second, the fullest the highest.
QString sparkline(const QJsonArray &buckets, qint64 *max)
{
    static const QString bars = QStringLiteral("▁▂▃▄▅▆▇█");
    *max = 0;
    for (const QJsonValue &b : buckets)
        *max = std::max(*max, b[QLatin1String("count")].toInteger());
    QString line;
    for (const QJsonValue &b : buckets) {
        const qint64 n = b[QLatin1String("count")].toInteger();
        line += bars[n == 0 ? 0 : 1 + int(std::min<qint64>(6, (n * 6) / std::max<qint64>(1, *max)))];
    }
    return line;
}

QString timeText(qint64 us)
{
    return QDateTime::fromMSecsSinceEpoch(us / 1000, Qt::UTC).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz 'UTC'"));
}

int runInspect(Cli &cli)
{
    const QStringList p = cli.positional();
    if (p.size() != 1)
        throw UsageError(QStringLiteral("expected exactly one KEY"));
    const QByteArray key = cli.keyBytes(p[0]);
    Connection &c = cli.connectionFor(key, Cli::KeyUse::Inspect); // everything about the key in one round, with the handshake
    InspectOptions o;
    const std::optional<qint64> given = nowOption(cli); // 0 is a time like any other
    o.nowUs = given ? *given : serverTimeUs(c);
    o.entryOffset = int(cli.integerOption(QStringLiteral("offset"), 0, 1000000000, 0));
    o.entryCount = int(cli.integerOption(QStringLiteral("entries"), 0, 10000, 20));
    if (cli.args().isSet(QStringLiteral("score-unit")))
        o.scoreUnit = parseScoreUnit(cli.args().value(QStringLiteral("score-unit")));
    if (cli.args().isSet(QStringLiteral("sub-buckets")) && !cli.args().isSet(QStringLiteral("algo")))
        throw UsageError(QStringLiteral("--sub-buckets goes with --algo sliding-buckets --limit N --window D"));
    if (cli.args().isSet(QStringLiteral("algo")) || cli.args().isSet(QStringLiteral("limit")) ||
        cli.args().isSet(QStringLiteral("window"))) {
        LimitSpec s;
        s.algorithm = parseAlgorithm(cli.args().value(QStringLiteral("algo")));
        s.limit = cli.integerOption(QStringLiteral("limit"), 1, kMaxLimit);
        s.windowUs = cli.durationOptionUs(QStringLiteral("window"));
        s.buckets = subBucketsFrom(cli, s.algorithm);
        s.cost = cli.integerOption(QStringLiteral("cost"), 1, kMaxLimit, 1);
        s.validate();
        o.spec = s;
    }
    if (cli.args().isSet(QStringLiteral("buckets")))
        o.buckets = int(cli.integerOption(QStringLiteral("buckets"), 1, 10000));
    if (cli.args().isSet(QStringLiteral("span"))) {
        if (!o.buckets)
            throw UsageError(QStringLiteral("--span goes with --buckets"));
        o.bucketSpanUs = cli.durationOptionUs(QStringLiteral("span"));
        if (o.bucketSpanUs < o.buckets || o.bucketSpanUs > 10 * kMaxWindowUs)
            throw UsageError(
                QStringLiteral("--span must be at least 1us per bucket and at most %1").arg(formatDurationUs(10 * kMaxWindowUs)));
    }
    const std::vector<Policy> &policies = cli.policiesOnce();
    OverrideStore overrides(c, cli.ns());
    LimitResolver resolver(policies, cli.ns());
    QJsonObject state = inspectKey(c, key, resolver, o);
    // The base of a sharded limiter (no key of its own): the group, shard by shard, under the
    // base's override and the shards' own, if any.
    if (!state.value(QStringLiteral("exists")).toBool())
        if (auto group = readShardGroup(c, key, policies, o.nowUs, &overrides)) {
            if (o.spec && !group->group.policy) {
                // Limits from the flags, no policy: each shard against its share of them.
                for (int i = 0; i < group->group.count; ++i) {
                    const QByteArray shard = group->group.shardKey(i);
                    LimitSpec share = *o.spec;
                    share.limit = shardShare(o.spec->limit, group->group.count, i);
                    try {
                        share.validate();
                        KeyKind kind = classifyKey(c, shard, o.nowUs, o.scoreUnit, share);
                        if (!kind.isLimiter())
                            kind.format = ownFormat(share.algorithm); // missing: a fresh one
                        group->usage[size_t(i)] = peekAnyFormat(c, shard, kind, share, o.nowUs);
                    } catch (const UsageError &) {
                    } catch (const ReplyError &) {
                    }
                }
                group->sum = sumShards(group->usage);
            }
            // What a request is told is its shard's answer: the base's own "decision" (a fresh
            // limiter at a key nobody decides on) gives way to the group's. Allowed when some
            // shard would allow it (which one depends on the request's id).
            int allowing = 0, read = 0;
            qint64 retry = -1, reset = 0, cost = o.spec ? o.spec->cost : 1;
            for (const auto &u : group->usage) {
                if (!u)
                    continue;
                ++read;
                allowing += u->decision.allowed ? 1 : 0;
                if (!u->decision.allowed)
                    retry = retry < 0 ? u->decision.retryAfterUs : std::min(retry, u->decision.retryAfterUs);
                reset = std::max(reset, u->decision.resetAfterUs);
            }
            if (read > 0 && (group->group.policy || o.spec)) {
                const qint64 limit = group->group.policy ? group->sum.limit : o.spec->limit;
                if (group->group.policy)
                    cost = group->group.policy->spec.cost;
                const bool allowed = allowing > 0;
                state.insert(QStringLiteral("decision"),
                             QJsonObject{{QStringLiteral("used_now"), group->sum.used},
                                         {QStringLiteral("allowed"), allowed},
                                         {QStringLiteral("limit"), limit},
                                         {QStringLiteral("used"), group->sum.used + (allowed ? cost : 0)},
                                         {QStringLiteral("remaining"), std::max<qint64>(0, limit - group->sum.used - (allowed ? cost : 0))},
                                         {QStringLiteral("retry_after_us"), allowed ? 0 : std::max<qint64>(0, retry)},
                                         {QStringLiteral("reset_after_us"), reset},
                                         {QStringLiteral("shards_allowing"), allowing}});
                state.remove(QStringLiteral("decision_error"));
            }
            QJsonArray shards;
            for (int i = 0; i < group->group.count; ++i) {
                QJsonObject one{{QStringLiteral("index"), group->group.from + i}};
                insertBytes(one, QStringLiteral("key"), group->group.shardKey(i));
                if (const auto &u = group->usage[size_t(i)]) {
                    one.insert(QStringLiteral("used"), u->usedNow);
                    one.insert(QStringLiteral("limit"), u->decision.limit);
                }
                shards.append(one);
            }
            QJsonObject g{{QStringLiteral("count"), group->group.count},
                          {QStringLiteral("from"), group->group.from},
                          {QStringLiteral("declared"), group->group.declared},
                          {QStringLiteral("shards"), shards}};
            if (group->group.policy || (o.spec && read > 0)) {
                g.insert(QStringLiteral("used"), group->sum.used);
                g.insert(QStringLiteral("limit"), group->group.policy ? group->sum.limit : o.spec->limit);
                g.insert(QStringLiteral("overridden"), group->group.override.has_value());
                g.insert(QStringLiteral("shards_overridden"), int(group->group.shardOverrides.size()));
                g.insert(QStringLiteral("remaining"),
                         std::max<qint64>(0, (group->group.policy ? group->sum.limit : o.spec->limit) - group->sum.used));
                if (group->sum.busiest >= 0) {
                    g.insert(QStringLiteral("busiest"), group->group.from + group->sum.busiest);
                    g.insert(QStringLiteral("skew"), std::round(group->sum.skew * 1000) / 1000);
                }
            }
            state.insert(QStringLiteral("sharded"), g);
        }
    if (const auto placed = c.placementOf(key)) { // where the key lives in a cluster
        state.insert(QStringLiteral("slot"), placed->slot);
        state.insert(QStringLiteral("node"), placed->master.toString());
    }
    if (cli.json()) {
        cli.printJson(state);
        return ExitOk;
    }
    const QJsonArray buckets = state.take(QStringLiteral("buckets")).toArray();
    state.remove(QStringLiteral("bucket_span_us"));
    state.insert(QStringLiteral("key"), displayKey(key));
    // A sliding-buckets limiter's B + 1 counts, and a hash of many fields (up to 3,606 for
    // sliding-buckets): one line each, not a line per element; --json has every one.
    QJsonObject inner = state.value(QStringLiteral("state")).toObject();
    const QJsonArray bucketCounts = inner.take(QStringLiteral("bucket_counts")).toArray();
    QJsonObject fields = inner.value(QStringLiteral("fields")).toObject();
    constexpr qsizetype kFieldsShown = 12;
    if (fields.size() > kFieldsShown)
        inner.remove(QStringLiteral("fields"));
    else
        fields = {};
    if (!bucketCounts.isEmpty() || !fields.isEmpty())
        state.insert(QStringLiteral("state"), inner);
    QList<QPair<QString, QString>> lines;
    flatten(QString(), state, lines);
    qsizetype at = 0; // after the last state.* line
    for (qsizetype i = 0; i < lines.size(); ++i)
        if (lines[i].first.startsWith(QLatin1String("state.")))
            at = i + 1;
    if (!bucketCounts.isEmpty())
        lines.insert(at, {QStringLiteral("state.bucket_counts"), bucketCountsText(bucketCounts)});
    if (!fields.isEmpty()) {
        QStringList shown;
        for (auto it = fields.begin(); it != fields.end() && shown.size() < kFieldsShown; ++it)
            shown << QStringLiteral("%1=%2").arg(it.key(), it.value().toVariant().toString());
        lines.insert(at, {QStringLiteral("state.fields"),
                          QStringLiteral("%1 fields: %2, ... (each: --json)")
                              .arg(inner.value(QStringLiteral("fields_total")).toInteger(fields.size()))
                              .arg(shown.join(QStringLiteral(", ")))});
    }
    if (!buckets.isEmpty()) {
        qint64 max = 0;
        const QString line = sparkline(buckets, &max);
        const qint64 from = buckets.first()[QLatin1String("from_us")].toInteger(), to = buckets.last()[QLatin1String("to_us")].toInteger();
        const qint64 width = buckets.first()[QLatin1String("to_us")].toInteger() - from;
        lines.append({QStringLiteral("buckets"), line});
        lines.append({QStringLiteral("buckets.range"), QStringLiteral("%1 .. %2 (%3 in %4 buckets of %5)")
                                                           .arg(timeText(from), timeText(to), formatDurationUs(to - from))
                                                           .arg(buckets.size())
                                                           .arg(formatDurationUs(width))});
        lines.append({QStringLiteral("buckets.max"), QStringLiteral("%1 entries in one bucket").arg(max)});
    }
    cli.printFields(lines);
    return ExitOk;
}

} // namespace

void registerInspection(QList<Subcommand> &commands)
{
    const QCommandLineOption now(QStringLiteral("now-us"), QStringLiteral("Read the state as of this time (microseconds since the epoch)."),
                                 QStringLiteral("T"));
    commands.append(
        {QStringLiteral("keys"),
         QStringLiteral("keys [--match GLOB] [--max N] [--type T] [--memory] [--all]"),
         QStringLiteral("Limiter keys with algorithm, used, limit, remaining and TTL (SCAN, never KEYS).\n"
                        "Used and limit need a matching policy; counter windows <base>:<id> are grouped by base,\n"
                        "and another library's limiter (`formats`) is one row whatever keys it keeps."),
         {{QStringLiteral("match"), QStringLiteral("Only keys matching this glob."), QStringLiteral("GLOB")},
          {QStringLiteral("max"), QStringLiteral("Stop after N rows."), QStringLiteral("N")},
          {QStringLiteral("type"), QStringLiteral("Only keys of this Redis type (zset, hash, string, list)."), QStringLiteral("T")},
          {QStringLiteral("memory"), QStringLiteral("Also MEMORY USAGE per key (slower on big keyspaces).")},
          {QStringLiteral("all"), QStringLiteral("Also keys that are no limiter, and Ratescope's own metadata.")},
          now},
         false,
         runKeys});
    commands.append(
        {QStringLiteral("inspect"),
         QStringLiteral("inspect KEY [--now-us T] [--entries N] [--offset N] [--buckets N [--span D]] [--algo A --limit N --window D]"),
         QStringLiteral("Full state of one limiter: entries or windows or tokens, TTL, memory, encoding,\n"
                        "policy and override, and what a request would be told now. Read-only."),
         {now,
          {QStringLiteral("entries"), QStringLiteral("Log entries to show (default 20)."), QStringLiteral("N")},
          {QStringLiteral("offset"), QStringLiteral("Skip this many entries in the window (paging)."), QStringLiteral("N")},
          {QStringLiteral("buckets"),
           QStringLiteral("A log's entries counted on the server in N (1..10000) equal buckets over the span ending now."),
           QStringLiteral("N")},
          {QStringLiteral("span"), QStringLiteral("Time the buckets cover (default: one window of the limits)."), QStringLiteral("D")},
          {QStringLiteral("algo"), QStringLiteral("Algorithm, when no policy says."), QStringLiteral("A")},
          subBucketsOption(),
          {QStringLiteral("limit"), QStringLiteral("Limit, when no policy says."), QStringLiteral("N")},
          {QStringLiteral("window"), QStringLiteral("Window, when no policy says."), QStringLiteral("D")},
          {QStringLiteral("cost"), QStringLiteral("Cost of the request asked about (default 1)."), QStringLiteral("C")},
          {QStringLiteral("score-unit"), QStringLiteral("Score unit of a foreign log: auto, s, ms, us."), QStringLiteral("U")}},
         false,
         runInspect});
}

} // namespace ratescope::cli
