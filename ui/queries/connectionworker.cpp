#include "connectionworker.h"

#include "redis/connection.h"

#include <QMutexLocker>

#include <algorithm>

namespace ratescope::ui {

ConnectionWorker::ConnectionWorker(ConnectionOptions options)
    : m_options(std::move(options))
{
}

ConnectionWorker::~ConnectionWorker() = default;

void ConnectionWorker::post(Job job, Lane lane, const void *owner)
{
    {
        QMutexLocker lock(&m_mutex);
        Queued q{std::move(job), owner, ++m_sequence};
        if (lane == Lane::Interactive) {
            m_interactive.push_back(std::move(q));
            m_interactiveWaiting.fetch_add(1, std::memory_order_relaxed);
        } else {
            m_background.push_back(std::move(q));
        }
    }
    // One event per job: which job it runs is chosen when it is processed. Between two jobs
    // the thread's event loop turns, so quit() is never held up by a long queue.
    QMetaObject::invokeMethod(this, &ConnectionWorker::runNext, Qt::QueuedConnection);
}

std::optional<ConnectionWorker::Queued> ConnectionWorker::takeNext()
{
    QMutexLocker lock(&m_mutex);
    // The first interactive job whose owner has no older background job still queued. Both
    // queues are short (the scan keeps one page queued at a time), so walking them is cheap.
    for (auto it = m_interactive.begin(); it != m_interactive.end(); ++it) {
        const bool behindOwnBackground = std::any_of(m_background.begin(), m_background.end(),
                                                     [&](const Queued &b) { return b.owner == it->owner && b.sequence < it->sequence; });
        if (behindOwnBackground)
            continue;
        Queued q = std::move(*it);
        m_interactive.erase(it);
        m_interactiveWaiting.fetch_sub(1, std::memory_order_relaxed);
        return q;
    }
    if (!m_background.empty()) {
        Queued q = std::move(m_background.front());
        m_background.pop_front();
        return q;
    }
    return std::nullopt;
}

void ConnectionWorker::runNext()
{
    std::optional<Queued> next = takeNext();
    if (!next)
        return;
    if (!m_connection)
        m_connection = std::make_unique<Connection>(m_options);
    next->job(*m_connection);
}

} // namespace ratescope::ui
