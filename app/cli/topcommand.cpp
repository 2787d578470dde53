// ratescope-cli top: the limiters taking the most admitted requests right now, the fullest,
// and those denying now (core/hotlimiters). Read-only.
#include "cli.h"
#include "base/duration.h"
#include "base/errors.h"
#include "base/glob.h"
#include "load/hotlimiters.h"
#include "base/keytext.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonObject>

#include <cmath>
#include <cstdio>


namespace ratescope::cli {

namespace {

const QCommandLineOption kBy(QStringLiteral("by"), QStringLiteral("Order: rate (admitted requests/s, default), fill, denied-now."),
                             QStringLiteral("ORDER"));
const QCommandLineOption kMax(QStringLiteral("max"), QStringLiteral("Show the N busiest (default 20)."), QStringLiteral("N"));
const QCommandLineOption kInterval(QStringLiteral("interval"),
                                   QStringLiteral("Span rates are measured over, and the refresh period of --watch (default 1s)."),
                                   QStringLiteral("D"));
const QCommandLineOption kSample(QStringLiteral("sample"),
                                 QStringLiteral("Above this many keys, read a sample of this many (default 200000)."), QStringLiteral("N"));
const QCommandLineOption kMatch(QStringLiteral("match"), QStringLiteral("Only keys matching this glob."), QStringLiteral("GLOB"));
const QCommandLineOption kWatch(QStringLiteral("watch"), QStringLiteral("Pass again every interval until Ctrl-C."));
const QCommandLineOption
    kNow(QStringLiteral("now-us"),
         QStringLiteral("Count log entries up to this time (microseconds since the epoch) instead of the server's clock."),
         QStringLiteral("T"));

QString number(double v, int decimals)
{
    return QString::number(v, 'f', decimals);
}

QJsonObject limiterJson(const HotLimiter &l)
{
    QJsonObject o;
    insertBytes(o, QStringLiteral("key"), l.key);
    const auto algo = l.spec ? std::optional<Algorithm>(l.spec->algorithm) : l.kind.algorithm();
    o.insert(QStringLiteral("algorithm"), algo ? QJsonValue(algorithmName(*algo)) : QJsonValue());
    o.insert(QStringLiteral("format"), l.kind.label());
    const auto rate = l.rate();
    o.insert(QStringLiteral("rate"), rate ? QJsonValue(std::round(*rate * 1000) / 1000) : QJsonValue());
    o.insert(QStringLiteral("admitted"), l.admitted ? QJsonValue(*l.admitted) : QJsonValue());
    o.insert(QStringLiteral("span_ms"), double(l.spanUs) / 1000);
    o.insert(QStringLiteral("used"), l.usage ? QJsonValue(l.usage->usedNow) : QJsonValue());
    o.insert(QStringLiteral("limit"), l.usage ? QJsonValue(l.usage->decision.limit) : QJsonValue());
    const auto fill = l.fill();
    o.insert(QStringLiteral("fill"), fill ? QJsonValue(std::round(*fill * 10000) / 10000) : QJsonValue());
    o.insert(QStringLiteral("denying"), l.denyingNow());
    if (!l.policy.isEmpty())
        o.insert(QStringLiteral("policy"), l.policy);
    if (!l.master.isEmpty())
        o.insert(QStringLiteral("master"), l.master);
    return o;
}

QJsonObject passJson(const HotPass &pass, HotOrder order, qint64 found, qint64 shown)
{
    QJsonArray masters;
    for (const HotMaster &m : pass.masters)
        masters.append(QJsonObject{{QStringLiteral("address"), m.address},
                                   {QStringLiteral("keys"), m.keys},
                                   {QStringLiteral("limiters"), m.limiters},
                                   {QStringLiteral("rate"), std::round(m.rate * 1000) / 1000},
                                   {QStringLiteral("denying"), pass.usageRead ? QJsonValue(m.denying) : QJsonValue()}});
    return {{QStringLiteral("pass"), QJsonObject{{QStringLiteral("by"), hotOrderName(order)},
                                                 {QStringLiteral("keys"), pass.keysInDatabase},
                                                 {QStringLiteral("scanned"), pass.scanned},
                                                 {QStringLiteral("sampled"), pass.sampled},
                                                 {QStringLiteral("sample_size"), pass.sampleSize},
                                                 {QStringLiteral("limiters"), found},
                                                 {QStringLiteral("shown"), shown},
                                                 {QStringLiteral("interval_ms"), double(pass.intervalUs) / 1000},
                                                 {QStringLiteral("now_us"), pass.nowUs},
                                                 {QStringLiteral("cancelled"), pass.cancelled},
                                                 {QStringLiteral("masters"), masters}}}};
}

void printTable(Cli &cli, const HotPass &pass, HotOrder order, qint64 found, bool cluster)
{
    QTextStream &out = cli.out();
    out << "top by " << hotOrderName(order) << " at "
        << QDateTime::fromMSecsSinceEpoch(pass.nowUs / 1000, Qt::UTC).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss 'UTC'")) << " · "
        << found << (found == 1 ? " limiter" : " limiters") << " in " << pass.keysInDatabase << " keys";
    if (pass.sampled)
        out << " (a sample: the first " << pass.sampleSize << " keys scanned)";
    out << " · rates over " << formatDurationUs(pass.intervalUs) << (pass.cancelled ? " · interrupted" : "") << '\n';
    const QString dash = QStringLiteral("-");
    auto line = [&](const QString &key, const QString &algo, const QString &rate, const QString &used, const QString &limit,
                    const QString &fill, const QString &master) {
        out << key.leftJustified(40) << ' ' << algo.leftJustified(26) << ' ' << rate.rightJustified(10) << ' ' << used.rightJustified(10)
            << ' ' << limit.rightJustified(10) << ' ' << fill.rightJustified(7);
        if (cluster)
            out << "  " << master;
        out << '\n';
    };
    if (pass.limiters.empty()) {
        out << (order == HotOrder::DenyingNow ? "no limiter is denying now\n" : "no limiter found\n");
    } else {
        line(QStringLiteral("KEY"), QStringLiteral("ALGORITHM"), QStringLiteral("RATE/S"), QStringLiteral("USED"), QStringLiteral("LIMIT"),
             QStringLiteral("FILL"), QStringLiteral("MASTER"));
        for (const HotLimiter &l : pass.limiters) {
            const auto rate = l.rate();
            const auto fill = l.fill();
            QString algo = l.spec ? algorithmName(l.spec->algorithm) : l.kind.label();
            if (l.denyingNow())
                algo += QStringLiteral(" !");
            line(displayKey(l.key), algo, rate ? number(*rate, *rate < 10 ? 2 : 0) : dash,
                 l.usage ? QString::number(l.usage->usedNow) : dash, l.usage ? QString::number(l.usage->decision.limit) : dash,
                 fill ? number(*fill * 100, 0) + QLatin1Char('%') : dash, l.master);
        }
    }
    if (cluster || pass.masters.size() > 1) {
        out << '\n'
            << QStringLiteral("MASTER").leftJustified(24) << QStringLiteral("KEYS").rightJustified(12)
            << QStringLiteral("LIMITERS").rightJustified(10) << QStringLiteral("RATE/S").rightJustified(12)
            << QStringLiteral("DENYING").rightJustified(9) << '\n';
        for (const HotMaster &m : pass.masters)
            out << m.address.leftJustified(24) << QString::number(m.keys).rightJustified(12)
                << QString::number(m.limiters).rightJustified(10) << number(m.rate, 0).rightJustified(12)
                << QString::number(m.denying).rightJustified(9) << '\n';
    }
    out.flush();
}

int runTop(Cli &cli)
{
    HotOptions options;
    if (cli.args().isSet(kMatch)) {
        options.match = cli.bytes(cli.args().value(kMatch));
        requireWellFormedGlob(options.match, QStringLiteral("--match"));
    }
    const HotOrder order = parseHotOrder(cli.args().isSet(kBy) ? cli.args().value(kBy) : QStringLiteral("rate"));
    const qint64 max = cli.integerOption(QStringLiteral("max"), 1, 1000000, 20);
    options.intervalUs = cli.durationOptionUs(QStringLiteral("interval"), 1000000);
    if (options.intervalUs < 1000 || options.intervalUs > 3600LL * 1000000)
        throw UsageError(QStringLiteral("--interval must be between 1ms and 1h"));
    options.sampleAbove = cli.integerOption(QStringLiteral("sample"), 1, 1000000000, 200000);
    if (cli.args().isSet(kNow))
        options.nowUs = cli.integerOption(QStringLiteral("now-us"), 0, kMaxNowUs);
    options.ns = cli.ns().bytes();
    Connection &c = cli.connection();
    options.policies = cli.policies();
    // Ranked by rate, only the limiters shown are peeked (fill, denying): the others need not be.
    options.readUsage = order != HotOrder::Rate;
    const bool watch = cli.args().isSet(kWatch);
    InterruptFlag interrupt;
    for (int round = 0;; ++round) {
        HotScanner scanner(options);
        HotPass pass = [&] {
            ProgressLine progress(cli, QStringLiteral("scanning"), interrupt);
            return scanner.run(c, {}, [&](qint64 scanned) { return progress.report(scanned); });
        }();
        const qint64 found = qint64(pass.limiters.size());
        HotScanner::rank(pass.limiters, order, max);
        if (!options.readUsage)
            scanner.readUsage(c, pass.limiters, pass.nowUs);
        if (cli.json()) {
            for (const HotLimiter &l : pass.limiters)
                cli.printJson(limiterJson(l));
            cli.printJson(passJson(pass, order, found, qint64(pass.limiters.size())));
        } else {
            if (watch && round > 0)
                cli.out() << '\n';
            printTable(cli, pass, order, found, c.isCluster());
        }
        if (pass.cancelled || interrupt.raised())
            return watch ? ExitOk : kExitInterrupted;
        if (!watch)
            return ExitOk;
    }
}

} // namespace

void registerTop(QList<Subcommand> &commands)
{
    commands.append({QStringLiteral("top"),
                     QStringLiteral("top [--by rate|fill|denied-now] [--max N] [--interval D] [--sample N] [--match GLOB] [--watch]"),
                     QStringLiteral("The limiters taking the most admitted requests now, the fullest, or those denying now:\n"
                                    "one bounded pass (SCAN + pipelined reads), sampled above --sample keys. Read-only."),
                     {kBy, kMax, kInterval, kSample, kMatch, kWatch, kNow},
                     false,
                     runTop});
}

} // namespace ratescope::cli
