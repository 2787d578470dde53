#include "demosession.h"

#include "redis/connection.h"

namespace ratescope::ui {

DemoSession::DemoSession() = default;

DemoSession::~DemoSession()
{
    stop();
}

void DemoSession::start()
{
    m_server.start();
    {
        Connection seeding(m_server.options());
        DemoTraffic::seed(seeding);
    }
    m_traffic = std::make_unique<DemoTraffic>(m_server.options());
    m_traffic->start();
}

void DemoSession::stop()
{
    m_traffic.reset();
    m_server.stop();
}

ConnectionProfile DemoSession::profile() const
{
    ConnectionProfile p = ConnectionProfile::fromOptions(m_server.options(), QStringLiteral("Demo"));
    p.ns = QStringLiteral("ratescope:");
    p.separator = QStringLiteral(":");
    return p;
}

DemoSession::WhatIfPreset DemoSession::whatIfPreset()
{
    const Policy api = DemoTraffic::policies().front();
    Policy tighter = api;
    tighter.spec.limit = api.spec.limit / 3;
    return {api, tighter};
}

} // namespace ratescope::ui
