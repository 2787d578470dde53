// Transport throughput: pipelined PING and EVALSHA through the core client, side by side
// with redis-benchmark on the same private server, same connections and pipeline depth.
#include "benchsupport.h"
#include "redis/sandboxserver.h"

#include <cstdio>
#include <QCoreApplication>

using namespace ratescope;

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const int scale = argc > 1 ? std::max(1, atoi(argv[1])) : 1;
    SandboxServer server;
    server.start();
    const ConnectionOptions options = server.options();

    const QByteArray script = "return redis.call('INCR', KEYS[1])";
    Connection admin(options);
    const QByteArray sha = admin.command({"SCRIPT", "LOAD", script}).bytes();

    struct Case {
        const char *name;
        QStringList reference;
        Command ours;
    };
    const Case cases[] = {
        {"PING", {QStringLiteral("PING")}, {"PING"}},
        {"EVALSHA",
         {QStringLiteral("EVALSHA"), QString::fromLatin1(sha), QStringLiteral("1"), QStringLiteral("bench:evalsha")},
         {"EVALSHA", sha, "1", "bench:evalsha"}},
    };
    std::printf("%-8s %5s %5s %9s %14s %14s %7s\n", "command", "conns", "pipe", "requests", "ours req/s", "redis-bench", "ratio");
    for (const Case &c : cases) {
        for (int conns : {1, 8}) {
            for (int pipe : {1, 16}) {
                const int n = (pipe == 1 ? 100000 : 400000) * scale;
                // Alternate and keep the best of two runs each, so neither side pays for a warm-up.
                double ours = 0, ref = 0;
                for (int round = 0; round < 2; ++round) {
                    ref = std::max(ref, bench::redisBenchmark(server.port(), conns, pipe, n, c.reference).requestsPerSecond);
                    ours = std::max(ours, bench::ourClient(options, conns, pipe, n, [&](int) { return c.ours; }).requestsPerSecond);
                }
                std::printf("%-8s %5d %5d %9d %14.0f %14.0f %7.2f\n", c.name, conns, pipe, n, ours, ref, ours / ref);
                std::fflush(stdout);
            }
        }
    }
    return 0;
}
