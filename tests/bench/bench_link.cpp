// ratescope-cli and the console over a slow link: round trips and time of check, peek and inspect, and keys and
// top on a large keyspace, on loopback and through a delay proxy (support/delayproxy.h, the same
// delay each way), beside a bare SCAN through the same proxy as the reference. Prints a table;
// asserts nothing.
//
//   bench_link [KEYS] [DELAY_MS_EACH_WAY]     (default 100000 keys, 25 ms each way: a 50 ms link)
//
// Times are the CLI's whole run, process start included (the first row says how long a run
// that sends nothing takes); round trips are the proxy's count, the connection's included.
#include "builtpaths.h"
#include "delayproxy.h"

#include "redis/connection.h"
#include "redis/sandboxserver.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QProcess>
#include <QRegularExpression>
#include <QThread>
#include <QProcessEnvironment>
#include <QFile>
#include <QDir>

#include <cstdio>
#include <cstdlib>

using namespace ratescope;
using namespace ratescope::test;

namespace {

struct Run {
    double seconds = 0;
    int roundTrips = 0;
    int connections = 0;
    int exitCode = -1;
    double listingSeconds = 0; // the console's: its keys panel's listing alone
};

// A finished run of `program`: its time since t started and its exit, what it said on
// standard error when it failed.
Run finishedRun(QProcess &p, const QElapsedTimer &t, const char *program, const QStringList &args)
{
    Run r;
    r.seconds = double(t.nsecsElapsed()) / 1e9;
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    if (r.exitCode != 0)
        std::fprintf(stderr, "%s %s: exit %d: %s\n", program, qPrintable(args.join(QLatin1Char(' '))), r.exitCode,
                     p.readAllStandardError().constData());
    return r;
}

// The proxy's counts added to the run, once the last of `closed` connections is closed (-1: once
// nothing is queued); with BENCH_ROUNDS set, what each round asked, to see where they go.
void countLinks(DelayProxy &proxy, Run &r, int closed)
{
    proxy.waitQuiet(10000, closed);
    for (const LinkStats &s : proxy.connections()) {
        r.roundTrips += s.roundTrips;
        ++r.connections;
        if (qEnvironmentVariableIsSet("BENCH_ROUNDS"))
            for (const QByteArray &round : s.rounds)
                std::fprintf(stderr, "  round: %s\n", round.constData());
    }
}

Run runCli(DelayProxy *proxy, const ConnectionOptions &server, const QStringList &args)
{
    QStringList all = args;
    if (proxy) {
        proxy->reset();
        all = QStringList{QStringLiteral("--url"), proxy->url(server)} + args;
    }
    QProcess p;
    p.setProcessChannelMode(QProcess::SeparateChannels);

    QElapsedTimer t;
    t.start();
    p.start(BuiltPaths::cli(), all);
    p.waitForFinished(600000);
    Run r = finishedRun(p, t, "ratescope-cli", args);
    if (proxy)
        countLinks(*proxy, r, 1);
    return r;
}

// The console (offscreen) through the proxy: from start to its first picture of the key
// opened (--screenshot: rendered once the data has loaded, then it exits), and, with idleMs,
// the round trips it makes in idleMs once it has been up 3 s (--screenshot-after keeps it
// running meanwhile).
Run runConsole(DelayProxy &proxy, const ConnectionOptions &server, const QByteArray &key, int idleMs = 0, int *idleRounds = nullptr)
{
    proxy.reset();
    const QString shot = QDir::temp().filePath(QStringLiteral("bench_link_console.png"));
    QStringList args{QStringLiteral("--url"), proxy.url(server)};
    if (!key.isEmpty())
        args << QStringLiteral("--open-key") << QString::fromUtf8(key);
    if (idleMs > 0)
        args << QStringLiteral("--screenshot-after") << QStringLiteral("%1ms").arg(3000 + idleMs + 1000);
    args << QStringLiteral("--screenshot") << shot;
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    p.setProcessEnvironment(env);
    p.setProcessChannelMode(QProcess::SeparateChannels);

    QElapsedTimer t;
    t.start();
    p.start(BuiltPaths::gui(), args);
    if (idleMs > 0 && idleRounds) {
        QThread::msleep(3000);
        const int from = proxy.total().roundTrips;
        QThread::msleep(ulong(idleMs));
        *idleRounds = proxy.total().roundTrips - from;
    }
    p.waitForFinished(120000);
    Run r = finishedRun(p, t, "ratescope", args);
    // "Screenshot: FILE (N keys listed in S s)": the listing's own time, start-up left out
    static const QRegularExpression listed(QStringLiteral(" keys listed in ([0-9.]+) s\\)"));
    if (const auto m = listed.match(QString::fromUtf8(p.readAllStandardOutput())); m.hasMatch())
        r.listingSeconds = m.captured(1).toDouble();
    countLinks(proxy, r, -1);
    QFile::remove(shot);
    return r;
}

// SCAN COUNT n over the whole keyspace through the proxy: time and round trips.
Run bareScan(DelayProxy &proxy, const ConnectionOptions &server, int count, qint64 *seen)
{
    proxy.reset();
    ConnectionOptions o = proxy.options(server);
    o.clientName.clear(); // nothing before the first SCAN
    o.commandTimeoutMs = 60000;
    QElapsedTimer t;
    t.start();
    Connection c(o);
    QByteArray cursor = "0";
    *seen = 0;
    do {
        const Reply page = c.command({"SCAN", cursor, "COUNT", QByteArray::number(count)});
        cursor = page[0].bytes();
        *seen += qint64(page[1].size());
    } while (cursor != "0");
    Run r;
    r.seconds = double(t.nsecsElapsed()) / 1e9;
    c.disconnect();
    proxy.waitQuiet(10000, 1);
    r.roundTrips = proxy.total().roundTrips;
    r.connections = 1;
    r.exitCode = 0;
    return r;
}

void row(const char *what, const Run &loop, const Run &slow, const QString &note = {})
{
    std::printf("| %-34s | %8.3f s | %8.3f s | %5d / %-5d | %s\n", what, loop.seconds, slow.seconds, loop.roundTrips, slow.roundTrips,
                qPrintable(note));
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const qint64 total = argc > 1 ? std::max(1000LL, std::atoll(argv[1])) : 100000;
    const int delayMs = argc > 2 ? std::max(0, std::atoi(argv[2])) : 25;

    SandboxServer server;
    server.start();
    ConnectionOptions options = server.options();
    options.commandTimeoutMs = 60000;
    DelayProxy loopback(server.port(), 0);
    DelayProxy slow(server.port(), delayMs);
    const QString url = server.url();

    // A small database: a policy with an override, a log and a bucket.
    auto cli = [&](const QStringList &args) { return runCli(nullptr, options, QStringList{QStringLiteral("--url"), url} + args); };
    cli({QStringLiteral("policy"), QStringLiteral("set"), QStringLiteral("api"), QStringLiteral("--match"), QStringLiteral("api:*"),
         QStringLiteral("--algo"), QStringLiteral("sliding-log"), QStringLiteral("--limit"), QStringLiteral("100"),
         QStringLiteral("--window"), QStringLiteral("1m")});
    cli({QStringLiteral("override"), QStringLiteral("set"), QStringLiteral("api:b"), QStringLiteral("--limit"), QStringLiteral("200"),
         QStringLiteral("--for"), QStringLiteral("1h")});
    for (int i = 0; i < 3; ++i)
        cli({QStringLiteral("check"), QStringLiteral("api:a")});

    std::printf("ratescope-cli through a delay proxy of %d ms each way (a %d ms link) and through the same proxy without delay "
                "(loopback)\n\n",
                delayMs, 2 * delayMs);
    std::printf("| %-34s | %-10s | %-10s | %-13s | %s\n", "what", "loopback", "slow link", "round trips", "notes");
    std::printf("|%s|%s|%s|%s|%s\n", QByteArray(36, '-').constData(), QByteArray(12, '-').constData(), QByteArray(12, '-').constData(),
                QByteArray(15, '-').constData(), "------");
    const Run start = runCli(nullptr, options, {QStringLiteral("--version")});
    std::printf("| %-34s | %8.3f s | %-10s | %-13s | sends nothing: the rest include it\n", "ratescope-cli --version", start.seconds, "",
                "");
    for (const auto &[what, args] : std::vector<std::pair<const char *, QStringList>>{
             {"check api:a (policy)", {QStringLiteral("check"), QStringLiteral("api:a")}},
             {"check api:b (override)", {QStringLiteral("check"), QStringLiteral("api:b")}},
             {"peek api:a", {QStringLiteral("peek"), QStringLiteral("api:a")}},
             {"inspect api:a", {QStringLiteral("inspect"), QStringLiteral("api:a")}},
         }) {
        const Run l = runCli(&loopback, options, args);
        const Run s = runCli(&slow, options, args);
        row(what, l, s);
    }

    if (!BuiltPaths::gui().isEmpty()) {
        const Run l = runConsole(loopback, options, "api:a");
        const Run s = runConsole(slow, options, "api:a");
        row("console: first picture of api:a", l, s,
            QStringLiteral("from start, the console's own start-up included; %1 connections").arg(s.connections));
        int idleLoop = 0, idleSlow = 0;
        const Run il = runConsole(loopback, options, "api:a", 10000, &idleLoop);
        const Run is = runConsole(slow, options, "api:a", 10000, &idleSlow);
        std::printf("| %-34s | %-10s | %-10s | %5d / %-5d | per second: %.1f / %.1f (the keys panel and the status poll beside it)\n",
                    "console idle, api:a open, 10 s", "", "", idleLoop, idleSlow, idleLoop / 10.0, idleSlow / 10.0);
        (void)il;
        (void)is;
    }

    // The large keyspace: fixed-window hashes (names that are no shards), first without a
    // policy (what keys and top classify), then under one (keys also reads each one's usage
    // with the limiter's script, as services would be answered).
    {
        Connection c(options);
        const QByteArray windowId = QByteArray::number(QDateTime::currentSecsSinceEpoch() / 60);
        std::vector<Command> batch;
        for (qint64 i = 0; i < total; ++i) {
            batch.push_back({"HSET", "bench:k" + QByteArray::number(i) + ":fw", "w", windowId, "n", "3"});
            if (batch.size() == 10000 || i == total - 1) {
                c.pipeline(batch);
                batch.clear();
            }
        }
    }
    qint64 seen1000 = 0, seen10000 = 0;
    const Run scan1000Loop = bareScan(loopback, options, 1000, &seen1000);
    const Run scan1000 = bareScan(slow, options, 1000, &seen1000);
    const Run scan10000Loop = bareScan(loopback, options, 10000, &seen10000);
    const Run scan10000 = bareScan(slow, options, 10000, &seen10000);
    auto ratio = [&](const Run &loop, const Run &slowRun) {
        return QStringLiteral("%1x / %2x the bare SCAN COUNT 10000")
            .arg(loop.seconds / scan10000Loop.seconds, 0, 'f', 1)
            .arg(slowRun.seconds / scan10000.seconds, 0, 'f', 2);
    };
    const QStringList keysArgs{QStringLiteral("--json"), QStringLiteral("keys"), QStringLiteral("--all")};
    const QStringList topArgs{QStringLiteral("top"), QStringLiteral("--max"), QStringLiteral("10")};
    const Run keysLoop = runCli(&loopback, options, keysArgs);
    const Run keysSlow = runCli(&slow, options, keysArgs);
    const Run topLoop = runCli(&loopback, options, topArgs);
    const Run topSlow = runCli(&slow, options, topArgs);
    row(qPrintable(QStringLiteral("keys --all, %1 keys").arg(total)), keysLoop, keysSlow, ratio(keysLoop, keysSlow));
    if (!BuiltPaths::gui().isEmpty()) {
        // The console started on its Overview: until every key is listed and the rows in view
        // have their columns (the picture is taken once it is settled).
        Run l = runConsole(loopback, options, {});
        Run s = runConsole(slow, options, {});
        row(qPrintable(QStringLiteral("console: start, list %1 keys").arg(total)), l, s,
            QStringLiteral("until the rows in view have their columns"));
        l.seconds = l.listingSeconds;
        s.seconds = s.listingSeconds;
        row(qPrintable(QStringLiteral("console: the listing alone")), l, s,
            ratio(l, s) + QStringLiteral(", from connecting to the last key listed"));
        // The same with a key view open beside the listing, refreshing (its reads and the
        // listing's SCAN calls share the connection's rounds).
        Run lk = runConsole(loopback, options, "api:a");
        Run sk = runConsole(slow, options, "api:a");
        lk.seconds = lk.listingSeconds;
        sk.seconds = sk.listingSeconds;
        row(qPrintable(QStringLiteral("console: the listing, api:a open")), lk, sk,
            ratio(lk, sk) + QStringLiteral(", the key view refreshing meanwhile"));
    }
    row(qPrintable(QStringLiteral("top, %1 keys").arg(total)), topLoop, topSlow, ratio(topLoop, topSlow));
    cli({QStringLiteral("policy"), QStringLiteral("set"), QStringLiteral("bench"), QStringLiteral("--match"), QStringLiteral("bench:*"),
         QStringLiteral("--algo"), QStringLiteral("fixed-window"), QStringLiteral("--limit"), QStringLiteral("100"),
         QStringLiteral("--window"), QStringLiteral("1m")});
    cli({QStringLiteral("check"), QStringLiteral("bench:k0:fw")}); // the script cached, as the services have it
    const Run usageLoop = runCli(&loopback, options, keysArgs);
    const Run usageSlow = runCli(&slow, options, keysArgs);
    row(qPrintable(QStringLiteral("keys --all, %1 keys, a policy").arg(total)), usageLoop, usageSlow, ratio(usageLoop, usageSlow));
    row("bare SCAN COUNT 1000", scan1000Loop, scan1000, QStringLiteral("%1 keys seen").arg(seen1000));
    row("bare SCAN COUNT 10000", scan10000Loop, scan10000, QStringLiteral("%1 keys seen").arg(seen10000));
    std::printf("\nround trips: the proxy's count (delayproxy.h), the connection's own included, summed over the "
                "command's connections; loopback / slow link.\n");
    return 0;
}
