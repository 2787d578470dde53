// The key browser's model: keys grouped by a separator with a count per group, and the
// limiter columns (algorithm, used/limit, remaining, TTL, memory) filled lazily per key.
// Keys arrive a SCAN page at a time and are inserted with one beginInsertRows per group;
// the model is reset only when the keyspace is read again.
#pragma once

#include <functional>
#include <optional>

#include "keys/keydetails.h"
#include "keytree.h"

#include <QAbstractItemModel>
#include <QByteArrayList>

namespace ratescope::ui {

class KeyTreeModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { KeyColumn, AlgorithmColumn, UsageColumn, RemainingColumn, TtlColumn, MemoryColumn, ColumnCount };
    enum Role {
        KeyRole = Qt::UserRole + 1, // QByteArray: the full key (keys), the path (groups)
        IsGroupRole,                // bool
        KeyCountRole,               // qint64: keys below a group; 1 for a key
        UsageFractionRole,          // double 0..1: used / limit, for the usage bar; invalid when unknown
        PatternRole,                // QByteArray: SCAN MATCH pattern for the key or all of a group
        ShardBaseRole,              // QByteArray: for a group of one limiter's shards 0..N-1, the limiter (their base)
    };

    explicit KeyTreeModel(QObject *parent = nullptr);

    // Forgets every key and detail (a reset); the next keys are grouped by `separator`.
    void clear(const QByteArray &separator);
    QByteArray separator() const { return m_tree.separator(); }
    // Room for about this many keys, reserved up front (DBSIZE, before an unfiltered scan).
    void reserve(qint64 keys);
    // Adds a page of keys; keys already present (SCAN may repeat itself) are ignored.
    void addKeys(const QByteArrayView *keys, size_t count);
    void addKeys(const QByteArrayList &keys);
    qint64 keyCount() const { return m_tree.keyCount(); }
    qint64 unlistedCount() const { return m_unlisted; } // names too long to hold
    // Sorts the children of every group by name (groups first, then keys). Keys that arrive
    // later are appended after the sorted ones.
    void sortByName();
    // Sorts one group's children (invalid index: the top level) unless it has more than
    // maxChildren: what a big keyspace gets, group by group, as the user opens them. Returns
    // whether the group is in order now.
    bool sortGroup(const QModelIndex &group, size_t maxChildren);
    // Bumped by clear(): answers for an older generation are stale.
    quint64 generation() const { return m_generation; }

    // Lazy columns. Ids are stable until clear().
    static constexpr quint32 kNoKey = KeyTree::kNone;
    quint32 keyId(const QModelIndex &index) const;
    QModelIndex indexOfKey(quint32 id, int column = KeyColumn) const;
    QByteArray fullKey(quint32 id) const { return m_tree.fullKey(id); }
    // Of the given keys, those without details younger than maxAgeMs and not already
    // being read; they are marked as being read.
    std::vector<quint32> claimStale(const std::vector<quint32> &ids, qint64 maxAgeMs);
    // The clock the details' ages are measured on (milliseconds, steady); tests set their own.
    void setClock(std::function<qint64()> nowMs) { m_clock = std::move(nowMs); }
    void setDetails(const std::vector<quint32> &ids, std::vector<KeyDetails> details);
    void releaseClaims(const std::vector<quint32> &ids); // the read failed: try again later
    // Keys that no longer exist leave the listing (and groups they leave empty).
    void removeKeys(const std::vector<quint32> &ids);
    // The id of a listed key, or kNoKey.
    quint32 findKey(const QByteArray &key) const;
    void expireDetails(); // every row's details are old (the policies changed): claimed again, shown until then
    const KeyDetails *details(quint32 id) const;
    size_t detailsCount() const { return m_slots.size() - m_freeSlots.size(); }
    // Drops details of keys not in `keep`, when more than `limit` are held.
    void trimDetails(size_t limit, const std::vector<quint32> &keep);

    // Heap bytes behind the names (arena, records, indexes); details not included.
    size_t treeMemoryUsage() const { return m_tree.memoryUsage(); }

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    bool hasChildren(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;

    // A group that holds exactly the shards <group>:0..N-1 of one limiter: their
    // count, and once every shard is read with limits, used summed against their limits.
    struct ShardSummary {
        int count = 0;
        QString label;
        bool complete = false;
        qint64 used = 0;
        qint64 limit = 0;
    };
    std::optional<ShardSummary> shardSummary(quint32 group) const;

private:
    struct DetailsSlot {
        KeyDetails details;
        qint64 readAtMs = -1; // steady clock; -1: never read
        bool reading = false;
    };

    static quintptr groupTag(quint32 id) { return (quintptr(1) << 32) | id; }
    static quintptr keyTag(quint32 id) { return (quintptr(2) << 32) | id; }
    static bool isGroupTag(quintptr tag) { return (tag >> 32) == 1; }
    static quint32 idOf(quintptr tag) { return quint32(tag & 0xffffffffu); }

    QModelIndex groupIndex(quint32 group, int column = KeyColumn) const;
    int keyRow(quint32 id) const;
    QVariant groupData(quint32 group, int column, int role) const;
    QVariant keyData(quint32 key, int column, int role) const;
    DetailsSlot &slotFor(quint32 key);
    void sortChildren(quint32 group);
    void markUnsorted(quint32 group)
    {
        if (group < m_sorted.size())
            m_sorted[group] = false;
    }
    QModelIndex moved(const QModelIndex &old) const; // after a sort

    KeyTree m_tree;
    std::vector<DetailsSlot> m_slots;
    std::vector<quint32> m_freeSlots;
    qint64 m_unlisted = 0;
    std::vector<bool> m_sorted; // by group: children in name order
    quint64 m_generation = 0;
    std::function<qint64()> m_clock; // empty: the steady clock
};

} // namespace ratescope::ui
