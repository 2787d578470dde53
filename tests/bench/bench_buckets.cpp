// sliding-buckets (B = 60) beside the sliding log at limits 100, 10,000 and 1,000,000, on one
// private server:
//  - bytes per limiter holding a whole window of admissions (MEMORY USAGE), the requests spread
//    evenly over the window;
//  - decisions per second through redis-benchmark (50 connections, pipeline 16, 10,000 random
//    keys, window 60 s, cost 1, the server's clock), the same load for both;
//  - the server-side cost of a decision on a full limiter (INFO commandstats usec_per_call).
//
// Usage: bench_buckets [requests per throughput run (default 1000000)]
#include "redis/connection.h"
#include "limiters/limiter.h"
#include "limiters/limiterscript.h"
#include "redis/sandboxserver.h"
#include "redis/serverinfo.h"

#include "benchsupport.h"

#include <cstdio>
#include <QCoreApplication>

using namespace ratescope;

namespace {

constexpr qint64 kT0 = 1735689600LL * 1000000;
constexpr qint64 kWindow = 60LL * 1000000;

double usecPerCall(Connection &c)
{
    const auto fields = ServerInfo::parseInfo(c.command({"INFO", "commandstats"}).bytes());
    for (const QString &part : fields.value(QStringLiteral("cmdstat_evalsha")).split(QLatin1Char(',')))
        if (part.startsWith(QStringLiteral("usec_per_call=")))
            return part.mid(14).toDouble();
    return -1;
}

// `limit` admissions spread evenly over one window ending at `end`; the key is then full.
void fill(Connection &c, const QByteArray &key, const LimitSpec &spec, qint64 end)
{
    const LimiterScript &script = LimiterScript::forAlgorithm(spec.algorithm);
    std::vector<Command> batch;
    qint64 admitted = 0;
    for (qint64 i = 0; i < spec.limit; ++i) {
        const qint64 at = end - spec.windowUs + 1 + qint64((__int128(i) * (spec.windowUs - 2)) / spec.limit);
        batch.push_back(script.command(key, Limiter::arguments(key, spec, at, false), false));
        if (batch.size() == 2000 || i == spec.limit - 1) {
            for (const Reply &r : c.pipeline(batch))
                admitted += Decision::fromReply(r).allowed ? 1 : 0;
            batch.clear();
        }
    }
    if (admitted != spec.limit)
        throw std::runtime_error("fill: " + std::to_string(admitted) + " of " + std::to_string(spec.limit) + " admitted");
}

// The cost of 20,000 denied decisions on a full limiter, just after it was filled.
double deniedCost(Connection &c, const QByteArray &key, const LimitSpec &spec, qint64 end)
{
    const LimiterScript &script = LimiterScript::forAlgorithm(spec.algorithm);
    c.command({"CONFIG", "RESETSTAT"});
    for (int i = 0; i < 20000; i += 200) {
        std::vector<Command> batch;
        for (int j = 0; j < 200; ++j)
            batch.push_back(script.command(key, Limiter::arguments(key, spec, end, false), false));
        for (const Reply &r : c.pipeline(batch))
            if (Decision::fromReply(r).allowed)
                throw std::runtime_error("a request was admitted into a full limiter");
    }
    return usecPerCall(c);
}

double decisionsPerSecond(Connection &c, quint16 port, Algorithm a, qint64 limit, int requests)
{
    c.command({"FLUSHALL"});
    const LimiterScript &script = LimiterScript::forAlgorithm(a);
    script.load(c);
    QStringList command = {
        QStringLiteral("EVALSHA"), QString::fromLatin1(script.sha1()), QStringLiteral("1"), QStringLiteral("bench:__rand_int__"),
        QString::number(limit),    QString::number(kWindow),           QStringLiteral("1"), QString(),
        QStringLiteral("check")};
    if (a == Algorithm::SlidingBuckets)
        command << QStringLiteral("60");
    const double rate = bench::redisBenchmark(port, 50, 16, requests, command, 10000).requestsPerSecond;
    if (c.command({"DBSIZE"}).integer() < 9000)
        throw std::runtime_error("the script did not write its keys");
    return rate;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    const int requests = args.size() > 1 ? args[1].toInt() : 1000000;
    if (requests < 100000) {
        std::fprintf(stderr, "usage: bench_buckets [requests >= 100000]\n");
        return 2;
    }
    SandboxServer server;
    server.start();
    Connection c(server.options());
    const qint64 limits[] = {100, 10000, 1000000};

    std::printf("Bytes per limiter with a whole window of admissions (60 s window, requests spread evenly)\n");
    std::printf("%10s %16s %16s %8s %22s %22s\n", "limit", "sliding-log", "sliding-buckets", "ratio", "denied, log (us/call)",
                "denied, buckets (us/call)");
    for (qint64 limit : limits) {
        const LimitSpec log{Algorithm::SlidingLog, limit, kWindow, 1};
        const LimitSpec buckets{Algorithm::SlidingBuckets, limit, kWindow, 1, 60};
        const qint64 end = kT0 + kWindow;
        const QByteArray logKey = "mem:log:" + QByteArray::number(limit), bucketsKey = "mem:buckets:" + QByteArray::number(limit);
        LimiterScript::forAlgorithm(Algorithm::SlidingLog).load(c);
        LimiterScript::forAlgorithm(Algorithm::SlidingBuckets).load(c);
        fill(c, logKey, log, end);
        fill(c, bucketsKey, buckets, end);
        const qint64 logBytes = c.command({"MEMORY", "USAGE", logKey, "SAMPLES", "0"}).integer();
        const qint64 bucketBytes = c.command({"MEMORY", "USAGE", bucketsKey, "SAMPLES", "0"}).integer();
        const double logCost = deniedCost(c, logKey, log, end);
        const double bucketsCost = deniedCost(c, bucketsKey, buckets, end);
        std::printf("%10lld %16lld %16lld %8.4f %22.2f %22.2f\n", limit, logBytes, bucketBytes, double(bucketBytes) / double(logBytes),
                    logCost, bucketsCost);
        std::fflush(stdout);
        c.command({"DEL", logKey, bucketsKey});
    }

    std::printf("\nDecisions per second, redis-benchmark: 50 connections, pipeline 16, %d requests over 10,000\n"
                "random keys, window 60 s, cost 1, server clock, EVALSHA\n",
                requests);
    std::printf("%10s %14s %16s %8s\n", "limit", "sliding-log", "sliding-buckets", "ratio");
    for (qint64 limit : limits) {
        const double log = decisionsPerSecond(c, server.port(), Algorithm::SlidingLog, limit, requests);
        const double buckets = decisionsPerSecond(c, server.port(), Algorithm::SlidingBuckets, limit, requests);
        std::printf("%10lld %14.0f %16.0f %8.2f\n", limit, log, buckets, buckets / log);
        std::fflush(stdout);
    }
    return 0;
}
