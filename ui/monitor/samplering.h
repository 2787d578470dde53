// The monitor's memory of one pinned key: the last samples in a fixed-size ring, so ten
// minutes of history cost the same at hour one as at minute ten.
#pragma once

#include <QtGlobal>

#include <algorithm>
#include <vector>

namespace ratescope::ui {

struct MonitorSample {
    qint64 timeUs = 0; // the clock the limiter was read at (the server's, or a frozen one)
    qint64 used = 0;   // units of cost in use before a request
    qint64 limit = 0;
    qint64 retryAfterUs = 0; // when a request of the policy's cost would pass; 0: it would now
    bool gap = false;        // no reading here (connection lost, paused): the line breaks

    qint64 remaining() const { return std::max<qint64>(0, limit - used); }
    bool denied() const { return !gap && retryAfterUs > 0; }
};

class SampleRing {
public:
    explicit SampleRing(size_t capacity = 1) { setCapacity(capacity); }

    size_t size() const { return m_size; }
    size_t capacity() const { return m_slots.size(); }
    bool empty() const { return m_size == 0; }
    // Oldest first.
    const MonitorSample &at(size_t i) const { return m_slots[(m_first + i) % m_slots.size()]; }
    const MonitorSample &newest() const { return at(m_size - 1); }

    void push(const MonitorSample &s)
    {
        if (m_size == m_slots.size()) {
            m_slots[m_first] = s; // the oldest makes room
            m_first = (m_first + 1) % m_slots.size();
        } else {
            m_slots[(m_first + m_size) % m_slots.size()] = s;
            ++m_size;
        }
    }

    // A gap only after a reading: consecutive gaps say nothing more.
    void pushGap(qint64 timeUs)
    {
        if (!empty() && !newest().gap)
            push(MonitorSample{timeUs, 0, 0, 0, true});
    }

    // Keeps the newest samples that fit.
    void setCapacity(size_t capacity)
    {
        capacity = std::max<size_t>(1, capacity);
        std::vector<MonitorSample> fresh(capacity);
        const size_t keep = std::min(m_size, capacity);
        for (size_t i = 0; i < keep; ++i)
            fresh[i] = at(m_size - keep + i);
        m_slots = std::move(fresh);
        m_first = 0;
        m_size = keep;
    }

    // The index of the first sample at or after timeUs (size() when none).
    size_t lowerBound(qint64 timeUs) const
    {
        size_t lo = 0, hi = m_size;
        while (lo < hi) {
            const size_t mid = (lo + hi) / 2;
            if (at(mid).timeUs < timeUs)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo;
    }

    size_t bytes() const { return m_slots.capacity() * sizeof(MonitorSample); }

private:
    std::vector<MonitorSample> m_slots;
    size_t m_first = 0;
    size_t m_size = 0;
};

} // namespace ratescope::ui
