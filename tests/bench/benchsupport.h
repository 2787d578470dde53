// What the benchmarks share: running redis-benchmark as the reference, and a parallel
// driver for our own client with the same connections and pipeline depth.
#pragma once

#include "redis/connection.h"

#include <functional>
#include <QStringList>

namespace ratescope::bench {

struct Throughput {
    double requestsPerSecond = 0;
    double p50Ms = 0; // as redis-benchmark reports it, when it does
};

// redis-benchmark -c C -P P -n N <command...> against 127.0.0.1:port; the rate it prints.
// keyspace > 0 adds -r keyspace: each __rand_int__ in the command becomes one of that many
// numbers.
Throughput redisBenchmark(quint16 port, int connections, int pipeline, int requests, const QStringList &command, int keyspace = 0);

// Runs `requests` commands over `connections` threads, each with its own Connection,
// `pipeline` in flight per round trip. makeCommand(i) builds request i.
Throughput ourClient(const ConnectionOptions &options, int connections, int pipeline, int requests,
                     const std::function<Command(int)> &makeCommand);

} // namespace ratescope::bench
