// A hash set of 32-bit ids with open addressing and linear probing: the caller supplies the
// hash and the equality test, so a slot is just an id (4 bytes, load <= 1/2). Growing is
// incremental, as in Redis's own dict: each insert moves a few slots of the old table into
// the new one, so no insert ever rehashes a million entries at once on the GUI thread. Each
// id's hash is kept (4 bytes) so that moving never reads the names again.
#pragma once

#include <QtGlobal>

#include <vector>

namespace ratescope::ui {

class IdIndex {
public:
    static constexpr quint32 kNone = 0xffffffffu;

    template <typename Equal> quint32 find(size_t hash, Equal equal) const
    {
        const quint32 h = quint32(hash);
        const quint32 id = probe(m_slots, h, equal);
        return id != kNone || m_old.empty() ? id : probe(m_old, h, equal);
    }
    // Ids arrive in increasing order from 0 (the records they index are appended); the caller
    // has checked with find() that the entry is new.
    void insert(size_t hash, quint32 id)
    {
        if ((m_size + 1) * 2 > m_slots.size()) {
            finishMoving();
            m_old.swap(m_slots);
            m_slots.assign(std::max<size_t>(16, m_old.size() * 2), 0);
            m_moved = 0;
        }
        if (m_hashes.size() <= id)
            m_hashes.resize(size_t(id) + 1);
        m_hashes[id] = quint32(hash);
        place(id);
        ++m_size;
        moveSome(kMovesPerInsert);
    }
    // Room for `count` ids without growing.
    void reserve(size_t count)
    {
        size_t capacity = 16;
        while (capacity < count * 2)
            capacity *= 2;
        m_hashes.reserve(count);
        if (capacity <= m_slots.size())
            return;
        finishMoving();
        m_old.swap(m_slots);
        m_slots.assign(capacity, 0);
        m_moved = 0;
        finishMoving();
    }
    void clear()
    {
        std::vector<quint32>().swap(m_slots);
        std::vector<quint32>().swap(m_old);
        std::vector<quint32>().swap(m_hashes);
        m_size = 0;
        m_moved = 0;
    }
    size_t memoryUsage() const { return (m_slots.capacity() + m_old.capacity() + m_hashes.capacity()) * sizeof(quint32); }

private:
    static constexpr quint32 kMovedOut = 0xffffffffu; // an old slot whose entry moved on
    static constexpr size_t kMovesPerInsert = 64;     // the old table is gone long before the new one fills

    template <typename Equal> quint32 probe(const std::vector<quint32> &table, quint32 h, Equal &equal) const
    {
        if (table.empty())
            return kNone;
        const size_t mask = table.size() - 1;
        for (size_t i = h & mask;; i = (i + 1) & mask) {
            const quint32 slot = table[i];
            if (slot == 0)
                return kNone;
            if (slot != kMovedOut && m_hashes[slot - 1] == h && equal(slot - 1))
                return slot - 1;
        }
    }
    void place(quint32 id)
    {
        const size_t mask = m_slots.size() - 1;
        size_t i = m_hashes[id] & mask;
        while (m_slots[i])
            i = (i + 1) & mask;
        m_slots[i] = id + 1;
    }
    void moveSome(size_t count)
    {
        if (m_old.empty())
            return;
        for (; count > 0 && m_moved < m_old.size(); --count, ++m_moved) {
            quint32 &slot = m_old[m_moved];
            if (slot != 0 && slot != kMovedOut) {
                place(slot - 1);
                slot = kMovedOut; // not 0: later entries' probe chains run through it
            }
        }
        if (m_moved == m_old.size())
            std::vector<quint32>().swap(m_old);
    }
    void finishMoving() { moveSome(m_old.size()); }

    std::vector<quint32> m_slots;  // id + 1; 0 is empty
    std::vector<quint32> m_old;    // the table before the last growth, while it is being emptied
    std::vector<quint32> m_hashes; // by id
    size_t m_size = 0;
    size_t m_moved = 0; // old slots looked at so far
};

} // namespace ratescope::ui
