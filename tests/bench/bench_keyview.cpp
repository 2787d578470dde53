// Opening a sliding log's tab: time from constructing the log view and its first setContext to
// its first drawn chart, for a 10,000-entry and a 1,000,000-entry log on loopback (the second
// drawn from server-side bucket counts). The reference beside it: one bare ZCOUNT + ZRANGE
// BYSCORE of the same window on the same server, over a plain blocking connection.
//
//   bench_keyview [runs=7]
#include "redis/connection.h"
#include "logview.h"
#include "redisclient.h"
#include "redis/sandboxserver.h"

#include <QApplication>
#include <QElapsedTimer>

#include <algorithm>
#include <cstdio>
#include <functional>

using namespace ratescope;
using namespace ratescope::ui;

namespace {

constexpr qint64 kSecond = 1000000;
constexpr qint64 kWindowUs = 60 * kSecond;

bool spin(const std::function<bool()> &done, int timeoutMs)
{
    QElapsedTimer t;
    t.start();
    while (!done() && t.elapsed() < timeoutMs)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
    return done();
}

// Entries spread over the last window, ms scores and "<ms>-<n>" members.
void fill(Connection &c, const QByteArray &key, qint64 entries, qint64 nowUs)
{
    std::vector<Command> batch;
    for (qint64 i = 0; i < entries; i += 1000) {
        Command z{"ZADD", key};
        for (qint64 j = i; j < std::min(entries, i + 1000); ++j) {
            const qint64 t = nowUs - kWindowUs + 1 + (j * (kWindowUs - 1)) / entries;
            z.push_back(QByteArray::number(t / 1000) + "." + QByteArray::number(t % 1000).rightJustified(3, '0'));
            z.push_back(QByteArray::number(t / 1000) + "-" + QByteArray::number(j));
        }
        batch.push_back(std::move(z));
        if (batch.size() == 50) {
            c.pipeline(batch);
            batch.clear();
        }
    }
    c.pipeline(batch);
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    const int runs = argc > 1 ? std::max(1, atoi(argv[1])) : 7;

    SandboxServer server;
    server.start();
    Connection c(server.options());
    const qint64 now = c.command({"TIME"})[0].bytes().toLongLong() * kSecond;
    const LimitSpec spec{Algorithm::SlidingLog, 2000000, kWindowUs, 1};

    RedisClient client(server.options());
    client.open();
    if (!spin([&] { return client.state() == RedisClient::State::Connected; }, 10000)) {
        std::fprintf(stderr, "no connection\n");
        return 1;
    }

    std::printf("%-10s %9s %10s %10s %10s %13s %7s %7s\n", "log", "bucketed", "built ms", "loaded ms", "drawn ms", "reference ms", "ratio",
                "read");
    for (qint64 entries : {qint64(10000), qint64(1000000)}) {
        const QByteArray key = "bench:log:" + QByteArray::number(entries);
        fill(c, key, entries, now);
        std::vector<double> builtMs, loadedMs, drawnMs, refMs;
        bool bucketed = false;
        qint64 read = 0;
        for (int run = 0; run < runs; ++run) {
            QElapsedTimer t;
            t.start();
            auto *view = new LogView(&client, key);
            view->resize(1280, 800);
            view->show();
            builtMs.push_back(double(t.nsecsElapsed()) / 1e6);
            view->setContext(spec, ScoreUnit::Milliseconds, now);
            if (!spin([&] { return view->isLoaded(); }, 30000)) {
                std::fprintf(stderr, "view did not load: %s\n", qPrintable(view->statusText()));
                return 1;
            }
            loadedMs.push_back(double(t.nsecsElapsed()) / 1e6);
            view->grab(); // the chart painted once, as the screen would
            drawnMs.push_back(double(t.nsecsElapsed()) / 1e6);
            bucketed = view->isBucketed();
            read = view->entriesRead();
            delete view;

            // The floor: the same window's count and entries (up to the view's cap) read bare.
            const QByteArray lo = scoreBoundText(scoreBound(now - kWindowUs + 1, ScoreUnit::Milliseconds));
            const QByteArray hi = "(" + scoreBoundText(scoreBound(now + 1, ScoreUnit::Milliseconds));
            QElapsedTimer r;
            r.start();
            c.command({"ZCOUNT", key, lo, hi});
            c.command({"ZRANGE", key, lo, hi, "BYSCORE", "LIMIT", "0", QByteArray::number(LogView::kEntryCap), "WITHSCORES"});
            refMs.push_back(double(r.nsecsElapsed()) / 1e6);
        }
        const double drawn = median(drawnMs), ref = median(refMs);
        std::printf("%-10lld %9s %10.1f %10.1f %10.1f %13.2f %7.1f %7lld\n", entries, bucketed ? "yes" : "no", median(builtMs),
                    median(loadedMs), drawn, ref, drawn / ref, read);
        std::fflush(stdout);
    }
    std::printf("(median of %d runs; built = view constructed and shown, loaded = first read drawn into the series, drawn = painted once;\n"
                " ratio = drawn / reference; read = entries transferred for the chart and the first table page)\n",
                runs);
    return 0;
}
