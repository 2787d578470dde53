// A private redis-server on a free loopback port in a temporary directory: for demo mode,
// `ratescope-cli --sandbox`, tests and benchmarks. It dies with its owner process.
#pragma once

#include "redis/connectionoptions.h"

#include <QProcess>
#include <QStringList>
#include <QTemporaryDir>

#include <memory>

namespace ratescope {

class SandboxServer {
public:
    struct Config {
        QStringList configLines; // extra redis.conf directives ("user alice on >pw ~* +@all")
        bool unixSocket = false; // also listen on dir()/redis.sock
        // TLS on the port (plain TCP off): server certificate, key and CA for client certs.
        QString tlsCertFile, tlsKeyFile, tlsCaFile;
        bool tlsAuthClients = false;
        bool sentinel = false; // run as a Redis Sentinel (configLines: "sentinel monitor ...")
        QString executable = QStringLiteral("redis-server");
    };

    SandboxServer();
    explicit SandboxServer(Config config);
    ~SandboxServer(); // stops the server
    SandboxServer(const SandboxServer &) = delete;
    SandboxServer &operator=(const SandboxServer &) = delete;

    // Starts and waits until it accepts connections (bounded). Throws IoError with the
    // server's log when it cannot start, naming the Debian package when it is missing.
    void start();
    void stop();    // SIGTERM, then SIGKILL after a bounded wait
    void kill();    // SIGKILL, no goodbye: for crash tests
    void pause();   // SIGSTOP: the socket stays open, nothing answers
    void resume();  // SIGCONT
    void restart(); // same port, same directory, same configuration
    bool isRunning() const;
    qint64 pid() const;

    quint16 port() const { return m_port; }
    QString dir() const { return m_dir->path(); }
    QString socketPath() const { return m_dir->filePath(QStringLiteral("redis.sock")); }
    // Options to reach it over TCP (or TLS when configured), without credentials.
    ConnectionOptions options() const;
    QString url() const { return options().toUrl(); }
    QString log() const;

private:
    void launch();
    void writeConfig();

    Config m_config;
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<QProcess> m_process;
    quint16 m_port = 0;
};

// A free TCP port on 127.0.0.1 at the time of the call.
quint16 freeLoopbackPort();

} // namespace ratescope
