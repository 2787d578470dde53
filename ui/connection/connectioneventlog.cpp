#include "connectioneventlog.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>

#include <chrono>
#include <cstdio>

namespace ratescope::ui {

namespace {

QString stateName(RedisClient::State state)
{
    switch (state) {
    case RedisClient::State::Idle:
        return QStringLiteral("idle");
    case RedisClient::State::Connecting:
        return QStringLiteral("connecting");
    case RedisClient::State::Connected:
        return QStringLiteral("connected");
    case RedisClient::State::Reconnecting:
        return QStringLiteral("reconnecting");
    case RedisClient::State::Failed:
        break;
    }
    return QStringLiteral("failed");
}

qint64 nowUs()
{
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

} // namespace

ConnectionEventLog::ConnectionEventLog(QObject *parent)
    : QObject(parent)
{
}

ConnectionEventLog::~ConnectionEventLog()
{
    if (m_following)
        write({{QStringLiteral("state"), QStringLiteral("closed")}});
}

bool ConnectionEventLog::open(const QString &path)
{
    const bool ok = path == QLatin1String("-") ? m_file.open(stdout, QIODevice::WriteOnly | QIODevice::Unbuffered)
                                               : (m_file.setFileName(path), m_file.open(QIODevice::WriteOnly | QIODevice::Append));
    if (!ok)
        m_error = m_file.errorString();
    return ok;
}

QByteArray ConnectionEventLog::line(const QJsonObject &fields, qint64 timeUs)
{
    QJsonObject o = fields;
    o.insert(QStringLiteral("time"), QDateTime::fromMSecsSinceEpoch(timeUs / 1000, Qt::UTC).toString(Qt::ISODateWithMs));
    o.insert(QStringLiteral("time_us"), timeUs);
    return QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n';
}

void ConnectionEventLog::write(QJsonObject fields)
{
    if (!m_file.isOpen() || m_writeFailed)
        return;
    if (m_file.write(line(fields, nowUs())) < 0 || !m_file.flush()) {
        m_writeFailed = true; // said once; the console goes on
        std::fprintf(stderr, "ratescope: --event-log: cannot write %s: %s; no more events are written\n", qPrintable(m_file.fileName()),
                     qPrintable(m_file.errorString()));
    }
}

void ConnectionEventLog::setClient(RedisClient *client)
{
    if (client == m_client && m_following)
        return;
    if (m_client)
        disconnect(m_client, nullptr, this, nullptr);
    if (m_following)
        write({{QStringLiteral("state"), QStringLiteral("closed")}});
    m_client = client;
    m_following = client != nullptr;
    m_last = RedisClient::State::Idle;
    m_away = false;
    m_everConnected = false;
    m_node.clear();
    if (!client)
        return;
    connect(client, &RedisClient::stateChanged, this, &ConnectionEventLog::onState);
    connect(client, &RedisClient::statusChanged, this, &ConnectionEventLog::onStatus);
    connect(client, &QObject::destroyed, this, [this] {
        if (m_following)
            write({{QStringLiteral("state"), QStringLiteral("closed")}});
        m_following = false;
    });
    if (client->state() != RedisClient::State::Idle)
        onState(client->state());
}

void ConnectionEventLog::onStatus()
{
    if (!m_client || m_client->state() != RedisClient::State::Connected || m_last != RedisClient::State::Connected)
        return;
    const auto status = m_client->status();
    if (!status || status->info.nodes.empty())
        return;
    const QString node = status->info.nodes.front().address.toString();
    if (m_node.isEmpty() || node == m_node)
        return;
    // Followed without a loss: a sentinel named another master, and the next request went there.
    write({{QStringLiteral("state"), QStringLiteral("connected")}, {QStringLiteral("node"), node}, {QStringLiteral("moved_from"), m_node}});
    m_node = node;
}

void ConnectionEventLog::onState(RedisClient::State state)
{
    if (!m_client)
        return;
    const bool changed = state != m_last;
    m_last = state;
    QJsonObject o{{QStringLiteral("state"), stateName(state)}};
    switch (state) {
    case RedisClient::State::Idle:
        return;
    case RedisClient::State::Connecting:
        if (!changed)
            return;
        o.insert(QStringLiteral("url"), m_client->url()); // the password shown as ***
        m_since.start();
        break;
    case RedisClient::State::Connected: {
        if (!changed)
            return;
        if (const auto status = m_client->status(); status && !status->info.nodes.empty()) {
            m_node = status->info.nodes.front().address.toString();
            o.insert(QStringLiteral("node"), m_node);
        }
        const qint64 ms = m_since.isValid() ? m_since.elapsed() : 0;
        o.insert(m_everConnected ? QStringLiteral("away_ms") : QStringLiteral("connect_ms"), ms);
        m_everConnected = true;
        m_away = false;
        break;
    }
    case RedisClient::State::Reconnecting: {
        // Said once a retry is scheduled (the loss itself comes with its first one), then once
        // per failed attempt.
        const int inMs = m_client->msUntilRetry();
        if (inMs <= 0)
            return;
        if (!m_away && m_everConnected) {
            o.insert(QStringLiteral("lost"), true);
            m_since.start();
        }
        m_away = true;
        o.insert(QStringLiteral("error"), m_client->lastError());
        o.insert(QStringLiteral("next_attempt"), m_client->failedAttempts());
        o.insert(QStringLiteral("retry_in_ms"), inMs);
        if (m_everConnected)
            o.insert(QStringLiteral("away_ms"), m_since.elapsed());
        break;
    }
    case RedisClient::State::Failed:
        if (!changed)
            return;
        o.insert(QStringLiteral("error"), m_client->lastError());
        break;
    }
    write(o);
}

} // namespace ratescope::ui
