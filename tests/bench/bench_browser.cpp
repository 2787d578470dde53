// The key browser on a million keys: time to the first rows, time for the whole keyspace,
// the longest GUI-thread stall meanwhile, how long the rows in view wait for their columns
// while the scan still runs (and a short read, as a monitor's poll makes, during the scan
// against the same read on an idle connection), and memory per key — of the model alone (fed the
// same names in SCAN-sized pages) and of the whole panel after a real scan — measured with
// mallinfo2() (in-use heap of the main arena plus mmapped blocks: where the GUI thread
// allocates) and, as a cross-check, the RSS delta. A bare SCAN pass is the reference floor.
//
//   bench_browser [keys=1000000] [shape=grouped|flat|wide]
//   grouped: rl:svc<0-7>:tenant<0-999>:user<n>  (1,000 groups of 1,000 keys)
//   flat:    user:<n>:minute                   (one group per key: the worst case for groups)
//   wide:    rl:wide:c<n>                       (one group of every key: the worst case for sorting)
#include "redis/connection.h"
#include "keybrowser.h"
#include "keytreemodel.h"
#include "redisclient.h"
#include "redis/sandboxserver.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QTimer>
#include <QTreeView>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <malloc.h>
#include <memory>
#include <unistd.h>
#include <unordered_map>

using namespace ratescope;
using namespace ratescope::ui;

namespace {

qint64 heapInUse()
{
    const struct mallinfo2 m = mallinfo2();
    return qint64(m.uordblks + m.hblkhd);
}

// CPU time of the calling thread, in milliseconds.
double threadCpuMs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

qint64 rss()
{
    QFile f(QStringLiteral("/proc/self/statm"));
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    return f.readAll().split(' ').value(1).toLongLong() * sysconf(_SC_PAGESIZE);
}

enum class Shape { Grouped, Flat, Wide };

QByteArray keyName(qint64 i, Shape shape)
{
    if (shape == Shape::Flat)
        return "user:" + QByteArray::number(i) + ":minute";
    if (shape == Shape::Wide)
        return "rl:wide:c" + QByteArray::number(i);
    return "rl:svc" + QByteArray::number(i % 8) + ":tenant" + QByteArray::number(i % 1000) + ":user" + QByteArray::number(i);
}

// Runs the event loop until done() or the deadline, asleep between events as the console's
// own loop is. (processEvents(flags, maxTime) never waits, whatever the flags: looping on it
// keeps a core busy, and took it from the listing this measures.)
bool spin(const std::function<bool()> &done, int timeoutMs)
{
    QElapsedTimer t;
    t.start();
    QTimer wake; // bounds each wait
    wake.start(20);
    while (!done() && t.elapsed() < timeoutMs)
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
    return done();
}

// Milliseconds at the given fraction (0..1) of the sorted samples.
double quantile(std::vector<double> samples, double q)
{
    if (samples.empty())
        return -1;
    std::sort(samples.begin(), samples.end());
    return samples[size_t(q * double(samples.size() - 1))];
}

// A short read every 50 ms through the client (what a key view or the monitor's poll makes),
// one at a time, timed from the request to its start on the worker (the wait for the worker)
// and to its answer on the GUI thread (what the view waits for).
class Poller : public QObject {
public:
    Poller(RedisClient *client, QByteArray key)
        : m_client(client)
        , m_key(std::move(key))
    {
        m_timer.setInterval(50);
        QObject::connect(&m_timer, &QTimer::timeout, this, [this] { poll(); });
    }
    void start(std::function<bool()> counts)
    {
        m_counts = std::move(counts);
        m_samples.clear();
        m_waits.clear();
        m_timer.start();
    }
    void stop() { m_timer.stop(); }
    const std::vector<double> &samples() const { return m_samples; }
    const std::vector<double> &waits() const { return m_waits; }

private:
    void poll()
    {
        if (m_inFlight)
            return;
        m_inFlight = true;
        const bool counts = m_counts();
        auto clock = std::make_shared<QElapsedTimer>();
        clock->start();
        m_client->request(
            this,
            [key = m_key, clock](Connection &c) {
                const double waited = double(clock->nsecsElapsed()) / 1e6;
                c.command({"GET", key});
                return waited;
            },
            [this, clock, counts](const Outcome<double> &o) {
                if (counts && m_counts() && o.ok()) {
                    m_samples.push_back(double(clock->nsecsElapsed()) / 1e6);
                    m_waits.push_back(o.value());
                }
                m_inFlight = false;
            });
    }

    RedisClient *m_client;
    QByteArray m_key;
    QTimer m_timer;
    std::function<bool()> m_counts;
    std::vector<double> m_samples, m_waits;
    bool m_inFlight = false;
};

} // namespace

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    const qint64 total = argc > 1 ? std::max(1000LL, atoll(argv[1])) : 1000000;
    const QByteArray shapeName = argc > 2 ? QByteArray(argv[2]) : QByteArray("grouped");
    const Shape shape = shapeName == "flat" ? Shape::Flat : shapeName == "wide" ? Shape::Wide : Shape::Grouped;

    SandboxServer server;
    server.start();
    ConnectionOptions options = server.options();
    options.commandTimeoutMs = 60000;
    QByteArrayList names;
    {
        Connection c(options);
        QElapsedTimer fill;
        fill.start();
        std::vector<Command> batch;
        for (qint64 i = 0; i < total; ++i) {
            batch.push_back({"SET", keyName(i, shape), "1"});
            if (batch.size() == 10000 || i == total - 1) {
                c.pipeline(batch);
                batch.clear();
            }
        }
        std::printf("%lld keys (%s) created in %.1f s\n", total, shapeName.constData(), double(fill.elapsed()) / 1000);

        // Reference: SCAN alone, the floor for any browser.
        QElapsedTimer t;
        t.start();
        QByteArray cursor = "0";
        do {
            const Reply page = c.command({"SCAN", cursor, "COUNT", "1000"});
            cursor = page[0].bytes();
            for (const Reply &k : page[1].elements())
                names << k.bytes();
        } while (cursor != "0");
        std::printf("bare SCAN pass (COUNT 1000):          %8.2f s  (%lld keys)\n", double(t.elapsed()) / 1000, qint64(names.size()));
    }

    // 1. The model alone, fed the scan's names in pages as the browser would.
    double modelPerKey = 0, modelSelfReported = 0;
    {
        const qint64 before = heapInUse();
        auto model = std::make_unique<KeyTreeModel>();
        model->clear(":");
        QElapsedTimer t;
        t.start();
        for (qsizetype at = 0; at < names.size(); at += 2000)
            model->addKeys(names.mid(at, 2000));
        const qint64 insertMs = t.elapsed();
        const qint64 after = heapInUse();
        modelPerKey = double(after - before) / double(model->keyCount());
        modelSelfReported = double(model->treeMemoryUsage()) / double(model->keyCount());
        std::printf("model alone: insert %lld keys          %8.2f s\n", model->keyCount(), double(insertMs) / 1000);
        std::printf("model alone: memory per key (mallinfo2) %7.1f B  (self-reported %.1f B)\n", modelPerKey, modelSelfReported);
    }
    const qint64 namesBytes = [&] {
        qint64 n = 0;
        for (const QByteArray &k : names)
            n += k.size();
        return n;
    }();
    std::printf("average key name:                      %8.1f B\n", double(namesBytes) / double(names.size()));
    names.clear();
    names.squeeze();
    malloc_trim(0);

    // 2. The whole panel: a real scan through the worker, shown in a window.
    RedisClient client(options);
    client.open();
    spin([&] { return client.state() == RedisClient::State::Connected; }, 10000);
    malloc_trim(0);
    const qint64 heapBefore = heapInUse(), rssBefore = rss();
    auto *browser = new KeyBrowser;
    browser->resize(1100, 700);
    browser->show();
    // The first paint (fonts, glyph caches) is the window's cost, not the scan's.
    QElapsedTimer warm;
    warm.start();
    spin([&] { return warm.elapsed() > 300; }, 1000);

    QElapsedTimer clock;
    qint64 firstRowsMs = -1, last = 0, worstStall = 0;
    // At the first rows the operator opens groups down to the first keys (rl > svc0 > tenant):
    // from then on the keys in view need their columns while the scan goes on.
    qint64 columnsMs = -1, scannedAtColumns = -1;
    bool openedKeys = false, scanningAtColumns = false;
    auto openFirstKeys = [&] {
        const KeyTreeModel *m = browser->model();
        QModelIndex row = m->index(0, 0);
        for (int depth = 0; depth < 8 && row.isValid(); ++depth) {
            if (!row.data(KeyTreeModel::IsGroupRole).toBool()) {
                openedKeys = true; // a key is in view
                return;
            }
            browser->view()->expand(row);
            row = m->index(0, 0, row);
        }
    };
    auto checkColumns = [&] {
        if (!openedKeys || columnsMs >= 0)
            return;
        const std::vector<quint32> visible = browser->visibleKeyIds();
        if (visible.empty())
            return;
        for (quint32 id : visible)
            if (!browser->model()->details(id))
                return;
        columnsMs = clock.elapsed();
        scanningAtColumns = browser->isScanning();
        scannedAtColumns = browser->scannedCount();
    };
    QObject::connect(browser->model(), &QAbstractItemModel::rowsInserted, browser, [&] {
        if (firstRowsMs < 0 && browser->model()->keyCount() > 0) {
            firstRowsMs = clock.elapsed();
            QTimer::singleShot(0, browser, openFirstKeys); // not inside the model's signal
        }
    });
    QObject::connect(browser->model(), &QAbstractItemModel::dataChanged, browser, checkColumns);
    Poller poller(&client, keyName(0, shape));
    poller.start([&] { return browser->isScanning(); });
    // Each key row in view during the scan: from the tick it was first seen in view to the
    // tick it had its columns (10 ms resolution).
    std::unordered_map<quint32, qint64> seenInView;
    std::vector<double> rowWaits;
    QTimer probe;
    probe.setInterval(10);
    QObject::connect(&probe, &QTimer::timeout, [&] {
        const qint64 now = clock.elapsed();
        worstStall = std::max(worstStall, now - last);
        last = now;
        if (!openedKeys || !browser->isScanning())
            return;
        for (quint32 id : browser->visibleKeyIds()) {
            auto [it, fresh] = seenInView.try_emplace(id, now);
            if (it->second >= 0 && browser->model()->details(id)) {
                rowWaits.push_back(double(now - it->second));
                it->second = -1; // counted
            }
        }
    });
    bool finished = false;
    QObject::connect(browser, &KeyBrowser::scanFinished, [&] { finished = true; });
    clock.start();
    probe.start();
    const double cpuAtStart = threadCpuMs();
    browser->setClient(&client, "ratescope:", ":");
    if (!spin([&] { return finished; }, 600000)) {
        std::fprintf(stderr, "the scan did not finish\n");
        return 1;
    }
    const qint64 scanMs = clock.elapsed();
    const double guiCpuMs = threadCpuMs() - cpuAtStart;
    poller.stop();
    const std::vector<double> duringScan = poller.samples(), waitsDuringScan = poller.waits();
    spin([&] { return browser->isSettled(); }, 30000);
    const qint64 settledMs = clock.elapsed();
    probe.stop();
    // The reference: the same read on the same client with nothing else queued.
    poller.start([] { return true; });
    spin([&] { return poller.samples().size() >= 40; }, 10000);
    poller.stop();
    const std::vector<double> idle = poller.samples(), waitsIdle = poller.waits();
    const qint64 keys = browser->model()->keyCount();
    malloc_trim(0);
    const qint64 heapAfter = heapInUse(), rssAfter = rss();

    std::printf("panel: time to first rows               %8lld ms\n", firstRowsMs);
    std::printf("panel: full scan (%lld keys listed)  %8.2f s  (%.0f keys/s)\n", keys, double(scanMs) / 1000,
                double(keys) * 1000 / double(scanMs));
    std::printf("panel: GUI thread busy during the scan    %8.2f s  (CPU time: inserting, painting, the probe)\n", guiCpuMs / 1000);
    if (columnsMs >= 0)
        std::printf("panel: columns of the rows in view       %8lld ms after the first rows "
                    "(scan %s: %lld keys scanned)\n",
                    columnsMs - firstRowsMs, scanningAtColumns ? "still running" : "already over", scannedAtColumns);
    else
        std::printf("panel: columns of the rows in view        never (no key rows in view)\n");
    qint64 neverAnswered = 0;
    for (const auto &[id, seen] : seenInView)
        neverAnswered += seen >= 0 ? 1 : 0;
    std::printf("panel: each key row in view during the scan (%zu rows, %lld without "
                "columns when the scan ended):\n"
                "         columns after it came into view  median %5.0f ms, worst %5.0f ms  "
                "(10 ms probe)\n",
                rowWaits.size(), neverAnswered, quantile(rowWaits, 0.5), quantile(rowWaits, 1.0));
    std::printf("panel: settled (scan over, every group in natural order, columns in view) %5lld ms after the start\n", settledMs);
    std::printf("panel: a short read every 50 ms during the scan (%zu reads):\n", duringScan.size());
    std::printf("         waits for the worker        median %6.1f ms, worst %6.1f ms\n", quantile(waitsDuringScan, 0.5),
                quantile(waitsDuringScan, 1.0));
    std::printf("         answered on the GUI thread  median %6.1f ms, worst %6.1f ms\n", quantile(duringScan, 0.5),
                quantile(duringScan, 1.0));
    std::printf("       the same read, connection idle (%zu reads):\n", idle.size());
    std::printf("         waits for the worker        median %6.1f ms, worst %6.1f ms\n", quantile(waitsIdle, 0.5),
                quantile(waitsIdle, 1.0));
    std::printf("         answered on the GUI thread  median %6.1f ms, worst %6.1f ms  "
                "(during the scan / idle, median: %.1fx)\n",
                quantile(idle, 0.5), quantile(idle, 1.0), quantile(duringScan, 0.5) / std::max(0.001, quantile(idle, 0.5)));
    std::printf("panel: longest GUI-thread stall          %8lld ms\n", worstStall);
    std::printf("panel: memory per key (mallinfo2)        %8.1f B  (model, view, details in view; "
                "model self-reported %.1f B)\n",
                double(heapAfter - heapBefore) / double(keys), double(browser->model()->treeMemoryUsage()) / double(keys));
    std::printf("panel: memory per key (RSS delta)        %8.1f B\n", double(rssAfter - rssBefore) / double(keys));
    delete browser;
    malloc_trim(0);
    std::printf("panel: freed when it closes              %8.1f B per key\n", double(heapAfter - heapInUse()) / double(keys));
    return 0;
}
