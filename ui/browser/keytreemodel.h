// The key browser's model: keys grouped by a separator with a count per group, and the
// limiter columns (algorithm, used/limit, remaining, TTL, memory) filled lazily per key.
// Keys arrive a SCAN page at a time and are inserted with one beginInsertRows per group (while
// a listing runs, a big group shows its new rows every second: setOrderPaced); the model is
// reset only when the keyspace is read again. Kept in order (setKeptInOrder), a
// group whose children arrived out of natural order is sorted on a thread of its own and
// rearranged with a layout change, whatever its size.
#pragma once

#include <functional>
#include <optional>

#include "keys/keydetails.h"
#include "keytree.h"

#include <QAbstractItemModel>
#include <QByteArrayList>
#include <QElapsedTimer>
#include <QTimer>

#include <memory>

namespace ratescope::ui {

class OrderRun;
struct OrderRound;
struct OrderCache;

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
    ~KeyTreeModel() override;

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
    // later are appended after the sorted ones (unless the model is kept in order).
    void sortByName();
    // Sorts one group's children (invalid index: the top level) unless it has more than
    // maxChildren. Returns whether the group is in order now.
    bool sortGroup(const QModelIndex &group, size_t maxChildren);

    // Kept in order: every group whose children are out of natural order (keys that arrived
    // after others that sort later) is sorted in a background round, at most one round per
    // orderIntervalMs while keys keep coming, and rearranged on the GUI thread with one layout
    // change per round; persistent indexes (the selection, expanded groups, the current
    // index) follow their rows. Keys that arrive during a round go to the next one, which
    // starts no sooner than twice the last round's time after it.
    void setKeptInOrder(bool on);
    void setOrderIntervalMs(int ms) { m_orderIntervalMs = ms; }
    // While keys pour in (a listing on a fast link), a round competes with the listing for the
    // cores and merges into groups that keep growing: paced, no round starts sooner than `ms`
    // after this call nor sooner than `ms` after the last one. 0 ends the pacing; what waits
    // then goes at the usual interval (orderNow() starts it at once).
    // Paced, a group that shows kHoldFrom rows or more also holds the rows that come to it
    // (and everything below them), and shows them every kHeldMs, kShowStep rows at a time
    // kStepGapMs apart: after rows are inserted under an open group, a tree view lays out every
    // open row again (about 20 ms at a million), and growing its table of rows by hundreds of
    // thousands at once costs more than that. The group's count (KeyCountRole) includes them
    // at once. When the pacing ends, the rest are shown the same way; a sort and a removal
    // show them all first.
    void setOrderPaced(int ms);
    static constexpr int kHoldFrom = 50000;
    static constexpr int kHeldMs = 1000;
    static constexpr size_t kShowStep = 100000;
    static constexpr int kStepGapMs = 40;
    // Shows every held row now.
    void showHeld();
    // Some group holds the rows that come to it (shown every kHeldMs, or a step per turn).
    bool isHolding() const { return !m_held.empty(); }
    // Every group's children in natural order (groups first, then keys).
    bool isInOrder() const { return m_disorderedCount == 0; }
    // Sorts here, at once, the groups out of order when they hold at most maxChildren children
    // in all (a few keys that came back, a small keyspace at the end of its listing), with one
    // layout change; else they go to a background round started now.
    void orderNow(size_t maxChildren);
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
    // Not live (the connection is lost): every row's columns are shown as read then, greyed, and
    // say so in their tooltip. Live again, each row stays so until it is read again.
    void setLive(bool live);
    bool isLive() const { return m_live; }
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

signals:
    // Every group is in natural order again (after a background round or orderNow()).
    void inOrder();
    // The last held rows are shown (isHolding() turned false).
    void allShown();

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

    // A group holding rows (setOrderPaced): how many of its child groups and keys are shown,
    // the first of each list (those held were appended after them).
    struct Held {
        quint32 group;
        size_t groups;
        size_t keys;
    };
    const Held *held(quint32 group) const
    {
        for (const Held &h : m_held)
            if (h.group == group)
                return &h;
        return nullptr;
    }
    size_t shownGroups(quint32 group) const
    {
        const Held *h = held(group);
        return h ? h->groups : m_tree.group(group).groups.size();
    }
    size_t shownKeys(quint32 group) const
    {
        const Held *h = held(group);
        return h ? h->keys : m_tree.group(group).keys.size();
    }
    bool groupShown(quint32 group) const; // the group's row is shown (the root: always)
    bool keyShown(quint32 key) const;
    // Whether rows appended to the group now are shown (rather than held, or below a held row);
    // starts holding a big group's rows while paced.
    bool showsNewRows(quint32 group);
    bool showRows(size_t most); // up to `most` more rows of each held group; false: all shown
    void showHeldStep();

    QModelIndex groupIndex(quint32 group, int column = KeyColumn) const;
    int keyRow(quint32 id) const;
    QVariant groupData(quint32 group, int column, int role) const;
    QVariant keyData(quint32 key, int column, int role) const;
    DetailsSlot &slotFor(quint32 key);
    void sortChildren(quint32 group);
    bool isOrdered(quint32 group) const { return group >= m_sorted.size() || m_sorted[group]; } // new groups are empty
    void setOrdered(quint32 group, bool ordered);
    void markReshuffled(quint32 group)
    {
        if (m_reshuffled.size() <= group)
            m_reshuffled.resize(size_t(group) + 1, false);
        m_reshuffled[group] = true;
    }
    void scheduleOrder();
    void startOrderRound();
    void gatherSome(); // reads the round's children, a slice at a time, then starts it
    void applyOrder(const std::shared_ptr<OrderRound> &round);
    void announceIfInOrder();
    bool groupAlive(quint32 group) const { return group == KeyTree::kRoot || m_tree.group(group).parent != KeyTree::kNone; }
    QModelIndex moved(const QModelIndex &old) const; // after a sort
    // The persistent indexes of rows whose group is marked in `groups` (by group id): those a
    // sort of these groups moves.
    QModelIndexList persistentIndexesIn(const std::vector<bool> &groups) const;

    KeyTree m_tree;
    std::vector<DetailsSlot> m_slots;
    std::vector<quint32> m_freeSlots;
    qint64 m_unlisted = 0;
    std::vector<bool> m_sorted;               // by group: children in natural order
    size_t m_disorderedCount = 0;             // groups whose m_sorted is false
    std::vector<quint32> m_disordered;        // groups to sort in the next round (some may be in order by then)
    std::vector<bool> m_queued;               // by group: in m_disordered
    std::vector<quint32> m_inRound;           // the groups the round under way sorts (or is being read for)
    std::shared_ptr<OrderRound> m_gathering;  // a round whose children are being read, if any
    size_t m_gatherGroup = 0;                 // in m_inRound: the group being read
    bool m_gatherBegun = false;               // its task is the round's last
    bool m_gatherKeys = false;                // reading its keys (else its groups)
    size_t m_gatherAt = 0;                    // the next child to read
    size_t m_gatherKeysFrom = 0;              // its first key the round takes
    QTimer m_gatherTimer;                     // the next slice, on the next turn of the event loop
    std::vector<bool> m_reshuffled;           // by group: children removed or sorted here since a round took them
    std::shared_ptr<OrderCache> m_orderCache; // what the rounds sorted, while some group is out of order
    bool m_keptInOrder = false;
    int m_orderIntervalMs = 250;
    int m_pacedMs = 0;          // setOrderPaced()
    QElapsedTimer m_sincePaced; // since setOrderPaced() was last called with a pace
    std::vector<Held> m_held;   // groups holding rows (a few: big ones)
    QTimer m_heldTimer;         // shows them
    OrderRun *m_orderRun = nullptr;
    QTimer m_orderTimer;
    QElapsedTimer m_sinceRound; // since the last round started
    qint64 m_lastRoundMs = 0;   // how long it took to come back
    quint64 m_generation = 0;
    std::function<qint64()> m_clock; // empty: the steady clock
    qint64 nowMs() const;
    bool m_live = true;
    qint64 m_liveSinceMs = -1; // details read before this are not live (on the clock above)
    bool detailsLive(const DetailsSlot &s) const { return m_live && s.readAtMs >= m_liveSinceMs; }
};

} // namespace ratescope::ui
