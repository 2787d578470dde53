// A view's refresh timer on its client's shared tick (RedisClient::ticked): the part of
// QTimer's interface the views use. Every view's timer fires on ticks that are multiples of its
// period, so views with the same period, or periods that divide each other, fire at the same
// tick and their reads share a round (RedisClient::repeat). Without a client it never fires.
#pragma once

#include <QObject>
#include <QPointer>

namespace ratescope::ui {

class RedisClient;

class TickTimer : public QObject {
    Q_OBJECT
public:
    explicit TickTimer(QObject *parent = nullptr);

    void setClient(RedisClient *client);
    // The period, rounded up to whole ticks (RedisClient::kTickMs); a timer restarted with the
    // period it has keeps its phase.
    void setInterval(int ms);
    int interval() const { return m_ms; }
    void start(int ms);
    void start();
    void stop();
    bool isActive() const { return m_active; }

signals:
    void timeout();

private:
    void onTick(qint64 tick);

    QPointer<RedisClient> m_client;
    int m_ms = 1000;
    bool m_active = false;
};

} // namespace ratescope::ui
