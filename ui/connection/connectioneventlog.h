// `ratescope --event-log FILE`: one line per change of the connection's state, appended to a
// file as it happens, so that a script or an operator can tell when the console lost its
// server, how it tried again, and how long it was away. JSON Lines; never a password (URLs
// are shown as RedisClient::url() shows them, errors are the server's or socket's words).
#pragma once

#include "redisclient.h"

#include <QElapsedTimer>
#include <QFile>
#include <QObject>
#include <QPointer>

namespace ratescope::ui {

class ConnectionEventLog : public QObject {
    Q_OBJECT
public:
    explicit ConnectionEventLog(QObject *parent = nullptr);
    // Writes a last "closed" line when a connection was still followed.
    ~ConnectionEventLog() override;

    // Opens PATH for appending (created when missing); "-" is standard output. False, with
    // errorString(), when it cannot be opened.
    bool open(const QString &path);
    QString errorString() const { return m_error; }

    // Follows the connection's states from now on; nullptr (or another client) closes the one
    // followed so far with a "closed" line. The file is written on the GUI thread, one short
    // line per change, flushed at once: no network wait.
    void setClient(RedisClient *client);

    // One line, for tests and tools: what the file gets.
    static QByteArray line(const QJsonObject &fields, qint64 timeUs);

private:
    void onState(RedisClient::State state);
    void onStatus(); // a connection that now reaches another server (a sentinel's failover)
    void write(QJsonObject fields);

    QFile m_file;
    QString m_error;
    bool m_writeFailed = false;
    QPointer<RedisClient> m_client;
    bool m_following = false;
    RedisClient::State m_last = RedisClient::State::Idle;
    bool m_away = false; // lost (or never reached) and not connected since
    bool m_everConnected = false;
    QElapsedTimer m_since; // since the connection was lost, or since it was opened
    QString m_node;        // the server the last connected line named
};

} // namespace ratescope::ui
