// The --demo world: a private redis-server (free loopback port, temporary directory, killed
// with this process even on SIGKILL), seeded with policies and an override, and simulated
// services deciding against it until the session ends.
#pragma once

#include "connectionprofile.h"
#include "demotraffic.h"
#include "redis/sandboxserver.h"

#include <memory>

namespace ratescope::ui {

class DemoSession {
public:
    DemoSession();
    ~DemoSession(); // stops the traffic, then the server
    DemoSession(const DemoSession &) = delete;
    DemoSession &operator=(const DemoSession &) = delete;

    // Blocking (a fraction of a second). Call it on the main thread, which lives as long as
    // the process: the server is tied to the thread that starts it. Throws the core's
    // IoError (naming the Debian package when redis-server is missing).
    void start();
    void stop();

    ConnectionOptions options() const { return m_server.options(); }
    ConnectionProfile profile() const;
    qint64 serverPid() const { return m_server.pid(); }
    QString serverDir() const { return m_server.dir(); }
    quint16 port() const { return m_server.port(); }
    const DemoTraffic *traffic() const { return m_traffic.get(); }

    // What the What-if view comes prefilled with in the demo: the API policy as it is, against
    // a tighter one (a third of its limit).
    struct WhatIfPreset {
        Policy now, proposed;
    };
    static WhatIfPreset whatIfPreset();

private:
    SandboxServer m_server;
    std::unique_ptr<DemoTraffic> m_traffic;
};

} // namespace ratescope::ui
