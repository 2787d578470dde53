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

std::optional<ConnectionWorker::Queued> ConnectionWorker::takeNext(bool interactiveOnly)
{
    QMutexLocker lock(&m_mutex);
    // The first interactive job whose owner has no older background job still queued (nor
    // under way, when served from inside one). Both queues are short (the scan keeps one page
    // queued at a time), so walking them is cheap.
    for (auto it = m_interactive.begin(); it != m_interactive.end(); ++it) {
        const bool behindOwnBackground = std::any_of(m_background.begin(), m_background.end(),
                                                     [&](const Queued &b) { return b.owner == it->owner && b.sequence < it->sequence; });
        if (behindOwnBackground || (interactiveOnly && it->owner == m_runningOwner))
            continue;
        Queued q = std::move(*it);
        m_interactive.erase(it);
        m_interactiveWaiting.fetch_sub(1, std::memory_order_relaxed);
        return q;
    }
    if (!interactiveOnly && !m_background.empty()) {
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
    m_runningOwner = next->owner;
    next->job(*m_connection);
    m_runningOwner = nullptr;
}

void ConnectionWorker::serveInteractive()
{
    if (m_serving || !m_connection || m_interactiveWaiting.load(std::memory_order_relaxed) == 0)
        return;
    m_serving = true;
    const void *const running = m_runningOwner;
    // Only those waiting now: work posted meanwhile waits for the next call (or the job's end).
    for (int left = m_interactiveWaiting.load(std::memory_order_relaxed); left > 0; --left) {
        std::optional<Queued> next = takeNext(true);
        if (!next)
            break;
        m_runningOwner = next->owner;
        next->job(*m_connection);
        m_runningOwner = running;
    }
    m_serving = false;
}

} // namespace ratescope::ui
