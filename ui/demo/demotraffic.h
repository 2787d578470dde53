// Simulated services for --demo, deciding through the core library on a thread of their own:
// for each of the five algorithms, steady clients under their limit, bursty ones that fire at
// window boundaries, and an abusive one far over it; plus two "foreign" services that keep
// their own counter windows and a millisecond sorted-set log, as other stacks do.
#pragma once

#include "redis/connectionoptions.h"
#include "admin/policy.h"

#include <QThread>

#include <atomic>
#include <map>
#include <memory>
#include <vector>

namespace ratescope {
class Connection;
}

namespace ratescope::ui {

class DemoTraffic {
public:
    enum class Behaviour { Steady, Bursty, Abusive };
    struct Client {
        QByteArray key;
        QString policy;
        Behaviour behaviour = Behaviour::Steady;
        double share = 0.5; // Steady: the fraction of the limit it uses
        double carry = 0;   // requests owed from earlier ticks
    };

    static std::vector<Policy> policies();
    static std::vector<Client> clients();

    explicit DemoTraffic(ConnectionOptions options);
    ~DemoTraffic(); // stops
    DemoTraffic(const DemoTraffic &) = delete;
    DemoTraffic &operator=(const DemoTraffic &) = delete;

    // Writes the policies and an override ("acme's uploads: 2x for 2 hours"), then a first
    // round of traffic so there is something to see at once. Blocking; throws core errors.
    static void seed(Connection &connection);
    void start();
    void stop();

    qint64 allowed() const { return m_allowed.load(); }
    qint64 denied() const { return m_denied.load(); }

    static constexpr int kTickMs = 100;

private:
    void loop();

    ConnectionOptions m_options;
    std::unique_ptr<QThread> m_thread;
    std::atomic<bool> m_stop{false};
    std::atomic<qint64> m_allowed{0};
    std::atomic<qint64> m_denied{0};
};

// The limits each client's service enforces, by the client's key: as a service using Ratescope
// does, what is in force now (the policies and overrides stored, through core's resolver),
// so that a policy edited in the console changes the traffic's outcome. A client whose key no
// stored policy covers keeps its policy's built-in limits (the demo's services do not stop).
std::map<QByteArray, LimitSpec> limitsInForce(Connection &connection, const std::vector<DemoTraffic::Client> &clients);

// One tick of traffic for every client at wall-clock time nowMs, under those limits: what the
// thread runs, and what seed() runs once.
void simulateTick(Connection &connection, std::vector<DemoTraffic::Client> &clients, const std::map<QByteArray, LimitSpec> &limits,
                  qint64 nowMs, std::atomic<qint64> &allowed, std::atomic<qint64> &denied);

} // namespace ratescope::ui
