// ratescope-cli lookup: every limiter of one customer (an identifier as a whole key segment),
// with the limits in force, how full each is and why it denies (core/keys/lookup). Read-only.
// `reset --lookup` and `override set --lookup` act on exactly the limiters listed here.
#include "cli.h"
#include "lookupcommand.h"

#include "base/duration.h"
#include "base/errors.h"
#include "base/glob.h"
#include "base/keytext.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonObject>


namespace ratescope::cli {

namespace {

const QCommandLineOption kMatch(QStringLiteral("match"), QStringLiteral("Only keys matching this glob too."), QStringLiteral("GLOB"));
const QCommandLineOption kNow(QStringLiteral("now-us"),
                              QStringLiteral("Read against this time (microseconds since the epoch) instead of the server's clock."),
                              QStringLiteral("T"));

QJsonObject rowJson(const LookupRow &row, qint64 nowUs)
{
    QJsonObject o;
    insertBytes(o, QStringLiteral("key"), row.key);
    o.insert(QStringLiteral("policy"), row.policy.isEmpty() ? QJsonValue() : QJsonValue(row.policy));
    o.insert(QStringLiteral("algorithm"), row.algorithmText());
    o.insert(QStringLiteral("format"), row.kind.label());
    o.insert(QStringLiteral("used"), row.usage ? QJsonValue(row.usage->usedNow) : QJsonValue());
    o.insert(QStringLiteral("limit"), row.usage ? QJsonValue(row.usage->decision.limit) : row.spec ? QJsonValue(row.spec->limit) : QJsonValue());
    o.insert(QStringLiteral("remaining"),
             row.usage ? QJsonValue(std::max<qint64>(0, row.usage->decision.limit - row.usage->usedNow)) : QJsonValue());
    o.insert(QStringLiteral("denying"), row.denying());
    o.insert(QStringLiteral("retry_after_ms"),
             row.denying() ? QJsonValue(double(unitsRoundedUp(row.usage->decision.retryAfterUs, 1000))) : QJsonValue(0));
    if (row.deniedSinceUs)
        o.insert(QStringLiteral("denied_since_us"), double(*row.deniedSinceUs));
    if (row.override)
        o.insert(QStringLiteral("override"),
                 QJsonObject{{QStringLiteral("limit"), row.override->limit},
                             {QStringLiteral("window"), row.override->windowUs ? QJsonValue(formatDurationUs(row.override->windowUs)) : QJsonValue()},
                             {QStringLiteral("expires_us"), double(row.override->expiresAt.toMSecsSinceEpoch()) * 1000},
                             {QStringLiteral("set_by"), row.override->setBy}});
    else
        o.insert(QStringLiteral("override"), QJsonValue());
    if (row.shards)
        o.insert(QStringLiteral("shards"), row.shards);
    o.insert(QStringLiteral("verdict"), lookupVerdict(row, nowUs));
    return o;
}

void printRows(Cli &cli, const QByteArray &id, const LookupResult &result)
{
    QTextStream &out = cli.out();
    qint64 denying = 0;
    for (const LookupRow &r : result.rows)
        denying += r.denying() ? 1 : 0;
    out << "lookup " << displayKey(id) << " at "
        << QDateTime::fromMSecsSinceEpoch(result.nowUs / 1000).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) << " · "
        << result.rows.size() << (result.rows.size() == 1 ? " limiter" : " limiters");
    if (!result.rows.empty())
        out << " (" << denying << " denying)";
    out << " · " << result.scanned << (result.scanned == 1 ? " key" : " keys") << " matched " << displayKey(lookupScanPattern(id))
        << (result.complete ? "" : " · interrupted: the list is partial") << '\n';
    if (result.rows.empty()) {
        out << "no limiter holds " << displayKey(id) << " as a segment of its key\n";
        out.flush();
        return;
    }
    const QString dash = QStringLiteral("-");
    auto line = [&](const QString &mark, const QString &key, const QString &policy, const QString &algo, const QString &used,
                    const QString &limit, const QString &remaining) {
        out << mark << ' ' << key.leftJustified(38) << ' ' << policy.leftJustified(14) << ' ' << algo.leftJustified(16) << ' '
            << used.rightJustified(8) << ' ' << limit.rightJustified(8) << ' ' << remaining.rightJustified(9) << '\n';
    };
    line(QStringLiteral(" "), QStringLiteral("LIMITER"), QStringLiteral("POLICY"), QStringLiteral("ALGORITHM"), QStringLiteral("USED"),
         QStringLiteral("LIMIT"), QStringLiteral("REMAINING"));
    for (const LookupRow &r : result.rows) {
        const QString key = r.shards ? QStringLiteral("%1 · %2 shards").arg(displayKey(r.key)).arg(r.shards) : displayKey(r.key);
        line(r.denying() ? QStringLiteral("!") : QStringLiteral(" "), key, r.policy.isEmpty() ? dash : escapeControls(r.policy),
             r.algorithmText(), r.usage ? QString::number(r.usage->usedNow) : dash,
             r.usage ? QString::number(r.usage->decision.limit) : dash,
             r.usage ? QString::number(std::max<qint64>(0, r.usage->decision.limit - r.usage->usedNow)) : dash);
        out << "    " << lookupVerdict(r, result.nowUs) << '\n';
        if (r.override)
            out << "    override: " << r.override->limit
                << (r.override->windowUs ? QStringLiteral(" per %1").arg(formatDurationUs(r.override->windowUs)) : QString())
                << " until " << r.override->expiresAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) << " (set by "
                << escapeControls(r.override->setBy) << ")\n";
    }
    out.flush();
}

int runLookup(Cli &cli)
{
    const QStringList rest = cli.positional();
    if (rest.size() != 1)
        throw UsageError(QStringLiteral("expected exactly one ID (a customer's identifier, e.g. acme)"));
    LookupOptions options;
    options.id = cli.keyBytes(rest[0]);
    if (cli.args().isSet(kMatch)) {
        options.match = cli.bytes(cli.args().value(kMatch));
        requireWellFormedGlob(options.match, QStringLiteral("--match"));
    }
    if (cli.args().isSet(kNow))
        options.nowUs = cli.integerOption(QStringLiteral("now-us"), 0, kMaxNowUs);
    const LookupResult result = lookUp(cli, options);
    if (cli.json()) {
        for (const LookupRow &r : result.rows)
            cli.printJson(rowJson(r, result.nowUs));
        QJsonObject summary{{QStringLiteral("limiters"), qint64(result.rows.size())},
                            {QStringLiteral("scanned"), result.scanned},
                            {QStringLiteral("now_us"), double(result.nowUs)},
                            {QStringLiteral("complete"), result.complete}};
        insertBytes(summary, QStringLiteral("id"), cli.keyBytes(rest[0]));
        cli.printJson({{QStringLiteral("lookup"), summary}});
    } else {
        printRows(cli, cli.keyBytes(rest[0]), result);
    }
    return result.complete ? ExitOk : kExitInterrupted;
}

} // namespace

QCommandLineOption lookupOption()
{
    return {QStringLiteral("lookup"), QStringLiteral("Every limiter `lookup ID` lists (a customer's), instead of KEY."), QStringLiteral("ID")};
}

LookupResult lookUp(Cli &cli, LookupOptions options)
{
    if (options.id.isEmpty())
        throw UsageError(QStringLiteral("the identifier to look up is empty"));
    options.ns = cli.ns();
    Connection &c = cli.connection();
    options.policies = cli.policies();
    InterruptFlag interrupt;
    ProgressLine progress(cli, QStringLiteral("looking up"), interrupt);
    return lookupLimiters(c, options, [&](qint64 scanned) { return progress.report(scanned); });
}

void registerLookup(QList<Subcommand> &commands)
{
    commands.append({QStringLiteral("lookup"),
                     QStringLiteral("lookup ID [--match GLOB]"),
                     QStringLiteral("Every limiter of one customer: keys holding ID as a whole segment (acme: api:acme, rl:{acme}:3,\n"
                                    "not api:acmecorp), in every format read; the limits in force, used, remaining, and why each\n"
                                    "denies, denying ones first. Read-only; exit 0 also when none is found."),
                     {kMatch, kNow, Cli::base64KeysOption()},
                     false,
                     runLookup});
}

} // namespace ratescope::cli
