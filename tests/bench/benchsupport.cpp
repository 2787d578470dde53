#include "benchsupport.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QRegularExpression>

#include <stdexcept>
#include <thread>

namespace ratescope::bench {

Throughput redisBenchmark(quint16 port, int connections, int pipeline, int requests, const QStringList &command, int keyspace)
{
    QProcess p;
    QStringList args = {QStringLiteral("-h"), QStringLiteral("127.0.0.1"),  QStringLiteral("-p"), QString::number(port),
                        QStringLiteral("-c"), QString::number(connections), QStringLiteral("-P"), QString::number(pipeline),
                        QStringLiteral("-n"), QString::number(requests),    QStringLiteral("-q")};
    if (keyspace > 0)
        args += {QStringLiteral("-r"), QString::number(keyspace)};
    p.start(QStringLiteral("redis-benchmark"), args + command);
    if (!p.waitForFinished(600000) || p.exitCode() != 0)
        throw std::runtime_error("redis-benchmark failed: " + p.readAllStandardError().toStdString());
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    // "...: 123456.79 requests per second, p50=0.135 msec" (the last such line)
    static const QRegularExpression re(QStringLiteral("([0-9.]+) requests per second(?:, p50=([0-9.]+) msec)?"));
    Throughput t;
    auto it = re.globalMatch(out);
    while (it.hasNext()) {
        const auto m = it.next();
        t.requestsPerSecond = m.captured(1).toDouble();
        t.p50Ms = m.captured(2).toDouble();
    }
    if (t.requestsPerSecond <= 0)
        throw std::runtime_error("cannot read redis-benchmark output: " + out.toStdString());
    return t;
}

Throughput ourClient(const ConnectionOptions &options, int connections, int pipeline, int requests,
                     const std::function<Command(int)> &makeCommand)
{
    std::vector<std::thread> threads;
    std::vector<std::string> errors(static_cast<size_t>(connections));
    // Connect first, so connection set-up is not timed (redis-benchmark does the same).
    std::vector<std::unique_ptr<Connection>> conns;
    for (int c = 0; c < connections; ++c)
        conns.push_back(std::make_unique<Connection>(options));
    QElapsedTimer timer;
    timer.start();
    for (int c = 0; c < connections; ++c) {
        threads.emplace_back([&, c] {
            try {
                Connection &conn = *conns[size_t(c)];
                const int first = requests * c / connections;
                const int last = requests * (c + 1) / connections;
                std::vector<Command> batch;
                for (int i = first; i < last; i += pipeline) {
                    batch.clear();
                    for (int j = i; j < std::min(last, i + pipeline); ++j)
                        batch.push_back(makeCommand(j));
                    conn.send(batch);
                    for (size_t k = 0; k < batch.size(); ++k)
                        conn.receive().orThrow();
                }
            } catch (const std::exception &e) {
                errors[size_t(c)] = e.what();
            }
        });
    }
    for (auto &t : threads)
        t.join();
    const double seconds = double(timer.nsecsElapsed()) / 1e9;
    for (const auto &e : errors)
        if (!e.empty())
            throw std::runtime_error(e);
    return {double(requests) / seconds, 0};
}

} // namespace ratescope::bench
