// The worker side of one connection: owns the core Connection on its own thread and runs
// the console's requests there, one at a time, in the order they were made.
#pragma once

#include "connectionoptions.h"

#include <QObject>

#include <functional>
#include <memory>

namespace ratescope {
class Connection;
}

namespace ratescope::ui {

class ConnectionWorker : public QObject {
    Q_OBJECT
public:
    using Job = std::function<void(Connection &)>;

    explicit ConnectionWorker(ConnectionOptions options);
    ~ConnectionWorker() override;

    // On the worker thread only. The Connection is created by the first job, so its socket
    // belongs to this thread; it is destroyed with the worker, on this thread too.
    void run(const Job &job);

private:
    ConnectionOptions m_options;
    std::unique_ptr<Connection> m_connection;
};

} // namespace ratescope::ui
