#include "ticktimer.h"

#include "redisclient.h"

#include <algorithm>

namespace ratescope::ui {

TickTimer::TickTimer(QObject *parent)
    : QObject(parent)
{
}

void TickTimer::setClient(RedisClient *client)
{
    if (m_client == client)
        return;
    if (m_client)
        disconnect(m_client, nullptr, this, nullptr);
    m_client = client;
    if (m_client)
        connect(m_client, &RedisClient::ticked, this, &TickTimer::onTick);
}

void TickTimer::setInterval(int ms)
{
    m_ms = std::max(ms, RedisClient::kTickMs);
}

void TickTimer::start(int ms)
{
    setInterval(ms);
    start();
}

void TickTimer::start()
{
    m_active = true;
}

void TickTimer::stop()
{
    m_active = false;
}

void TickTimer::onTick(qint64 tick)
{
    const qint64 every = (m_ms + RedisClient::kTickMs - 1) / RedisClient::kTickMs;
    if (m_active && tick % every == 0)
        emit timeout();
}

} // namespace ratescope::ui
