// The strip above the panels while the connection is lost or refused: what happened, in the
// server's or socket's words, when the next attempt comes, and a button to try now.
#pragma once

#include "redisclient.h"
#include <QPointer>
#include <QTimer>
#include <QWidget>

class QLabel;
class QPushButton;

namespace ratescope::ui {

class ConnectionBanner : public QWidget {
    Q_OBJECT
public:
    explicit ConnectionBanner(QWidget *parent = nullptr);
    // canEditProfile: the connection comes from a saved profile (not --url or the demo), so
    // "Edit profile…" is offered when the server refuses it.
    void setClient(RedisClient *client, bool canEditProfile = false);
    QString text() const;

    QPushButton *passwordButton() const { return m_password; }

signals:
    void editProfileRequested();
    // "Enter password…": the server wants a login (NOAUTH) or refused the one given.
    void passwordRequested();

private:
    void update();

    QPointer<RedisClient> m_client;
    QLabel *m_text;
    QPushButton *m_retry;
    QPushButton *m_edit;
    QPushButton *m_password;
    bool m_canEdit = false;
    QTimer m_countdown;
};

} // namespace ratescope::ui
