// `top` on a large keyspace: keys per second for a full pass ranked by rate (SCAN,
// classification, the two sweeps, then peeks of the 20 shown), the same with the default sample
// of 200,000 keys, beside a bare SCAN pass and the key scanner's scan+classify over the same
// server; and the memory the pass holds.
//
//   bench_top [keys=1000000]
#include "redis/connection.h"
#include "load/hotlimiters.h"
#include "keys/keyscanner.h"
#include "admin/policy.h"
#include "redis/sandboxserver.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>

#include <cstdio>
#include <sys/resource.h>
#include <unistd.h>

using namespace ratescope;

namespace {

// CPU seconds this process has used.
double clientCpu()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// CPU seconds the server has used (INFO cpu).
double serverCpu(Connection &c)
{
    double total = 0;
    for (const QByteArray &line : c.command({"INFO", "cpu"}).bytes().split('\n'))
        if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:"))
            total += line.mid(line.indexOf(':') + 1).trimmed().toDouble();
    return total;
}

qint64 peakRss()
{
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    for (const QByteArray &line : f.readAll().split('\n'))
        if (line.startsWith("VmHWM:"))
            return line.mid(6).trimmed().split(' ').first().toLongLong() * 1024;
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const qint64 total = argc > 1 ? std::max(1000LL, atoll(argv[1])) : 1000000;
    SandboxServer server;
    server.start();
    ConnectionOptions options = server.options();
    options.commandTimeoutMs = 60000;
    Connection c(options);

    // A mixed keyspace: our logs and limiter hashes, counter windows, application keys.
    const qint64 nowS = QDateTime::currentSecsSinceEpoch();
    const QByteArray windowId = QByteArray::number(nowS / 60);
    const QByteArray us = QByteArray::number(nowS * 1000000);
    QElapsedTimer fill;
    fill.start();
    std::vector<Command> batch;
    for (qint64 i = 0; i < total; ++i) {
        const QByteArray n = QByteArray::number(i);
        switch (i % 5) {
        case 0:
            batch.push_back({"ZADD", "svc:log:" + n, us, "11"});
            break;
        case 1:
            batch.push_back({"HSET", "svc:fw:" + n, "w", windowId, "n", "3"});
            break;
        case 2:
            batch.push_back({"HSET", "svc:sc:" + n, "w", windowId, "c", "3", "p", "2"});
            break;
        case 3:
            batch.push_back({"SET", "svc:cnt:" + n + ":" + windowId, "7"});
            break;
        default:
            batch.push_back({"SET", "session:s" + n, "x"});
            break;
        }
        if (batch.size() == 10000 || i == total - 1) {
            c.pipeline(batch);
            batch.clear();
        }
    }
    std::printf("created %lld keys in %.1f s\n", total, double(fill.elapsed()) / 1000);
    // Limits for half of the limiters: those get peeked as well.
    Policy fw;
    fw.name = QStringLiteral("fw");
    fw.match = "svc:fw:*";
    fw.spec = {Algorithm::FixedWindow, 100, 60000000, 1};
    Policy log = fw;
    log.name = QStringLiteral("log");
    log.match = "svc:log:*";
    log.spec.algorithm = Algorithm::SlidingLog;
    const std::vector<Policy> policies{fw, log};

    QElapsedTimer t;
    t.start();
    qint64 seen = 0;
    QByteArray cursor = "0";
    do {
        const Reply page = c.command({"SCAN", cursor, "COUNT", "1000"});
        cursor = page[0].bytes();
        seen += qint64(page[1].size());
    } while (cursor != "0");
    const double bareSeconds = double(t.nsecsElapsed()) / 1e9;

    KeyScanner::Options so;
    so.policies = policies;
    KeyScanner scanner(c, so);
    t.restart();
    qint64 classified = 0;
    while (!scanner.atEnd())
        classified += qint64(scanner.nextPage().size());
    const double classifySeconds = double(t.nsecsElapsed()) / 1e9;

    const qint64 rssBefore = peakRss();
    for (const int run : {0, 1, 2}) {
        const bool whole = run < 2;
        HotOptions o;
        if (run != 1)
            o.policies = policies;
        o.intervalUs = 1000;
        o.sampleAbove = whole ? total + 1 : 200000;
        o.readUsage = false; // as `top --by rate`: only the 20 shown are peeked
        const double client0 = clientCpu(), server0 = serverCpu(c);
        t.restart();
        HotScanner hot(o);
        while (!hot.scan(c)) {
        }
        const double scanS = double(t.nsecsElapsed()) / 1e9, scanCpu = clientCpu() - client0, scanServer = serverCpu(c) - server0;
        hot.firstRead(c);
        const double firstS = double(t.nsecsElapsed()) / 1e9, firstCpu = clientCpu() - client0 - scanCpu,
                     firstServer = serverCpu(c) - server0 - scanServer;
        HotPass pass = hot.secondRead(c);
        const double secondS = double(t.nsecsElapsed()) / 1e9, secondCpu = clientCpu() - client0 - scanCpu - firstCpu,
                     secondServer = serverCpu(c) - server0 - scanServer - firstServer;
        HotScanner::rank(pass.limiters, HotOrder::Rate, 20);
        hot.readUsage(c, pass.limiters, pass.nowUs);
        const double seconds = double(t.nsecsElapsed()) / 1e9;
        const double client = clientCpu() - client0, serverSide = serverCpu(c) - server0;
        std::printf("  CPU: client %.2f s, server %.2f s (the server alone allows at most %.0f keys/s)\n", client, serverSide,
                    double(pass.scanned) / serverSide);
        std::printf("  types: %lld of %lld keys asked with TYPE, the others guessed by shape (%lld wrongly, then asked)\n", pass.typed,
                    pass.scanned, pass.guessedWrong);
        std::printf("  phases (CPU s: client/server): scan+classify %.2f s (%.2f/%.2f), first read %.2f s (%.2f/%.2f), second read %.2f s "
                    "(%.2f/%.2f), rank+peek %.2f s\n",
                    scanS, scanCpu, scanServer, firstS - scanS, firstCpu, firstServer, secondS - firstS, secondCpu, secondServer,
                    seconds - secondS);
        const char *what[] = {"top --by rate, full pass", "  the same, no policies", "top --by rate, default sample"};
        std::printf("%-30s %6.2f s   %9.0f keys/s   (%lld scanned, %s)\n", what[run], seconds, double(pass.scanned) / seconds, pass.scanned,
                    pass.sampled ? qPrintable(QStringLiteral("a sample of %1").arg(pass.sampleSize)) : "every key");
    }
    std::printf("%-30s %6.2f s   %9.0f keys/s   (%lld keys)\n", "scan+classify (key scanner)", classifySeconds,
                double(classified) / classifySeconds, classified);
    std::printf("%-30s %6.2f s   %9.0f keys/s   (%lld keys)\n", "bare SCAN (reference)", bareSeconds, double(seen) / bareSeconds, seen);
    std::printf("peak RSS %.1f MB (%.1f MB before the passes)\n", double(peakRss()) / 1e6, double(rssBefore) / 1e6);
    return 0;
}
