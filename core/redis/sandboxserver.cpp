#include "redis/sandboxserver.h"

#include "base/errors.h"

#include <QDeadlineTimer>
#include <QFile>
#include <QStandardPaths>
#include <QTcpServer>
#include <QThread>

#include <csignal>
#include <sys/prctl.h>
#include <unistd.h>

namespace ratescope {

quint16 freeLoopbackPort()
{
    QTcpServer probe;
    if (!probe.listen(QHostAddress::LocalHost, 0))
        throw IoError(QStringLiteral("no free loopback port: %1").arg(probe.errorString()));
    return probe.serverPort();
}

SandboxServer::SandboxServer()
    : SandboxServer(Config{})
{
}

SandboxServer::SandboxServer(Config config)
    : m_config(std::move(config))
    , m_dir(std::make_unique<QTemporaryDir>(QDir::tempPath() + QStringLiteral("/ratescope-redis-XXXXXX")))
{
    if (!m_dir->isValid())
        throw IoError(QStringLiteral("cannot create a temporary directory: %1").arg(m_dir->errorString()));
}

SandboxServer::~SandboxServer()
{
    stop();
}

ConnectionOptions SandboxServer::options() const
{
    ConnectionOptions o;
    o.address = {QStringLiteral("127.0.0.1"), m_port};
    if (!m_config.tlsCertFile.isEmpty()) {
        o.transport = ConnectionOptions::Transport::Tls;
        o.tls.caFile = m_config.tlsCaFile;
    }
    o.connectTimeoutMs = 2000;
    o.commandTimeoutMs = 10000;
    return o;
}

QString SandboxServer::log() const
{
    QFile f(m_dir->filePath(QStringLiteral("redis.log")));
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

bool SandboxServer::isRunning() const
{
    return m_process && m_process->state() == QProcess::Running;
}

qint64 SandboxServer::pid() const
{
    return m_process ? m_process->processId() : 0;
}

void SandboxServer::writeConfig()
{
    QStringList lines = {
        QStringLiteral("bind 127.0.0.1"),
        QStringLiteral("dir %1").arg(m_dir->path()),
        QStringLiteral("logfile %1").arg(m_dir->filePath(QStringLiteral("redis.log"))),
        QStringLiteral("daemonize no"),
    };
    if (!m_config.sentinel)
        lines << QStringLiteral("save \"\"") << QStringLiteral("appendonly no") << QStringLiteral("protected-mode yes");
    if (m_config.tlsCertFile.isEmpty() || m_config.sentinel) {
        lines << QStringLiteral("port %1").arg(m_port);
    } else {
        lines << QStringLiteral("port 0") << QStringLiteral("tls-port %1").arg(m_port)
              << QStringLiteral("tls-cert-file %1").arg(m_config.tlsCertFile) << QStringLiteral("tls-key-file %1").arg(m_config.tlsKeyFile)
              << QStringLiteral("tls-ca-cert-file %1").arg(m_config.tlsCaFile)
              << QStringLiteral("tls-auth-clients %1").arg(m_config.tlsAuthClients ? QStringLiteral("yes") : QStringLiteral("no"));
    }
    if (m_config.unixSocket)
        lines << QStringLiteral("unixsocket %1").arg(socketPath()) << QStringLiteral("unixsocketperm 700");
    lines << m_config.configLines;
    QFile f(m_dir->filePath(QStringLiteral("redis.conf")));
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(lines.join(QLatin1Char('\n')).toUtf8() + '\n') < 0)
        throw IoError(QStringLiteral("cannot write %1: %2").arg(f.fileName(), f.errorString()));
}

void SandboxServer::launch()
{
    writeConfig();
    // What the log says once the server listens (a sentinel says it differently).
    const QString readyLine = m_config.sentinel ? QStringLiteral("Sentinel ID is") : QStringLiteral("Ready to accept connections");
    const qsizetype readyBefore = log().count(readyLine);
    m_process = std::make_unique<QProcess>();
    m_process->setProgram(m_config.executable);
    QStringList args = {m_dir->filePath(QStringLiteral("redis.conf"))};
    if (m_config.sentinel)
        args << QStringLiteral("--sentinel");
    m_process->setArguments(args);
    m_process->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    m_process->setStandardOutputFile(QProcess::nullDevice());
    // The server must not outlive us, even when we are killed with SIGKILL.
    m_process->setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGKILL); });
    m_process->start();
    if (!m_process->waitForStarted(5000))
        throw IoError(QStringLiteral("cannot start %1: %2").arg(m_config.executable, m_process->errorString()));

    // The log says when it listens; this works for every configuration, including TLS
    // servers that demand a client certificate the probe would not have.
    const QDeadlineTimer deadline(10000);
    while (!deadline.hasExpired() && m_process->state() == QProcess::Running) {
        if (log().count(readyLine) > readyBefore)
            return;
        QThread::msleep(10);
    }
    const QString log = this->log();
    stop();
    throw IoError(QStringLiteral("redis-server did not start on port %1: %2").arg(m_port).arg(log.right(800)));
}

void SandboxServer::start()
{
    if (QStandardPaths::findExecutable(m_config.executable).isEmpty() && !QFile::exists(m_config.executable))
        throw IoError(QStringLiteral("'%1' was not found on PATH: install the Debian package redis-server "
                                     "(apt-get install redis-server)")
                          .arg(m_config.executable));
    // The port may be taken between probing and binding; try a few.
    for (int attempt = 0;; ++attempt) {
        m_port = freeLoopbackPort();
        try {
            launch();
            return;
        } catch (const IoError &) {
            if (attempt >= 4)
                throw;
        }
    }
}

void SandboxServer::restart()
{
    stop();
    launch();
}

void SandboxServer::stop()
{
    if (!m_process)
        return;
    if (m_process->state() != QProcess::NotRunning) {
        ::kill(pid_t(m_process->processId()), SIGCONT); // a paused server cannot exit
        m_process->terminate();
        if (!m_process->waitForFinished(5000)) {
            m_process->kill();
            m_process->waitForFinished(5000);
        }
    }
    m_process.reset();
}

void SandboxServer::kill()
{
    if (!m_process)
        return;
    m_process->kill();
    m_process->waitForFinished(5000);
    m_process.reset();
}

void SandboxServer::pause()
{
    if (isRunning())
        ::kill(pid_t(m_process->processId()), SIGSTOP);
}

void SandboxServer::resume()
{
    if (isRunning())
        ::kill(pid_t(m_process->processId()), SIGCONT);
}

} // namespace ratescope
