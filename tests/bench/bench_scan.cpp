// Scan and classify a large keyspace: time to the first page and keys per second for a full
// pass, beside a bare SCAN pass (no TYPE, no classification) over the same server.
#include "redis/connection.h"
#include "keys/keyscanner.h"
#include "redis/sandboxserver.h"

#include <cstdio>
#include <QCoreApplication>
#include <QElapsedTimer>

using namespace ratescope;

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const qint64 total = argc > 1 ? std::max(1000LL, atoll(argv[1])) : 1000000;
    SandboxServer server;
    server.start();
    ConnectionOptions options = server.options();
    options.commandTimeoutMs = 60000;
    Connection c(options);

    // A mixed keyspace: logs, limiter hashes, counter windows, and unrelated strings.
    const qint64 nowS = QDateTime::currentSecsSinceEpoch();
    const QByteArray windowId = QByteArray::number(nowS / 60);
    const QByteArray ms = QByteArray::number(nowS * 1000);
    QElapsedTimer fill;
    fill.start();
    std::vector<Command> batch;
    for (qint64 i = 0; i < total; ++i) {
        const QByteArray n = QByteArray::number(i);
        switch (i % 4) {
        case 0:
            batch.push_back({"ZADD", "svc:log:" + n, ms, ms + "-0.5"});
            break;
        case 1:
            batch.push_back({"HSET", "svc:fw:" + n, "w", windowId, "n", "3"});
            break;
        case 2:
            batch.push_back({"SET", "svc:cnt:" + n + ":" + windowId, "7"});
            break;
        default:
            batch.push_back({"SET", "session:" + n, "x"});
            break;
        }
        if (batch.size() == 10000 || i == total - 1) {
            c.pipeline(batch);
            batch.clear();
        }
    }
    std::printf("created %lld keys in %.1f s\n", total, double(fill.elapsed()) / 1000);

    // Reference: SCAN alone.
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

    for (bool memory : {false, true}) {
        KeyScanner::Options o;
        o.count = 1000;
        o.memory = memory;
        KeyScanner scanner(c, o);
        t.restart();
        qint64 classified = 0, limiters = 0;
        double firstPageMs = -1;
        while (!scanner.atEnd()) {
            const auto page = scanner.nextPage();
            if (firstPageMs < 0 && !page.empty())
                firstPageMs = double(t.nsecsElapsed()) / 1e6;
            classified += qint64(page.size());
            for (const KeyRecord &r : page)
                limiters += r.kind.isLimiter() ? 1 : 0;
        }
        const double seconds = double(t.nsecsElapsed()) / 1e9;
        std::printf("%-26s first page %6.1f ms   full pass %6.2f s   %9.0f keys/s   (%lld keys, %lld limiters)\n",
                    memory ? "scan+classify+MEMORY USAGE" : "scan+classify", firstPageMs, seconds, double(classified) / seconds, classified,
                    limiters);
    }
    std::printf("%-26s %27s %6.2f s   %9.0f keys/s   (%lld keys)\n", "bare SCAN (reference)", "", bareSeconds, double(seen) / bareSeconds,
                seen);
    return 0;
}
