// The Monitor tab at work: the console's CPU (getrusage of the whole process, GUI and worker
// threads; the GUI thread alone beside it) with 100 pinned keys of all five algorithms read
// at 4 Hz for 60 s while five of them get traffic, against the same page
// paused for the reference; and the monitor's memory once ten minutes of ticks have filled
// every ring. Those ten minutes are driven quickly on an explicit clock (2,400 ticks of
// 250 ms, each a real round trip with traffic at those times), and the live minute that
// follows continues that clock, drawing full five-minute lines as a console open for a while does.
//
//   bench_monitor [seconds=60] [keys=100] [fill minutes=10]
#include "redis/connection.h"
#include "limiters/limiter.h"
#include "limiters/limiterscript.h"
#include "monitorpage.h"
#include "admin/policy.h"
#include "redisclient.h"
#include "samplering.h"
#include "redis/sandboxserver.h"

#include <QApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>
#include <QTest>
#include <QTimer>

#include <cstdio>
#include <malloc.h>
#include <memory>
#include <sys/resource.h>
#include <unistd.h>

using namespace ratescope;
using namespace ratescope::ui;

namespace {

double cpuSeconds(int who)
{
    rusage u{};
    getrusage(who, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

qint64 rss()
{
    QFile f(QStringLiteral("/proc/self/statm"));
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    return f.readAll().split(' ').value(1).toLongLong() * sysconf(_SC_PAGESIZE);
}

qint64 heapInUse()
{
    const struct mallinfo2 m = mallinfo2();
    return qint64(m.uordblks + m.hblkhd);
}

void settle(MonitorPage &page)
{
    for (int i = 0; i < 100000 && page.isBusy(); ++i)
        QTest::qWait(1);
}

struct CpuShare {
    double process = 0, guiThread = 0, seconds = 0;
    qint64 ticks = 0, skipped = 0;
};

CpuShare measure(MonitorPage &page, int seconds)
{
    const qint64 ticks0 = page.ticksSent(), skipped0 = page.ticksSkipped();
    const double p0 = cpuSeconds(RUSAGE_SELF), g0 = cpuSeconds(RUSAGE_THREAD);
    QElapsedTimer wall;
    wall.start();
    QTest::qWait(seconds * 1000);
    CpuShare s;
    s.seconds = double(wall.nsecsElapsed()) / 1e9;
    s.process = (cpuSeconds(RUSAGE_SELF) - p0) / s.seconds;
    s.guiThread = (cpuSeconds(RUSAGE_THREAD) - g0) / s.seconds;
    s.ticks = page.ticksSent() - ticks0;
    s.skipped = page.ticksSkipped() - skipped0;
    return s;
}

} // namespace

int main(int argc, char **argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    const int seconds = argc > 1 ? std::max(5, atoi(argv[1])) : 60;
    const int keys = argc > 2 ? std::max(5, atoi(argv[2])) : 100;
    constexpr qint64 kTickUs = 250000;

    SandboxServer server;
    server.start();
    Connection c(server.options());
    PolicyStore store(c, QStringLiteral("ratescope:"));
    std::vector<std::pair<QByteArray, LimitSpec>> pinned;
    for (Algorithm a : kAllAlgorithms) {
        Policy p;
        p.name = algorithmName(a);
        p.match = "bench:" + p.name.toUtf8() + ":*";
        p.spec = {a, 100, 60LL * 1000000, 1};
        store.set(p, 0, QStringLiteral("bench"));
    }
    for (int i = 0; i < keys; ++i) {
        const Algorithm a = kAllAlgorithms[i % 5];
        pinned.push_back({"bench:" + algorithmName(a).toUtf8() + ":client" + QByteArray::number(i), {a, 100, 60LL * 1000000, 1}});
    }

    RedisClient client(server.options());
    client.open();
    MonitorPage page;
    page.resize(1280, 800);
    page.show();
    const qint64 rssBefore = rss(), heapBefore = heapInUse();

    // Ten minutes of 250 ms ticks on an explicit clock ending now, with traffic at those
    // times (a request per key every ~2 s): every ring full.
    const qint64 endUs = QDateTime::currentMSecsSinceEpoch() * 1000;
    const int fillMinutes = argc > 3 ? std::clamp(atoi(argv[3]), 1, 10) : 10; // fewer: quicker runs while tuning
    const int fillTicks = int(fillMinutes * 60LL * 1000000 / kTickUs);
    qint64 clockUs = endUs - fillTicks * kTickUs;
    page.setClock([&clockUs] { return clockUs; });
    page.setAutoTick(false);
    page.setClient(&client, "ratescope:");
    for (const auto &[key, spec] : pinned)
        page.pin(key);
    settle(page);
    page.hide(); // nothing to paint while the clock races: the live minute is what is measured
    QElapsedTimer fill;
    fill.start();
    for (int t = 0; t < fillTicks; ++t) {
        clockUs += kTickUs;
        std::vector<Command> traffic;
        for (size_t k = size_t(t % 8); k < pinned.size(); k += 8)
            traffic.push_back(LimiterScript::forAlgorithm(pinned[k].second.algorithm)
                                  .command(pinned[k].first, Limiter::arguments(pinned[k].first, pinned[k].second, clockUs, false), false));
        if (t == 0)
            for (Algorithm a : kAllAlgorithms)
                LimiterScript::forAlgorithm(a).load(c);
        c.pipeline(traffic);
        page.tickNow();
        settle(page);
    }
    const double fillSeconds = double(fill.nsecsElapsed()) / 1e9;
    const size_t ringBytes = page.historyBytes();
    const qint64 rssFull = rss(), heapFull = heapInUse();

    // Live: 4 Hz on the page's timer, the page shown. The clock goes on from the end of the
    // ten filled minutes in real time (the fill took longer than ten minutes' worth of
    // nothing), so the five-minute view is full of lines; this process sends the traffic of
    // five keys at that clock (20 requests/s, counted in its CPU: a fraction of a percent).
    QElapsedTimer liveClock;
    liveClock.start();
    const qint64 fillEndUs = clockUs;
    page.setClock([&liveClock, fillEndUs] { return fillEndUs + liveClock.nsecsElapsed() / 1000; });
    page.show();
    page.setAutoTick(true);
    page.setIntervalMs(250);
    QTimer traffic;
    int sent = 0;
    QObject::connect(&traffic, &QTimer::timeout, [&] {
        const qint64 at = fillEndUs + liveClock.nsecsElapsed() / 1000;
        const auto &[key, spec] = pinned[size_t(sent++ % 5)];
        Limiter(c).check(key, spec, at);
    });
    traffic.start(50);
    QTest::qWait(1000); // past the first tick
    const CpuShare live = measure(page, seconds);
    const qint64 trips = page.roundTrips();

    // Reference: the same page and client, paused (heartbeat and event loop only).
    page.setPaused(true);
    QTest::qWait(500);
    const CpuShare paused = measure(page, std::max(5, seconds / 4));
    traffic.stop();
    page.grab().save(QStringLiteral("/tmp/monitor-bench.png"));

    std::printf("monitor: %d pinned keys (all five algorithms), 4 Hz, page shown at 1280x800 (offscreen)\n", keys);
    std::printf(
        "  live %.1f s: process CPU %.1f %% of one core (GUI thread %.1f %%), %lld ticks (%.2f/s), %lld skipped, %lld round trips in all\n",
        live.seconds, 100 * live.process, 100 * live.guiThread, static_cast<long long>(live.ticks), double(live.ticks) / live.seconds,
        static_cast<long long>(live.skipped), static_cast<long long>(trips));
    std::printf("  reference, same page paused %.1f s: process CPU %.1f %% (GUI thread %.1f %%); live / paused = %.1fx\n", paused.seconds,
                100 * paused.process, 100 * paused.guiThread, paused.process > 0 ? live.process / paused.process : 0.0);
    std::printf("  target: under 15 %% of one core -> %s\n", live.process < 0.15 ? "met" : "NOT met");
    std::printf("memory after %d minutes of ticks (%d ticks of 250 ms on an explicit clock, driven in %.1f s; rings %s):\n", fillMinutes,
                fillTicks, fillSeconds, fillMinutes == 10 ? "full" : "not full yet");
    std::printf("  rings: %.2f MiB (%zu bytes per key, %zu samples of %zu bytes)\n", double(ringBytes) / 1048576.0,
                ringBytes / size_t(keys), size_t(MonitorPage::kHistoryUs / kTickUs) + 2, sizeof(MonitorSample));
    std::printf("  heap in use +%.1f MiB, RSS +%.1f MiB since before pinning (rings, chart series, legend)\n",
                double(heapFull - heapBefore) / 1048576.0, double(rssFull - rssBefore) / 1048576.0);
    std::printf("  after the live minute: rings %.2f MiB (unchanged: bounded)\n", double(page.historyBytes()) / 1048576.0);
    return 0;
}
