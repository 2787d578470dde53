// Simulated services for --demo, deciding through the core library on a thread of their own:
// for each of the five algorithms, steady clients under their limit, bursty ones that fire at
// window boundaries, and an abusive one far over it; plus two "foreign" services that keep
// their own counter windows and a millisecond sorted-set log, as other stacks do.
#pragma once

#include "redis/connectionoptions.h"
#include "admin/policy.h"

#include <QThread>

#include <atomic>
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

// One tick of traffic for every client at wall-clock time nowMs: what the thread runs, and
// what seed() runs a few times over.
void simulateTick(Connection &connection, std::vector<DemoTraffic::Client> &clients, const std::vector<Policy> &policies, qint64 nowMs,
                  std::atomic<qint64> &allowed, std::atomic<qint64> &denied);

} // namespace ratescope::ui
