// What-if replay throughput and memory: a generated CSV trace of N requests over K keys
// (default 1,000,000 over 10,000) replayed by the simulator through one spec, beside
// redis-benchmark running the same script (EVALSHA, explicit now) with the same pipeline depth
// and one connection against a private server of its own. The simulator's peak RSS
// (VmHWM) is printed beside the trace file's size: the trace is streamed, never held whole.
//
// Usage: bench_simulate [requests (default 1000000)] [keys (default 10000)] [algorithm (default sliding-log)]
#include "limiters/limiter.h"
#include "limiters/limiterscript.h"
#include "redis/sandboxserver.h"
#include "load/simulator.h"

#include "benchsupport.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include <cstdio>
#include <random>

using namespace ratescope;

namespace {

constexpr qint64 kT0 = 1763900000000000LL;
constexpr int kPipeline = 256;

qint64 statusKb(const char *field)
{
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : f.readAll().split('\n'))
        if (line.startsWith(field))
            return line.mid(qsizetype(qstrlen(field))).trimmed().split(' ').first().toLongLong();
    return -1;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const int requests = argc > 1 ? std::atoi(argv[1]) : 1000000;
    const int keys = argc > 2 ? std::atoi(argv[2]) : 10000;
    const Algorithm algorithm = parseAlgorithm(argc > 3 ? QString::fromLatin1(argv[3]) : QStringLiteral("sliding-log"));
    const LimitSpec spec{algorithm, 100, 60LL * 1000000, 1};

    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("trace.csv"));
    {
        // Requests over an hour, in global time order, keys drawn at random (some hot).
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            return 1;
        std::mt19937_64 rng(7);
        QByteArray chunk;
        for (int i = 0; i < requests; ++i) {
            const qint64 t = kT0 + qint64(i) * 3600LL * 1000000 / requests;
            const quint64 k = (rng() % 4 == 0) ? rng() % 100 : rng() % quint64(keys);
            chunk += QByteArray::number(t) + ",trace:" + QByteArray::number(k) + '\n';
            if (chunk.size() > (1 << 20)) {
                f.write(chunk);
                chunk.clear();
            }
        }
        f.write(chunk);
    }
    const qint64 traceBytes = QFileInfo(path).size();
    const qint64 rssBefore = statusKb("VmHWM:");

    QElapsedTimer timer;
    timer.start();
    const auto reader = openCsvTrace(path, TraceTimeUnit::Microseconds, spec.limit);
    const qint64 readMs = timer.elapsed();
    SimOptions options;
    options.specs = {spec};
    options.pipeline = kPipeline;
    timer.restart();
    const SimResult result = simulate(*reader, options);
    const qint64 replayMs = std::max<qint64>(1, timer.elapsed());
    const qint64 rssPeak = statusKb("VmHWM:");
    const double ours = double(result.specs[0].requests) * 1000.0 / double(replayMs);
    const double oursWithRead = double(result.specs[0].requests) * 1000.0 / double(replayMs + readMs);

    // The reference: the same script through redis-benchmark, one connection, the same depth.
    SandboxServer server;
    server.start();
    Connection c(server.options());
    c.connect();
    const LimiterScript &script = LimiterScript::forAlgorithm(algorithm);
    script.load(c);
    QStringList command{QStringLiteral("EVALSHA"), QString::fromLatin1(script.sha1()), QStringLiteral("1"),
                        QStringLiteral("trace:__rand_int__")};
    for (const QByteArray &a : Limiter::arguments("k", spec, kT0, false))
        command << QString::fromLatin1(a);
    const double reference = bench::redisBenchmark(server.port(), 1, kPipeline, requests, command, keys).requestsPerSecond;

    std::printf("what-if replay: %d requests over %d keys, %s %lld per 60 s, pipeline %d, one connection\n", requests, keys,
                qPrintable(algorithmName(algorithm)), qint64(spec.limit), kPipeline);
    std::printf("  trace read and sorted      %8lld ms (%lld runs of up to 200,000 rows)\n", readMs, (qint64(requests) + 199999) / 200000);
    std::printf("  replay                     %8lld ms  %10.0f decisions/s  (%.0f/s with the read)\n", replayMs, ours, oursWithRead);
    std::printf("  redis-benchmark -c 1 -P %d %10.0f decisions/s  (same script, EVALSHA)\n", kPipeline, reference);
    std::printf("  ratio replay / redis-benchmark: %.2f\n", reference > 0 ? ours / reference : 0.0);
    std::printf("  allowed %lld, denied %lld, keys %lld (%lld throttled)\n", result.specs[0].allowed, result.specs[0].denied,
                result.specs[0].keys, result.specs[0].keysDenied);
    std::printf("  memory: peak RSS %lld KiB (%lld KiB before reading), trace file %lld KiB\n", rssPeak, rssBefore, traceBytes / 1024);
    return 0;
}
