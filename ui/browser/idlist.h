// A growable list of 32-bit ids in 16 bytes that holds up to two without a heap allocation:
// most groups of a limiter keyspace ("user:<id>:minute") hold a single key.
#pragma once

#include <QtGlobal>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace ratescope::ui {

class IdList {
public:
    IdList() = default;
    ~IdList()
    {
        if (onHeap())
            std::free(m_heap);
    }
    IdList(const IdList &) = delete;
    IdList &operator=(const IdList &) = delete;
    IdList(IdList &&other) noexcept { take(other); }
    IdList &operator=(IdList &&other) noexcept
    {
        if (this != &other) {
            this->~IdList();
            take(other);
        }
        return *this;
    }

    size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    quint32 operator[](size_t i) const { return data()[i]; }
    quint32 &operator[](size_t i) { return data()[i]; }
    quint32 *begin() { return data(); }
    quint32 *end() { return data() + m_size; }
    const quint32 *begin() const { return data(); }
    const quint32 *end() const { return data() + m_size; }
    // Heap bytes held.
    size_t heapBytes() const { return onHeap() ? size_t(m_capacity) * sizeof(quint32) : 0; }

    void erase(size_t i)
    {
        quint32 *d = data();
        std::memmove(d + i, d + i + 1, (m_size - i - 1) * sizeof(quint32));
        --m_size;
    }
    void push_back(quint32 id)
    {
        if (m_size == m_capacity)
            grow();
        data()[m_size++] = id;
    }

private:
    static constexpr quint32 kInline = 2;

    bool onHeap() const { return m_capacity > kInline; }
    quint32 *data() { return onHeap() ? m_heap : m_inline; }
    const quint32 *data() const { return onHeap() ? m_heap : m_inline; }
    void grow()
    {
        const quint32 capacity = std::max<quint32>(4, m_capacity * 2);
        auto *heap =
            static_cast<quint32 *>(onHeap() ? std::realloc(m_heap, capacity * sizeof(quint32)) : std::malloc(capacity * sizeof(quint32)));
        if (!heap)
            throw std::bad_alloc();
        if (!onHeap())
            std::memcpy(heap, m_inline, m_size * sizeof(quint32));
        m_heap = heap;
        m_capacity = capacity;
    }
    void take(IdList &other)
    {
        std::memcpy(static_cast<void *>(this), &other, sizeof(IdList));
        other.m_size = 0;
        other.m_capacity = kInline;
    }

    union {
        quint32 *m_heap;
        quint32 m_inline[kInline];
    };
    quint32 m_size = 0;
    quint32 m_capacity = kInline;
};

static_assert(sizeof(IdList) == 16);

} // namespace ratescope::ui
