// On one private server: decisions per second of each limiter script beside a naive script of
// the same algorithm (tests/bench/naive), both through redis-benchmark with the same load;
// for the fixed window and the sliding log also a floor script (tests/bench/floor: the same
// Redis calls as ours, none of the Lua work), which is what any script keeping their rules
// costs at least; the server-side cost of each script with a full window (INFO commandstats usec_per_call) at
// limit 10 and 10,000; and memory per sliding-log entry beside the common "<ms>-<random float>"
// member format.
//
// Usage: bench_scripts [requests per run (default 1500000)] [rounds (default 1)]
// With 10,000 keys and a limit of 100, 1,500,000 requests admit about two thirds and deny the
// rest. With several rounds, ours and the references alternate and the best run of each counts.
#include "builtpaths.h"
#include "redis/connection.h"
#include "limiters/limiter.h"
#include "limiters/limiterscript.h"
#include "redis/sandboxserver.h"
#include "limiters/scriptlibrary.h"
#include "redis/serverinfo.h"

#include "benchsupport.h"

#include <cstdio>
#include <QCoreApplication>
#include <QFile>
#include <QRandomGenerator>

using namespace ratescope;

namespace {

constexpr qint64 kT0 = 1735689600LL * 1000000;

double usecPerCall(Connection &c, const QByteArray &command)
{
    const auto fields = ServerInfo::parseInfo(c.command({"INFO", "commandstats"}).bytes());
    // "calls=20000,usec=123456,usec_per_call=6.17,..."
    for (const QString &part : fields.value(QStringLiteral("cmdstat_") + QString::fromLatin1(command)).split(QLatin1Char(',')))
        if (part.startsWith(QStringLiteral("usec_per_call=")))
            return part.mid(14).toDouble();
    return -1;
}

double costWithFullWindow(Connection &c, Algorithm a, qint64 limit, int calls)
{
    const QByteArray key = "bench:" + algorithmName(a).toUtf8() + ":" + QByteArray::number(limit);
    c.command({"DEL", key});
    const LimitSpec spec{a, limit, 3600LL * 1000000, 1};
    const LimiterScript &script = LimiterScript::forAlgorithm(a);
    script.load(c);
    // Fill: `limit` admitted requests; a log's entries spread over the first half of the
    // window, the others at the instant measured (buckets would refill otherwise).
    const qint64 now = kT0 + spec.windowUs / 2;
    const qint64 spread = a == Algorithm::SlidingLog ? spec.windowUs / 2 / limit : 0;
    std::vector<Command> batch;
    for (qint64 i = 0; i < limit; ++i) {
        batch.push_back(script.command(key, Limiter::arguments(key, spec, now - (limit - i) * spread, false), false));
        if (batch.size() == 1000 || i == limit - 1) {
            c.pipeline(batch);
            batch.clear();
        }
    }
    if (Decision::fromReply(c.pipeline({script.command(key, Limiter::arguments(key, spec, now, true), true)}).front()).allowed)
        throw std::runtime_error("window not full");
    c.command({"CONFIG", "RESETSTAT"});
    for (int i = 0; i < calls; i += 100) {
        batch.clear();
        for (int j = 0; j < 100; ++j)
            batch.push_back(script.command(key, Limiter::arguments(key, spec, now + i + j, false), false));
        for (const Reply &r : c.pipeline(batch))
            if (Decision::fromReply(r).allowed)
                throw std::runtime_error("a request was admitted into a full window");
    }
    return usecPerCall(c, "evalsha");
}

// A reference script of tests/bench (naive/ or floor/), or nothing when there is none.
QByteArray referenceSource(const char *dir, Algorithm a)
{
    QFile f((BuiltPaths::sourceDir() + QStringLiteral("/tests/bench/%1/%2.lua")).arg(QLatin1String(dir), algorithmName(a)));
    if (!f.exists())
        return {};
    if (!f.open(QIODevice::ReadOnly))
        throw std::runtime_error("cannot read " + f.fileName().toStdString());
    return f.readAll();
}

struct Run {
    double rate = 0;     // decisions per second seen by redis-benchmark
    double serverUs = 0; // server time per decision (INFO commandstats usec_per_call)
};

// The issue 14 setting: 50 connections, pipeline 16, 10,000 random keys, limit 100 per 60 s,
// cost 1, the server's clock. Starts from an empty server.
// `how` is EVALSHA with a script's SHA-1, or FCALL with a function's name.
Run decisionsPerSecond(Connection &c, quint16 port, const QString &how, const QByteArray &shaOrFunction, int requests)
{
    c.command({"FLUSHALL"}); // keys only: the functions library stays
    c.command({"CONFIG", "RESETSTAT"});
    const QStringList command = {how,
                                 QString::fromLatin1(shaOrFunction),
                                 QStringLiteral("1"),
                                 QStringLiteral("bench:__rand_int__"),
                                 QStringLiteral("100"),
                                 QStringLiteral("60000000"),
                                 QStringLiteral("1"),
                                 QString(),
                                 QStringLiteral("check")};
    Run run;
    run.rate = bench::redisBenchmark(port, 50, 16, requests, command, 10000).requestsPerSecond;
    run.serverUs = usecPerCall(c, how.toLower().toLatin1());
    if (c.command({"DBSIZE"}).integer() < 9000) // every run must have written its keys
        throw std::runtime_error("the script under test did not write its keys: " + shaOrFunction.toStdString());
    return run;
}

// The better of two runs of one script: the higher rate, the lower server time.
void keepBest(Run &best, const Run &run)
{
    if (best.rate == 0 || run.rate > best.rate)
        best.rate = run.rate;
    if (best.serverUs == 0 || run.serverUs < best.serverUs)
        best.serverUs = run.serverUs;
}

qint64 memoryUsage(Connection &c, const QByteArray &key)
{
    return c.command({"MEMORY", "USAGE", key, "SAMPLES", "0"}).integer();
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    const int requests = args.size() > 1 ? args[1].toInt() : 1500000;
    const int rounds = args.size() > 2 ? args[2].toInt() : 1;
    if (requests < 100000 || rounds < 1) {
        std::fprintf(stderr, "usage: bench_scripts [requests >= 100000] [rounds >= 1]\n");
        return 2;
    }
    SandboxServer server;
    server.start();
    Connection c(server.options());

    std::printf("Decisions per second, redis-benchmark: 50 connections, pipeline 16, %d requests over 10,000\n"
                "random keys, limit 100 per 60 s, cost 1, server clock; best of %d run(s) each, alternating.\n"
                "Ours through EVALSHA and through FCALL (the functions library); the naive script and, where there\n"
                "is one, the floor script (our Redis calls without our Lua work) through EVALSHA. Ratios are to the\n"
                "naive script's rate. Below each rate: the server's time per decision (usec_per_call), in us.\n",
                requests, rounds);
    c.command({"FUNCTION", "LOAD", "REPLACE", FunctionLibrary::instance().code()});
    std::printf("%-16s %10s %10s %10s %10s %8s %8s %8s\n", "algorithm", "evalsha", "fcall", "naive", "floor", "evalsha", "fcall", "floor");
    for (Algorithm a : kAllAlgorithms) {
        const LimiterScript &ours = LimiterScript::forAlgorithm(a);
        ours.load(c);
        const QByteArray naive = c.command({"SCRIPT", "LOAD", referenceSource("naive", a)}).bytes();
        const QByteArray floorSource = referenceSource("floor", a);
        const QByteArray floor = floorSource.isEmpty() ? QByteArray() : c.command({"SCRIPT", "LOAD", floorSource}).bytes();
        const QByteArray function = FunctionLibrary::functionName(a, false);
        Run best, bestFcall, bestNaive, bestFloor;
        for (int r = 0; r < rounds; ++r) {
            keepBest(best, decisionsPerSecond(c, server.port(), QStringLiteral("EVALSHA"), ours.sha1(), requests));
            keepBest(bestFcall, decisionsPerSecond(c, server.port(), QStringLiteral("FCALL"), function, requests));
            keepBest(bestNaive, decisionsPerSecond(c, server.port(), QStringLiteral("EVALSHA"), naive, requests));
            if (!floor.isEmpty())
                keepBest(bestFloor, decisionsPerSecond(c, server.port(), QStringLiteral("EVALSHA"), floor, requests));
        }
        const auto cell = [](double v, int decimals) { return v > 0 ? QByteArray::number(v, 'f', decimals) : QByteArray("-"); };
        std::printf("%-16s %10.0f %10.0f %10.0f %10s %8.2f %8.2f %8s\n", qPrintable(algorithmName(a)), best.rate, bestFcall.rate,
                    bestNaive.rate, cell(bestFloor.rate, 0).constData(), best.rate / bestNaive.rate, bestFcall.rate / bestNaive.rate,
                    cell(bestFloor.rate / bestNaive.rate, 2).constData());
        std::printf("%-16s %10.2f %10.2f %10.2f %10s\n", "  server us", best.serverUs, bestFcall.serverUs, bestNaive.serverUs,
                    cell(bestFloor.serverUs, 2).constData());
        std::fflush(stdout);
    }
    c.command({"FLUSHALL"});

    std::printf("\n");
    std::printf("Server-side cost per denied call, full window (usec_per_call, %s)\n", "20,000 calls");
    std::printf("%-16s %12s %12s %8s\n", "algorithm", "limit 10", "limit 10000", "ratio");
    for (Algorithm a : kAllAlgorithms) {
        const double small = costWithFullWindow(c, a, 10, 20000);
        const double big = costWithFullWindow(c, a, 10000, 20000);
        std::printf("%-16s %12.2f %12.2f %8.2f\n", qPrintable(algorithmName(a)), small, big, big / small);
    }

    std::printf("\nMemory per sliding-log entry (MEMORY USAGE / entries)\n");
    std::printf("%8s %14s %22s\n", "entries", "ratescope", "\"<ms>-<random float>\"");
    QRandomGenerator rng(7);
    for (int n : {100, 1000}) {
        const QByteArray ours = "mem:ours:" + QByteArray::number(n);
        const QByteArray common = "mem:common:" + QByteArray::number(n);
        const LimitSpec spec{Algorithm::SlidingLog, n, 3600LL * 1000000, 1};
        const LimiterScript &script = LimiterScript::forAlgorithm(Algorithm::SlidingLog);
        std::vector<Command> batch;
        for (int i = 0; i < n; ++i) {
            const qint64 now = kT0 + qint64(i) * 1013;
            batch.push_back(script.command(ours, Limiter::arguments(ours, spec, now, false), false));
            const QByteArray ms = QByteArray::number(now / 1000);
            batch.push_back({"ZADD", common, ms, ms + "-" + QByteArray::number(rng.generateDouble(), 'g', 17)});
        }
        c.pipeline(batch);
        if (c.command({"ZCARD", ours}).integer() != n || c.command({"ZCARD", common}).integer() != n)
            throw std::runtime_error("unexpected entry count");
        std::printf("%8d %14.1f %22.1f\n", n, double(memoryUsage(c, ours)) / n, double(memoryUsage(c, common)) / n);
    }
    return 0;
}
