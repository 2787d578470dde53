#include "keytree.h"

#include <QHashFunctions>

#include <cstring>

namespace ratescope::ui {

KeyTree::KeyTree(QByteArray separator)
{
    clear(std::move(separator));
}

void KeyTree::clear(QByteArray separator)
{
    m_separator = std::move(separator);
    m_chunks.clear();
    m_chunkUsed = kChunkSize;
    std::deque<Group>().swap(m_groups);
    std::deque<Key>().swap(m_keys);
    m_groupIndex.clear();
    m_keyIndex.clear();
    m_removedKeys = 0;
    std::vector<bool>().swap(m_rowsStale);
    m_groups.emplace_back(); // the root
}

void KeyTree::reserve(size_t keys)
{
    if (!m_keys.empty())
        return;
    m_keyIndex.reserve(keys);
}

bool KeyTree::store(QByteArrayView text, quint32 *at)
{
    const auto length = quint64(text.size());
    if (length > kChunkSize)
        return false;
    if (m_chunkUsed + length > kChunkSize) {
        if (m_chunks.size() >= (size_t(1) << (32 - kChunkBits)))
            return false; // 4 GiB of names: far beyond what a console should hold
        m_chunks.emplace_back(new char[kChunkSize], std::default_delete<char[]>());
        m_chunkUsed = 0;
    }
    *at = quint32((m_chunks.size() - 1) << kChunkBits) | m_chunkUsed;
    if (length)
        std::memcpy(m_chunks.back().get() + m_chunkUsed, text.data(), length);
    m_chunkUsed += quint32(length);
    return true;
}

size_t KeyTree::groupHash(quint32 parent, QByteArrayView segment) const
{
    return qHash(segment, size_t(parent) * 0x9E3779B97F4A7C15ull);
}

size_t KeyTree::keyHash(quint32 group, QByteArrayView name) const
{
    return qHash(name, size_t(group) * 0xC2B2AE3D27D4EB4Full + 1);
}

quint32 KeyTree::findGroup(quint32 parent, QByteArrayView segment) const
{
    return m_groupIndex.find(groupHash(parent, segment),
                             [&](quint32 id) { return m_groups[id].parent == parent && groupName(id) == segment; });
}

quint32 KeyTree::addGroup(quint32 parent, QByteArrayView segment)
{
    quint32 at = 0;
    if (m_groups.size() >= kNone - 1 || !store(segment, &at))
        return kNone;
    const auto id = quint32(m_groups.size());
    Group g;
    g.parent = parent;
    g.row = quint32(m_groups[parent].groups.size());
    g.name = at;
    g.nameLength = quint32(segment.size());
    m_groups.push_back(std::move(g));
    m_groups[parent].groups.push_back(id);
    m_groupIndex.insert(groupHash(parent, segment), id);
    return id;
}

quint32 KeyTree::findKey(quint32 group, QByteArrayView name, size_t hash) const
{
    return m_keyIndex.find(hash, [&](quint32 id) { return m_keys[id].group == group && keyName(id) == name; });
}

quint32 KeyTree::addKey(quint32 group, QByteArrayView name, size_t hash)
{
    quint32 at = 0;
    if (m_keys.size() >= kNone - 1 || !store(name, &at))
        return kNone;
    const auto id = quint32(m_keys.size());
    Group &g = m_groups[group];
    m_keys.push_back({at, quint32(name.size()), group, quint32(g.keys.size()), kNone});
    g.keys.push_back(id);
    for (quint32 a = group; a != kNone; a = m_groups[a].parent)
        ++m_groups[a].keyCount;
    m_keyIndex.insert(hash, id);
    return id;
}

void KeyTree::removeKey(quint32 key)
{
    Key &k = m_keys[key];
    if (k.group == kNone)
        return;
    Group &g = m_groups[k.group];
    const quint32 pos = keyPos(key);
    g.keys.erase(pos);
    for (size_t i = pos; i < g.keys.size(); ++i)
        m_keys[g.keys[i]].pos = quint32(i);
    for (quint32 a = k.group; a != kNone; a = m_groups[a].parent)
        --m_groups[a].keyCount;
    k.group = kNone; // findKey no longer matches it
    ++m_removedKeys;
}

void KeyTree::removeGroup(quint32 group)
{
    Group &g = m_groups[group];
    if (group == kRoot || g.parent == kNone || !g.keys.empty() || !g.groups.empty())
        return;
    Group &parent = m_groups[g.parent];
    const quint32 row = groupRow(group);
    parent.groups.erase(row);
    for (size_t i = row; i < parent.groups.size(); ++i)
        m_groups[parent.groups[i]].row = quint32(i);
    g.parent = kNone; // findGroup no longer matches it
}

void KeyTree::countRows(quint32 group) const
{
    // Logically const: rows and positions only cache where each id sits in its parent's lists.
    auto *self = const_cast<KeyTree *>(this);
    const Group &g = m_groups[group];
    for (size_t r = 0; r < g.groups.size(); ++r)
        self->m_groups[g.groups[r]].row = quint32(r);
    for (size_t r = 0; r < g.keys.size(); ++r)
        self->m_keys[g.keys[r]].pos = quint32(r);
    m_rowsStale[group] = false;
}

quint32 KeyTree::findFullKey(QByteArrayView key) const
{
    quint32 group = kRoot;
    qsizetype from = 0;
    if (!m_separator.isEmpty()) {
        for (qsizetype next; (next = key.indexOf(QByteArrayView(m_separator), from)) >= 0; from = next + m_separator.size()) {
            group = findGroup(group, key.sliced(from, next - from));
            if (group == kNone)
                return kNone;
        }
    }
    return findKey(group, key.sliced(from));
}

QByteArray KeyTree::groupPath(quint32 group) const
{
    std::vector<quint32> chain;
    for (quint32 g = group; g != kRoot && g != kNone; g = m_groups[g].parent)
        chain.push_back(g);
    QByteArray path;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        if (it != chain.rbegin())
            path += m_separator;
        path += groupName(*it);
    }
    return path;
}

QByteArray KeyTree::fullKey(quint32 key) const
{
    const Key &k = m_keys[key];
    if (k.group == kRoot)
        return keyName(key).toByteArray();
    return groupPath(k.group) + m_separator + keyName(key).toByteArray();
}

size_t KeyTree::memoryUsage() const
{
    size_t bytes = m_chunks.size() * kChunkSize + m_chunks.capacity() * sizeof(m_chunks[0]) + m_rowsStale.capacity() / 8;
    bytes += m_keys.size() * sizeof(Key) + m_groups.size() * sizeof(Group);
    for (const Group &g : m_groups)
        bytes += g.groups.heapBytes() + g.keys.heapBytes();
    return bytes + m_groupIndex.memoryUsage() + m_keyIndex.memoryUsage();
}

} // namespace ratescope::ui
