#include "connectionworker.h"

#include "connection.h"

namespace ratescope::ui {

ConnectionWorker::ConnectionWorker(ConnectionOptions options)
    : m_options(std::move(options))
{
}

ConnectionWorker::~ConnectionWorker() = default;

void ConnectionWorker::run(const Job &job)
{
    if (!m_connection)
        m_connection = std::make_unique<Connection>(m_options);
    job(*m_connection);
}

} // namespace ratescope::ui
