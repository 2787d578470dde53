// `ratescope-cli burst` beside redis-benchmark on the same private server: EVALSHA of the
// sliding-log script, everything admitted, at 1 and 8 connections and pipeline 1 and 16.
// Throughput ratios, and p50/p99 latency ratios (redis-benchmark's latency summary is in
// msec with microsecond digits; ours is in microseconds). Median of five alternating runs: on a
// small shared machine single runs of either tool vary by tens of percent.
#include "builtpaths.h"
#include "limiters/algorithm.h"
#include "redis/connection.h"
#include "limiters/limiterscript.h"
#include "redis/sandboxserver.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

using namespace ratescope;

namespace {

constexpr qint64 kLimit = 1000000000000; // 10^12: everything is admitted
constexpr qint64 kWindowUs = 3600LL * 1000000;
constexpr int kRounds = 5;

struct Figures {
    double throughput = 0; // requests (decisions) per second
    double p50Us = 0;
    double p99Us = 0;
};

QByteArray runProcess(const QString &program, const QStringList &args)
{
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(600000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        throw std::runtime_error((program + QStringLiteral(" failed: ") + QString::fromUtf8(p.readAllStandardError())).toStdString());
    return p.readAllStandardOutput();
}

// Without -q redis-benchmark ends with:
//   throughput summary: 81234.55 requests per second
//   latency summary (msec):
//           avg       min       p50       p95       p99       max
//         0.345     0.100     0.335     0.423     0.511     1.567
Figures redisBenchmark(quint16 port, int connections, int pipeline, int requests, const QByteArray &sha, const QByteArray &key)
{
    const QString out = QString::fromUtf8(runProcess(
        QStringLiteral("redis-benchmark"),
        {QStringLiteral("-h"), QStringLiteral("127.0.0.1"), QStringLiteral("-p"), QString::number(port), QStringLiteral("-c"),
         QString::number(connections), QStringLiteral("-P"), QString::number(pipeline), QStringLiteral("-n"), QString::number(requests),
         QStringLiteral("EVALSHA"), QString::fromLatin1(sha), QStringLiteral("1"), QString::fromUtf8(key), QString::number(kLimit),
         QString::number(kWindowUs), QStringLiteral("1"), QString(), QStringLiteral("check")}));
    static const QRegularExpression throughput(QStringLiteral("throughput summary: ([0-9.]+) requests per second"));
    static const QRegularExpression latency(QStringLiteral("avg\\s+min\\s+p50\\s+p95\\s+p99\\s+max\\s*\\n\\s*([0-9.]+)\\s+([0-9.]+)\\s+"
                                                           "([0-9.]+)\\s+([0-9.]+)\\s+([0-9.]+)\\s+([0-9.]+)"));
    const auto t = throughput.match(out);
    const auto l = latency.match(out);
    if (!t.hasMatch() || !l.hasMatch())
        throw std::runtime_error("cannot read redis-benchmark output: " + out.right(600).toStdString());
    return {t.captured(1).toDouble(), l.captured(3).toDouble() * 1000, l.captured(5).toDouble() * 1000};
}

Figures ours(const QString &url, int connections, int pipeline, int requests, const QByteArray &key)
{
    const QByteArray out = runProcess(BuiltPaths::cli(),
                                      {QStringLiteral("--url"), url, QStringLiteral("--json"), QStringLiteral("burst"),
                                       QString::fromUtf8(key), QStringLiteral("--algo"), QStringLiteral("sliding-log"),
                                       QStringLiteral("--limit"), QString::number(kLimit), QStringLiteral("--window"), QStringLiteral("1h"),
                                       QStringLiteral("--requests"), QString::number(requests), QStringLiteral("--connections"),
                                       QString::number(connections), QStringLiteral("--pipeline"), QString::number(pipeline)});
    const QJsonObject o = QJsonDocument::fromJson(out).object();
    if (o.value(QStringLiteral("allowed")).toInteger() != requests || o.value(QStringLiteral("errors")).toInteger() != 0)
        throw std::runtime_error("unexpected burst summary: " + out.toStdString());
    const QJsonObject latency = o.value(QStringLiteral("latency_us")).toObject();
    return {o.value(QStringLiteral("throughput")).toDouble(), latency.value(QStringLiteral("p50")).toDouble(),
            latency.value(QStringLiteral("p99")).toDouble()};
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

Figures median(const std::vector<Figures> &runs)
{
    std::vector<double> t, p50, p99;
    for (const Figures &f : runs) {
        t.push_back(f.throughput);
        p50.push_back(f.p50Us);
        p99.push_back(f.p99Us);
    }
    return {median(t), median(p50), median(p99)};
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const int scale = argc > 1 ? std::max(1, atoi(argv[1])) : 1;
    SandboxServer server;
    server.start();
    Connection admin(server.options());
    const LimiterScript &script = LimiterScript::forAlgorithm(Algorithm::SlidingLog);
    script.load(admin);

    std::printf("EVALSHA sliding-log, limit 10^12 (all admitted), median of %d alternating runs\n", kRounds);
    std::printf("%5s %4s %8s | %12s %12s %6s | %9s %9s %6s | %9s %9s %6s\n", "conns", "pipe", "requests", "ours dec/s", "redis-bench",
                "ratio", "ours p50", "rb p50", "ratio", "ours p99", "rb p99", "ratio");
    for (int connections : {1, 8}) {
        for (int pipeline : {1, 16}) {
            const int requests = (pipeline == 1 ? 50000 : 200000) * scale;
            std::vector<Figures> ourRuns, refRuns;
            for (int round = 0; round < kRounds; ++round) {
                // Fresh keys of the same size on both sides; alternate who goes first.
                admin.command({"DEL", "bench:ours", "bench:rb"});
                auto runOurs = [&] { ourRuns.push_back(ours(server.url(), connections, pipeline, requests, "bench:ours")); };
                auto runRef = [&] {
                    refRuns.push_back(redisBenchmark(server.port(), connections, pipeline, requests, script.sha1(), "bench:rb"));
                };
                if (round % 2) {
                    runOurs();
                    runRef();
                } else {
                    runRef();
                    runOurs();
                }
            }
            const Figures o = median(ourRuns);
            const Figures r = median(refRuns);
            std::printf("%5d %4d %8d | %12.0f %12.0f %6.2f | %7.0fus %7.0fus %6.2f | %7.0fus "
                        "%7.0fus %6.2f\n",
                        connections, pipeline, requests, o.throughput, r.throughput, o.throughput / r.throughput, o.p50Us, r.p50Us,
                        o.p50Us / r.p50Us, o.p99Us, r.p99Us, o.p99Us / r.p99Us);
            std::fflush(stdout);
        }
    }
    return 0;
}
