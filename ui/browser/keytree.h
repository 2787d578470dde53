// The names of a scanned keyspace as a tree of separator-delimited groups, kept lean for
// millions of keys: name bytes stored once in an arena (each key holds only its last
// segment), a 20-byte record per key, a 56-byte record per group, and indexes of 32-bit ids
// that catch SCAN's duplicates. A child's row among its siblings is kept lazily: reordering a
// group of a million children marks their rows stale, and they are counted again, once, when
// one is next asked for.
#pragma once

#include "idindex.h"
#include "idlist.h"

#include <QByteArray>
#include <QByteArrayView>

#include <deque>
#include <memory>
#include <vector>

namespace ratescope::ui {

class KeyTree {
public:
    static constexpr quint32 kNone = IdIndex::kNone;
    static constexpr quint32 kRoot = 0;
    static constexpr qsizetype kMaxNameLength = 1 << 20; // per segment; longer keys are not listed

    struct Group {
        quint32 parent = kNone;
        quint32 row = 0;  // among the parent's child groups; read it through groupRow()
        quint32 name = 0; // the segment, in the arena
        quint32 nameLength = 0;
        quint64 keyCount = 0; // keys anywhere below
        IdList groups;
        IdList keys;
    };
    struct Key {
        quint32 name; // the last segment, in the arena
        quint32 nameLength;
        quint32 group;
        quint32 pos;             // index in its group's keys; read it through keyPos()
        quint32 details = kNone; // the model's details slot, if any
    };

    explicit KeyTree(QByteArray separator = ":");

    // Forgets every key; the separator may change.
    void clear(QByteArray separator);
    // Makes room for about `keys` keys at once, so that growing (rehashing a million names on
    // the GUI thread) does not happen in the middle of a scan.
    void reserve(size_t keys);
    const QByteArray &separator() const { return m_separator; }

    // Ids are handed out in order and never reused: a removed key or group keeps its record,
    // out of every list and index lookup.
    quint32 groupCount() const { return quint32(m_groups.size()); } // ids handed out
    quint32 keyIds() const { return quint32(m_keys.size()); }       // ids handed out
    quint32 keyCount() const { return keyIds() - m_removedKeys; }   // keys listed now
    bool isRemoved(quint32 key) const { return m_keys[key].group == kNone; }
    const Group &group(quint32 id) const { return m_groups[id]; }
    Group &group(quint32 id) { return m_groups[id]; }
    const Key &key(quint32 id) const { return m_keys[id]; }
    Key &key(quint32 id) { return m_keys[id]; }
    QByteArrayView groupName(quint32 id) const { return bytes(m_groups[id].name, m_groups[id].nameLength); }
    QByteArrayView keyName(quint32 id) const { return bytes(m_keys[id].name, m_keys[id].nameLength); }

    quint32 findGroup(quint32 parent, QByteArrayView segment) const;
    // Appends a child group (the caller knows it is new); kNone when the arena is full.
    quint32 addGroup(quint32 parent, QByteArrayView segment);
    quint32 findKey(quint32 group, QByteArrayView name) const { return findKey(group, name, keyHash(group, name)); }
    // With the hash keyHash() gave, when the same name is looked up and then added.
    quint32 findKey(quint32 group, QByteArrayView name, size_t hash) const;
    size_t keyHash(quint32 group, QByteArrayView name) const;
    // Appends a key and counts it in every ancestor; kNone when the name cannot be stored.
    quint32 addKey(quint32 group, QByteArrayView name) { return addKey(group, name, keyHash(group, name)); }
    quint32 addKey(quint32 group, QByteArrayView name, size_t hash);

    // Takes a key out of its group (a key that no longer exists).
    void removeKey(quint32 key);
    // Takes an empty group (no keys, no groups) out of its parent; never the root.
    void removeGroup(quint32 group);
    // Where a child sits among its siblings (a group among its parent's groups, a key among its
    // group's keys), counted again first when its siblings were reordered.
    quint32 groupRow(quint32 group) const
    {
        const quint32 parent = m_groups[group].parent;
        if (parent != kNone && rowsStale(parent))
            countRows(parent);
        return m_groups[group].row;
    }
    quint32 keyPos(quint32 key) const
    {
        const quint32 group = m_keys[key].group;
        if (group != kNone && rowsStale(group))
            countRows(group);
        return m_keys[key].pos;
    }
    // The children of `group` were reordered in place: their rows are counted when next needed.
    void markRowsStale(quint32 group)
    {
        if (m_rowsStale.size() <= group)
            m_rowsStale.resize(size_t(group) + 1, false);
        m_rowsStale[group] = true;
    }

    // The arena's chunks, shared: names read on another thread (a sort) stay valid while it holds
    // them, even after clear(). Bytes once stored never change.
    std::vector<std::shared_ptr<const char[]>> nameChunks() const { return {m_chunks.begin(), m_chunks.end()}; }

    // The key listed under this full name, or kNone.
    quint32 findFullKey(QByteArrayView key) const;

    // The key as Redis knows it: the group path, the separator, the last segment.
    QByteArray fullKey(quint32 key) const;
    // "demo:api" for the group that holds "demo:api:acme"; empty for the root.
    QByteArray groupPath(quint32 group) const;

    // Heap bytes held (arena, records, indexes), for the benchmark and diagnostics.
    size_t memoryUsage() const;

private:
    static constexpr int kChunkBits = 20; // 1 MiB arena chunks; positions are chunk << 20 | offset
    static_assert(kMaxNameLength <= (1 << kChunkBits));
    static constexpr quint32 kChunkSize = 1u << kChunkBits;

    QByteArrayView bytes(quint32 at, quint32 length) const
    {
        return {m_chunks[at >> kChunkBits].get() + (at & (kChunkSize - 1)), qsizetype(length)};
    }
    bool store(QByteArrayView bytes, quint32 *at);
    size_t groupHash(quint32 parent, QByteArrayView segment) const;
    bool rowsStale(quint32 group) const { return group < m_rowsStale.size() && m_rowsStale[group]; }
    void countRows(quint32 group) const; // a cache: rows and positions are derived from the lists

    QByteArray m_separator;
    std::vector<std::shared_ptr<char[]>> m_chunks;
    quint32 m_chunkUsed = kChunkSize;
    // Deques: growing never moves a million records at once.
    std::deque<Group> m_groups;
    std::deque<Key> m_keys;
    IdIndex m_groupIndex;
    IdIndex m_keyIndex;
    quint32 m_removedKeys = 0;
    mutable std::vector<bool> m_rowsStale; // by group: its children's rows and positions need counting
};

} // namespace ratescope::ui
