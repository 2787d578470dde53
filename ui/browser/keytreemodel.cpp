#include "keytreemodel.h"

#include "childorder.h"
#include "keys/shards.h"

#include "displayformat.h"
#include "base/keytext.h"
#include "usagebardelegate.h"

#include <QColor>
#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QFont>
#include <QGuiApplication>
#include <QPalette>

#include <algorithm>
#include <limits>
#include <map>

namespace ratescope::ui {

namespace {

qint64 steadyNowMs()
{
    static QElapsedTimer clock = [] {
        QElapsedTimer t;
        t.start();
        return t;
    }();
    return clock.elapsed();
}

QColor mutedColor()
{
    return QGuiApplication::palette().color(QPalette::PlaceholderText);
}

const QColor kErrorColor(0xb0, 0x2a, 0x1e);

QString nameText(QByteArrayView name)
{
    return name.isEmpty() ? QStringLiteral("(empty)") : QString::fromUtf8(name);
}

} // namespace

KeyTreeModel::KeyTreeModel(QObject *parent)
    : QAbstractItemModel(parent)
{
    m_sorted.assign(1, true); // the root, empty
    m_orderTimer.setSingleShot(true);
    connect(&m_orderTimer, &QTimer::timeout, this, &KeyTreeModel::startOrderRound);
    m_gatherTimer.setSingleShot(true);
    connect(&m_gatherTimer, &QTimer::timeout, this, &KeyTreeModel::gatherSome);
    m_heldTimer.setSingleShot(true);
    connect(&m_heldTimer, &QTimer::timeout, this, &KeyTreeModel::showHeldStep);
}

KeyTreeModel::~KeyTreeModel() = default;

void KeyTreeModel::clear(const QByteArray &separator)
{
    beginResetModel();
    m_tree.clear(separator);
    std::vector<DetailsSlot>().swap(m_slots);
    std::vector<quint32>().swap(m_freeSlots);
    m_unlisted = 0;
    m_sorted.assign(1, true);
    m_disorderedCount = 0;
    std::vector<quint32>().swap(m_disordered);
    std::vector<bool>().swap(m_queued);
    std::vector<bool>().swap(m_reshuffled);
    m_orderCache.reset(); // a round under way keeps its own
    m_inRound.clear();
    m_gathering.reset(); // one being read is dropped; one under way, when it comes back (the generation)
    m_gatherTimer.stop();
    m_orderTimer.stop();
    m_held.clear();
    m_heldTimer.stop();
    ++m_generation;
    endResetModel();
}

void KeyTreeModel::setOrdered(quint32 group, bool ordered)
{
    if (m_sorted.size() <= group)
        m_sorted.resize(size_t(group) + 1, true);
    if (m_sorted[group] != ordered) {
        m_sorted[group] = ordered;
        ordered ? --m_disorderedCount : ++m_disorderedCount;
    }
    if (ordered)
        return;
    if (m_queued.size() <= group)
        m_queued.resize(size_t(group) + 1, false);
    if (!m_queued[group]) {
        m_queued[group] = true;
        m_disordered.push_back(group);
    }
    scheduleOrder();
}

void KeyTreeModel::setKeptInOrder(bool on)
{
    m_keptInOrder = on;
    if (on && !m_orderRun)
        m_orderRun = new OrderRun(this);
    scheduleOrder();
}

void KeyTreeModel::setOrderPaced(int ms)
{
    m_pacedMs = std::max(0, ms);
    if (m_pacedMs > 0)
        m_sincePaced.start();
    m_orderTimer.stop(); // timed again for the new pace
    if (m_pacedMs == 0 && !m_held.empty())
        m_heldTimer.start(0); // the rest shown now, a step per turn
    scheduleOrder();
}

bool KeyTreeModel::showsNewRows(quint32 group)
{
    if (held(group) || !groupShown(group))
        return false;
    if (m_pacedMs == 0 || rowCount(groupIndex(group)) < kHoldFrom)
        return true;
    const KeyTree::Group &g = m_tree.group(group);
    m_held.push_back({group, g.groups.size(), g.keys.size()});
    if (!m_heldTimer.isActive())
        m_heldTimer.start(kHeldMs);
    return false;
}

void KeyTreeModel::showHeld()
{
    m_heldTimer.stop();
    if (m_held.empty())
        return;
    showRows(std::numeric_limits<size_t>::max());
    m_held.clear();
    emit allShown();
}

void KeyTreeModel::showHeldStep()
{
    // A tree view lays out its open rows again after an insertion, and growing its table of
    // rows by a few hundred thousand at once costs it more than the layout itself: a step at
    // a time, each laid out in a turn of its own.
    if (showRows(kShowStep))
        m_heldTimer.start(kStepGapMs); // a turn for the view's layout, alone
    else if (m_pacedMs > 0 && !m_held.empty())
        m_heldTimer.start(kHeldMs); // the rows that come next
    else if (!m_held.empty()) {
        m_held.clear(); // nothing held any more
        emit allShown();
    }
}

bool KeyTreeModel::showRows(size_t most)
{
    // Each held group is itself shown (it was when it began holding, and rows leave only after
    // showHeld()), so its index is good throughout.
    bool more = false;
    for (Held &h : m_held) {
        const KeyTree::Group &g = m_tree.group(h.group);
        const QModelIndex parent = groupIndex(h.group);
        size_t left = most;
        if (h.groups < g.groups.size()) {
            const size_t n = std::min(left, g.groups.size() - h.groups);
            beginInsertRows(parent, int(h.groups), int(h.groups + n) - 1);
            h.groups += n;
            endInsertRows();
            left -= n;
        }
        if (h.keys < g.keys.size() && left > 0) {
            const size_t n = std::min(left, g.keys.size() - h.keys);
            const int first = int(h.groups + h.keys);
            beginInsertRows(parent, first, first + int(n) - 1);
            h.keys += n;
            endInsertRows();
        }
        more = more || h.groups < g.groups.size() || h.keys < g.keys.size();
    }
    return more;
}

bool KeyTreeModel::groupShown(quint32 group) const
{
    if (m_held.empty())
        return true;
    for (quint32 c = group; c != KeyTree::kRoot && c != KeyTree::kNone;) {
        const quint32 parent = m_tree.group(c).parent;
        if (const Held *h = held(parent); h && m_tree.groupRow(c) >= h->groups)
            return false;
        c = parent;
    }
    return true;
}

bool KeyTreeModel::keyShown(quint32 key) const
{
    const quint32 group = m_tree.key(key).group;
    if (group == KeyTree::kNone)
        return false;
    const Held *h = held(group);
    return (!h || m_tree.keyPos(key) < h->keys) && groupShown(group);
}

void KeyTreeModel::scheduleOrder()
{
    if (!m_keptInOrder || m_disordered.empty() || m_orderTimer.isActive() || m_gathering || (m_orderRun && m_orderRun->isRunning()))
        return;
    // While keys keep coming, a round at most every m_orderIntervalMs (or the pace), and
    // twice as long apart as the last one took: each round merges into every child of the
    // groups it sorts, and the listing needs the cores too.
    const qint64 every = std::max<qint64>(m_pacedMs > 0 ? m_pacedMs : m_orderIntervalMs, 3 * m_lastRoundMs);
    qint64 since = m_sinceRound.isValid() ? m_sinceRound.elapsed() : every;
    if (m_pacedMs > 0)
        since = std::min(since, m_sincePaced.elapsed());
    m_orderTimer.start(int(std::clamp<qint64>(every - since, 0, every)));
}

void KeyTreeModel::startOrderRound()
{
    if (!m_keptInOrder || !m_orderRun || m_orderRun->isRunning() || m_gathering)
        return;
    m_inRound.clear();
    for (const quint32 id : m_disordered) {
        m_queued[id] = false;
        if (!isOrdered(id) && groupAlive(id))
            m_inRound.push_back(id);
    }
    std::vector<quint32>().swap(m_disordered);
    if (m_inRound.empty())
        return;
    if (!m_orderCache)
        m_orderCache = std::make_shared<OrderCache>();
    m_gathering = std::make_shared<OrderRound>();
    m_gathering->generation = m_generation;
    m_gatherGroup = 0;
    m_gatherBegun = false;
    m_sinceRound.start();
    gatherSome();
}

void KeyTreeModel::gatherSome()
{
    if (!m_gathering)
        return;
    // The children's names are read here, a slice per turn of the event loop: a round of a
    // million keys reads a million records, scattered (each page spreads over every group).
    constexpr int kSliceMs = 4;
    constexpr size_t kAhead = 16; // records asked for ahead, so that their misses overlap
    QElapsedTimer slice;
    slice.start();
    size_t read = 0;
    const auto entry = [](QByteArrayView name, quint32 id) { return OrderEntry{name.data(), quint32(name.size()), id}; };
    const auto sliceOver = [&] { return (++read & 1023) == 0 && slice.elapsed() >= kSliceMs; };
    while (m_gatherGroup < m_inRound.size()) {
        const quint32 id = m_inRound[m_gatherGroup];
        const bool changed = !groupAlive(id) || isOrdered(id) || (id < m_reshuffled.size() && m_reshuffled[id]);
        if (m_gatherBegun && changed) {
            // Sorted here, emptied or reshuffled since its reading began: read again from the
            // start (or not at all, when it is in order or gone).
            m_gathering->tasks.pop_back();
            m_gatherBegun = false;
        }
        if (!m_gatherBegun) {
            if (!groupAlive(id) || isOrdered(id)) {
                ++m_gatherGroup;
                continue;
            }
            // Only the children that came since the group's last round (all of them when some
            // were removed or sorted here since): the round merges them into what it sorted then.
            m_gatherAt = 0;
            m_gatherKeysFrom = 0;
            if (id < m_reshuffled.size() && m_reshuffled[id]) {
                m_orderCache->groups.erase(id);
                m_reshuffled[id] = false;
            } else if (auto it = m_orderCache->groups.find(id); it != m_orderCache->groups.end()) {
                m_gatherAt = it->second.groups.size();
                m_gatherKeysFrom = it->second.keys.size();
            }
            const KeyTree::Group &g = m_tree.group(id);
            OrderTask task;
            task.group = id;
            task.newGroups.reserve(g.groups.size() - std::min(g.groups.size(), m_gatherAt));
            task.newKeys.reserve(g.keys.size() - std::min(g.keys.size(), m_gatherKeysFrom));
            m_gathering->tasks.push_back(std::move(task));
            m_gatherKeys = false;
            m_gatherBegun = true;
        }
        OrderTask &task = m_gathering->tasks.back();
        const KeyTree::Group &g = m_tree.group(id);
        // The list's children from m_gatherAt on; false when the slice is over first.
        const auto readList = [&](const IdList &list, std::vector<OrderEntry> &out, auto record, auto name) {
            for (; m_gatherAt < list.size(); ++m_gatherAt) {
                if (m_gatherAt + kAhead < list.size())
                    __builtin_prefetch(record(list[m_gatherAt + kAhead]));
                out.push_back(entry(name(list[m_gatherAt]), list[m_gatherAt]));
                if (sliceOver()) {
                    ++m_gatherAt;
                    m_gatherTimer.start(0);
                    return false;
                }
            }
            return true;
        };
        if (!m_gatherKeys) {
            if (!readList(
                    g.groups, task.newGroups, [this](quint32 child) { return &m_tree.group(child); },
                    [this](quint32 child) { return m_tree.groupName(child); }))
                return;
            m_gatherKeys = true;
            m_gatherAt = m_gatherKeysFrom;
        }
        if (!readList(
                g.keys, task.newKeys, [this](quint32 key) { return &m_tree.key(key); },
                [this](quint32 key) { return m_tree.keyName(key); }))
            return;
        m_gatherBegun = false;
        ++m_gatherGroup;
    }
    std::shared_ptr<OrderRound> round = std::move(m_gathering);
    m_gathering.reset();
    if (round->tasks.empty()) {
        scheduleOrder();
        return;
    }
    round->chunks = m_tree.nameChunks();
    round->cache = m_orderCache;
    m_orderRun->start(round, [this](std::shared_ptr<OrderRound> sorted) {
        m_lastRoundMs = m_sinceRound.elapsed();
        applyOrder(sorted);
        scheduleOrder(); // the keys that came meanwhile
    });
}

void KeyTreeModel::applyOrder(const std::shared_ptr<OrderRound> &round)
{
    if (round->generation != m_generation)
        return;
    m_inRound.clear();
    // Each group's lists as they are now: the round's children first (unless some left
    // meanwhile: then it waits for the next round), then those that came since, which keep
    // the group in order only if they follow on.
    const auto less = [this](bool groups) {
        return [this, groups](quint32 a, quint32 b) {
            return groups ? naturalLess(m_tree.groupName(a), m_tree.groupName(b)) : naturalLess(m_tree.keyName(a), m_tree.keyName(b));
        };
    };
    std::vector<const OrderTask *> applied;
    for (const OrderTask &task : round->tasks) {
        if (!groupAlive(task.group) || isOrdered(task.group))
            continue;
        const KeyTree::Group &g = m_tree.group(task.group);
        if ((task.group < m_reshuffled.size() && m_reshuffled[task.group]) || g.groups.size() < task.groups.size() ||
            g.keys.size() < task.keys.size()) {
            setOrdered(task.group, false); // sorted again next round, as it is then
            continue;
        }
        applied.push_back(&task);
    }
    if (applied.empty())
        return;
    showHeld(); // rows move: every one shown first (the view lays them out once, after both)
    std::vector<bool> touched(m_tree.groupCount(), false);
    QList<QPersistentModelIndex> parents;
    for (const OrderTask *task : applied)
        touched[task->group] = true;
    if (applied.size() <= 8) // else the whole model: the views look at every group anyway
        for (const OrderTask *task : applied)
            if (task->group != KeyTree::kRoot)
                parents << QPersistentModelIndex(groupIndex(task->group));
    emit layoutAboutToBeChanged(parents, QAbstractItemModel::VerticalSortHint);
    const QModelIndexList before = persistentIndexesIn(touched);
    QModelIndexList after;
    for (const OrderTask *task : applied) {
        KeyTree::Group &g = m_tree.group(task->group);
        std::copy(task->groups.begin(), task->groups.end(), g.groups.begin());
        std::copy(task->keys.begin(), task->keys.end(), g.keys.begin());
        m_tree.markRowsStale(task->group);
        const auto follows = [&](IdList &list, size_t sorted, bool groups) {
            const auto lessThan = less(groups);
            if (sorted == list.size())
                return true;
            if (sorted > 0 && lessThan(list[sorted], list[sorted - 1]))
                return false;
            return std::is_sorted(list.begin() + sorted, list.end(), lessThan);
        };
        const bool inOrder = follows(g.groups, task->groups.size(), true) && follows(g.keys, task->keys.size(), false);
        setOrdered(task->group, inOrder);
    }
    for (const QModelIndex &i : std::as_const(before))
        after << moved(i);
    changePersistentIndexList(before, after);
    emit layoutChanged(parents, QAbstractItemModel::VerticalSortHint);
    announceIfInOrder();
}

QModelIndexList KeyTreeModel::persistentIndexesIn(const std::vector<bool> &groups) const
{
    QModelIndexList in;
    for (const QModelIndex &i : persistentIndexList()) {
        const quintptr tag = i.internalId();
        const quint32 parent = isGroupTag(tag) ? m_tree.group(idOf(tag)).parent : m_tree.key(idOf(tag)).group;
        if (parent != KeyTree::kNone && groups[parent])
            in << i;
    }
    return in;
}

void KeyTreeModel::announceIfInOrder()
{
    if (!isInOrder())
        return;
    m_orderCache.reset(); // nothing left to merge into (a round under way holds its own)
    emit inOrder();
}

void KeyTreeModel::orderNow(size_t maxChildren)
{
    // Those queued and those in the round under way (whose result, come back, finds them in
    // order and is dropped).
    std::vector<quint32> candidates = m_disordered;
    candidates.insert(candidates.end(), m_inRound.begin(), m_inRound.end());
    std::vector<quint32> here;
    size_t children = 0;
    for (const quint32 id : candidates) {
        if (isOrdered(id) || !groupAlive(id) || std::find(here.begin(), here.end(), id) != here.end())
            continue;
        const KeyTree::Group &g = m_tree.group(id);
        children += g.groups.size() + g.keys.size();
        here.push_back(id);
    }
    if (!here.empty() && children <= maxChildren) {
        showHeld();
        std::vector<bool> touched(m_tree.groupCount(), false);
        for (const quint32 id : here)
            touched[id] = true;
        emit layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
        const QModelIndexList before = persistentIndexesIn(touched);
        QModelIndexList after;
        for (const quint32 id : here)
            sortChildren(id);
        for (const QModelIndex &i : std::as_const(before))
            after << moved(i);
        changePersistentIndexList(before, after);
        emit layoutChanged({}, QAbstractItemModel::VerticalSortHint);
        if (isInOrder())
            emit inOrder();
    }
    // What is left (too big to sort here) goes to a round now (unless one is being read or sorted).
    if (!m_keptInOrder || !m_orderRun || m_orderRun->isRunning() || m_gathering)
        return;
    m_orderTimer.stop();
    startOrderRound();
}

void KeyTreeModel::reserve(qint64 keys)
{
    m_tree.reserve(size_t(std::clamp<qint64>(keys, 0, 100000000)));
}

void KeyTreeModel::addKeys(const QByteArrayList &keys)
{
    std::vector<QByteArrayView> views(keys.begin(), keys.end());
    addKeys(views.data(), views.size());
}

void KeyTreeModel::addKeys(const QByteArrayView *keys, size_t count)
{
    if (count == 0)
        return;
    const QByteArray sep = m_tree.separator();
    struct Cursor {
        quint32 group = KeyTree::kRoot;
        quint32 child = KeyTree::kNone; // the current segment's group, when it was there already
        qsizetype offset = 0;           // where the unresolved rest of the key starts
        qsizetype next = -1;            // the separator ending the current segment
    };
    std::vector<Cursor> cursors(count);
    std::vector<size_t> active(count);
    for (size_t i = 0; i < count; ++i)
        active[i] = i;
    auto segment = [&](size_t i) {
        const Cursor &c = cursors[i];
        return keys[i].sliced(c.offset, c.next - c.offset);
    };

    // Groups, level by level: the missing children of each parent are inserted together.
    while (!active.empty()) {
        std::map<quint32, std::vector<QByteArrayView>> missing;
        std::vector<size_t> deeper;
        for (size_t i : active) {
            Cursor &c = cursors[i];
            c.next = sep.isEmpty() ? -1 : keys[i].indexOf(QByteArrayView(sep), c.offset);
            if (c.next < 0)
                continue; // the rest is the key's own name
            const QByteArrayView seg = segment(i);
            if (seg.size() > KeyTree::kMaxNameLength) {
                c.group = KeyTree::kNone;
                continue;
            }
            c.child = m_tree.findGroup(c.group, seg);
            if (c.child == KeyTree::kNone)
                missing[c.group].push_back(seg);
            deeper.push_back(i);
        }
        for (auto &[parent, segs] : missing) {
            std::sort(segs.begin(), segs.end(), naturalLess);
            segs.erase(std::unique(segs.begin(), segs.end()), segs.end());
            const KeyTree::Group &p = m_tree.group(parent);
            const int first = int(p.groups.size());
            // Still in order when they all come after the last one (one comparison).
            if (!p.groups.empty() && naturalLess(segs.front(), m_tree.groupName(p.groups[p.groups.size() - 1])))
                setOrdered(parent, false);
            const bool shown = showsNewRows(parent);
            if (shown)
                beginInsertRows(groupIndex(parent), first, first + int(segs.size()) - 1);
            for (QByteArrayView seg : segs)
                m_tree.addGroup(parent, seg);
            if (shown)
                endInsertRows();
        }
        active.clear();
        for (size_t i : deeper) {
            Cursor &c = cursors[i];
            c.group = c.child != KeyTree::kNone ? c.child : m_tree.findGroup(c.group, segment(i));
            c.offset = c.next + sep.size();
            if (c.group != KeyTree::kNone)
                active.push_back(i);
        }
    }

    // Keys: one insertion per group, in natural order. One flat list sorted by group, and by
    // name within a group: no container per group, and each name hashed once.
    struct Fresh {
        quint32 group;
        QByteArrayView name;
        size_t hash;
    };
    std::vector<Fresh> fresh;
    fresh.reserve(count);
    for (size_t i = 0; i < count; ++i) {
        const Cursor &c = cursors[i];
        const QByteArrayView name = keys[i].sliced(c.offset);
        if (c.group == KeyTree::kNone || name.size() > KeyTree::kMaxNameLength) {
            ++m_unlisted;
            continue;
        }
        const size_t hash = m_tree.keyHash(c.group, name);
        if (m_tree.findKey(c.group, name, hash) == KeyTree::kNone)
            fresh.push_back({c.group, name, hash});
    }
    std::sort(fresh.begin(), fresh.end(),
              [](const Fresh &a, const Fresh &b) { return a.group != b.group ? a.group < b.group : naturalLess(a.name, b.name); });
    // The same name twice in one page (SCAN may return a key again): one row.
    fresh.erase(
        std::unique(fresh.begin(), fresh.end(), [](const Fresh &a, const Fresh &b) { return a.group == b.group && a.name == b.name; }),
        fresh.end());
    std::map<quint32, std::pair<int, int>> countRows; // parent -> first, last child group whose count changed
    for (auto run = fresh.begin(); run != fresh.end();) {
        const quint32 group = run->group;
        const auto end = std::find_if(run, fresh.end(), [group](const Fresh &f) { return f.group != group; });
        const KeyTree::Group &g = m_tree.group(group);
        const int first = int(g.groups.size() + g.keys.size());
        // Still in order when they all come after the last one (one comparison, and none for a
        // group already waiting for its sort: reading its last name is a cache miss per group).
        if (isOrdered(group) && !g.keys.empty() && naturalLess(run->name, m_tree.keyName(g.keys[g.keys.size() - 1])))
            setOrdered(group, false);
        const bool shown = showsNewRows(group);
        if (shown)
            beginInsertRows(groupIndex(group), first, first + int(end - run) - 1);
        for (; run != end; ++run)
            m_tree.addKey(group, run->name, run->hash);
        if (shown)
            endInsertRows();
        // Each group's count changed, and its ancestors'; a parent already noted had its own
        // ancestors noted then.
        for (quint32 a = group; a != KeyTree::kRoot; a = m_tree.group(a).parent) {
            const int row = int(m_tree.groupRow(a));
            auto [it, inserted] = countRows.try_emplace(m_tree.group(a).parent, row, row);
            if (!inserted) {
                it->second.first = std::min(it->second.first, row);
                it->second.second = std::max(it->second.second, row);
                break;
            }
        }
    }
    for (const auto &[parent, rows] : countRows) {
        // Of the rows shown (not those held, nor any below a held row).
        const int last = std::min(rows.second, int(shownGroups(parent)) - 1);
        if (rows.first > last || !groupShown(parent))
            continue;
        const QModelIndex p = groupIndex(parent);
        emit dataChanged(index(rows.first, KeyColumn, p), index(last, KeyColumn, p), {Qt::DisplayRole, KeyCountRole});
    }
}

void KeyTreeModel::sortChildren(quint32 id)
{
    KeyTree::Group &g = m_tree.group(id);
    // In natural order, as a person looks for them: user:2 before user:10.
    if (!isOrdered(id)) {
        markReshuffled(id);
        sortAfterSortedRun(g.groups.begin(), g.groups.end(),
                           [&](quint32 a, quint32 b) { return naturalLess(m_tree.groupName(a), m_tree.groupName(b)); });
        sortAfterSortedRun(g.keys.begin(), g.keys.end(), [&](quint32 a, quint32 b) { return naturalLess(m_tree.keyName(a), m_tree.keyName(b)); });
        m_tree.markRowsStale(id);
    }
    setOrdered(id, true);
}

QModelIndex KeyTreeModel::moved(const QModelIndex &old) const
{
    const quintptr tag = old.internalId();
    return isGroupTag(tag) ? groupIndex(idOf(tag), old.column()) : indexOfKey(idOf(tag), old.column());
}

void KeyTreeModel::sortByName()
{
    showHeld();
    emit layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
    const QModelIndexList before = persistentIndexList();
    for (quint32 id = 0; id < m_tree.groupCount(); ++id)
        if (groupAlive(id))
            sortChildren(id);
    QModelIndexList after;
    after.reserve(before.size());
    for (const QModelIndex &i : before)
        after << moved(i);
    changePersistentIndexList(before, after);
    emit layoutChanged({}, QAbstractItemModel::VerticalSortHint);
    announceIfInOrder();
}

bool KeyTreeModel::sortGroup(const QModelIndex &group, size_t maxChildren)
{
    if (group.isValid() && (group.column() != KeyColumn || !isGroupTag(group.internalId())))
        return false;
    const quint32 id = group.isValid() ? idOf(group.internalId()) : KeyTree::kRoot;
    if (isOrdered(id))
        return true;
    const KeyTree::Group &g = m_tree.group(id);
    if (g.groups.size() + g.keys.size() > maxChildren)
        return false;
    showHeld();
    const QList<QPersistentModelIndex> parents =
        group.isValid() ? QList<QPersistentModelIndex>{QPersistentModelIndex(group)} : QList<QPersistentModelIndex>{};
    emit layoutAboutToBeChanged(parents, QAbstractItemModel::VerticalSortHint);
    QModelIndexList before, after;
    for (const QModelIndex &i : persistentIndexList())
        if (i.parent() == group)
            before << i;
    sortChildren(id);
    for (const QModelIndex &i : before)
        after << moved(i);
    changePersistentIndexList(before, after);
    emit layoutChanged(parents, QAbstractItemModel::VerticalSortHint);
    announceIfInOrder();
    return true;
}

// --- Lazy columns ---

quint32 KeyTreeModel::keyId(const QModelIndex &index) const
{
    if (!index.isValid() || isGroupTag(index.internalId()))
        return kNoKey;
    return idOf(index.internalId());
}

int KeyTreeModel::keyRow(quint32 id) const
{
    return int(shownGroups(m_tree.key(id).group) + m_tree.keyPos(id));
}

QModelIndex KeyTreeModel::indexOfKey(quint32 id, int column) const
{
    if (id >= m_tree.keyIds() || !keyShown(id))
        return {};
    return createIndex(keyRow(id), column, keyTag(id));
}

QModelIndex KeyTreeModel::groupIndex(quint32 group, int column) const
{
    if (group == KeyTree::kRoot || group >= m_tree.groupCount() || !groupShown(group))
        return {};
    return createIndex(int(m_tree.groupRow(group)), column, groupTag(group));
}

KeyTreeModel::DetailsSlot &KeyTreeModel::slotFor(quint32 key)
{
    KeyTree::Key &k = m_tree.key(key);
    if (k.details == KeyTree::kNone) {
        if (!m_freeSlots.empty()) {
            k.details = m_freeSlots.back();
            m_freeSlots.pop_back();
            m_slots[k.details] = DetailsSlot{};
        } else {
            k.details = quint32(m_slots.size());
            m_slots.emplace_back();
        }
    }
    return m_slots[k.details];
}

std::vector<quint32> KeyTreeModel::claimStale(const std::vector<quint32> &ids, qint64 maxAgeMs)
{
    std::vector<quint32> stale;
    const qint64 now = nowMs();
    for (quint32 id : ids) {
        if (id >= m_tree.keyIds() || m_tree.isRemoved(id))
            continue;
        DetailsSlot &s = slotFor(id);
        if (s.reading || (s.readAtMs >= 0 && now - s.readAtMs < maxAgeMs))
            continue;
        s.reading = true;
        stale.push_back(id);
    }
    return stale;
}

void KeyTreeModel::setDetails(const std::vector<quint32> &ids, std::vector<KeyDetails> details)
{
    const qint64 now = nowMs();
    for (size_t i = 0; i < ids.size() && i < details.size(); ++i) {
        const quint32 id = ids[i];
        if (id >= m_tree.keyIds() || m_tree.isRemoved(id))
            continue;
        DetailsSlot &s = slotFor(id);
        s.details = std::move(details[i]);
        s.readAtMs = now;
        s.reading = false;
        if (!keyShown(id))
            continue; // held: shown with its details
        emit dataChanged(indexOfKey(id, AlgorithmColumn), indexOfKey(id, MemoryColumn));
        emit dataChanged(indexOfKey(id, KeyColumn), indexOfKey(id, KeyColumn), {Qt::ToolTipRole, Qt::ForegroundRole});
        // A shard's group row sums its shards.
        const quint32 group = m_tree.key(id).group;
        if (group != KeyTree::kRoot && m_tree.group(group).keys.size() <= size_t(kMaxInferredShards))
            emit dataChanged(groupIndex(group, KeyColumn), groupIndex(group, RemainingColumn));
    }
}

void KeyTreeModel::removeKeys(const std::vector<quint32> &ids)
{
    if (!ids.empty())
        showHeld(); // rows leave: every one shown first
    for (quint32 id : ids) {
        if (id >= m_tree.keyIds() || m_tree.isRemoved(id))
            continue;
        quint32 group = m_tree.key(id).group;
        const int row = keyRow(id);
        beginRemoveRows(groupIndex(group), row, row);
        KeyTree::Key &k = m_tree.key(id);
        if (k.details != KeyTree::kNone) {
            m_slots[k.details] = DetailsSlot{};
            m_freeSlots.push_back(k.details);
            k.details = KeyTree::kNone;
        }
        m_tree.removeKey(id);
        markReshuffled(group);
        endRemoveRows();
        if (m_tree.group(group).keys.size() <= 1 && m_tree.group(group).groups.size() <= 1)
            setOrdered(group, true); // one child or none: in order
        // Groups left empty go too, up to the first that still holds something.
        while (group != KeyTree::kRoot && m_tree.group(group).keys.empty() && m_tree.group(group).groups.empty()) {
            const quint32 parent = m_tree.group(group).parent;
            const int groupRow = int(m_tree.groupRow(group));
            beginRemoveRows(groupIndex(parent), groupRow, groupRow);
            m_tree.removeGroup(group);
            markReshuffled(parent);
            endRemoveRows();
            setOrdered(group, true); // gone: nothing to sort
            if (m_tree.group(parent).keys.size() <= 1 && m_tree.group(parent).groups.size() <= 1)
                setOrdered(parent, true);
            group = parent;
        }
    }
}

quint32 KeyTreeModel::findKey(const QByteArray &key) const
{
    const quint32 id = m_tree.findFullKey(key);
    return id == KeyTree::kNone ? kNoKey : id;
}

void KeyTreeModel::releaseClaims(const std::vector<quint32> &ids)
{
    for (quint32 id : ids)
        if (id < m_tree.keyIds() && m_tree.key(id).details != KeyTree::kNone)
            m_slots[m_tree.key(id).details].reading = false;
}

const KeyDetails *KeyTreeModel::details(quint32 id) const
{
    if (id >= m_tree.keyIds() || m_tree.key(id).details == KeyTree::kNone)
        return nullptr;
    const DetailsSlot &s = m_slots[m_tree.key(id).details];
    return s.readAtMs >= 0 ? &s.details : nullptr;
}

qint64 KeyTreeModel::nowMs() const
{
    return m_clock ? m_clock() : steadyNowMs();
}

void KeyTreeModel::setLive(bool live)
{
    if (live == m_live)
        return;
    m_live = live;
    if (live)
        m_liveSinceMs = nowMs();
    // The rows with details (those read while in view: a few thousand at most), a signal per group.
    std::map<quint32, std::pair<int, int>> rows;
    for (quint32 id = 0; id < m_tree.keyIds(); ++id) {
        const KeyTree::Key &k = m_tree.key(id);
        if (k.details == KeyTree::kNone || m_slots[k.details].readAtMs < 0 || !keyShown(id))
            continue;
        const int row = keyRow(id);
        auto [it, fresh] = rows.try_emplace(k.group, row, row);
        it->second = {std::min(it->second.first, row), std::max(it->second.second, row)};
    }
    for (const auto &[group, range] : rows) {
        const QModelIndex parent = groupIndex(group);
        emit dataChanged(index(range.first, KeyColumn, parent), index(range.second, MemoryColumn, parent),
                         {Qt::ForegroundRole, Qt::ToolTipRole, UsageBarDelegate::StaleRole});
    }
}

void KeyTreeModel::expireDetails()
{
    for (DetailsSlot &s : m_slots)
        s.readAtMs = -1;
}

void KeyTreeModel::trimDetails(size_t limit, const std::vector<quint32> &keep)
{
    if (detailsCount() <= limit)
        return;
    std::vector<bool> kept(m_tree.keyIds(), false);
    for (quint32 id : keep)
        if (id < kept.size())
            kept[id] = true;
    for (quint32 id = 0; id < m_tree.keyIds(); ++id) {
        KeyTree::Key &k = m_tree.key(id);
        if (k.details == KeyTree::kNone || kept[id] || m_slots[k.details].reading)
            continue;
        m_slots[k.details] = DetailsSlot{};
        m_freeSlots.push_back(k.details);
        k.details = KeyTree::kNone;
    }
}

// --- QAbstractItemModel ---

QModelIndex KeyTreeModel::index(int row, int column, const QModelIndex &parent) const
{
    if (row < 0 || column < 0 || column >= ColumnCount)
        return {};
    quint32 group = KeyTree::kRoot;
    if (parent.isValid()) {
        if (!isGroupTag(parent.internalId()) || parent.column() != KeyColumn)
            return {};
        group = idOf(parent.internalId());
    }
    const KeyTree::Group &g = m_tree.group(group);
    const Held *h = held(group);
    const size_t groups = h ? h->groups : g.groups.size();
    if (size_t(row) < groups)
        return createIndex(row, column, groupTag(g.groups[size_t(row)]));
    const size_t k = size_t(row) - groups;
    if (k < (h ? h->keys : g.keys.size()))
        return createIndex(row, column, keyTag(g.keys[k]));
    return {};
}

QModelIndex KeyTreeModel::parent(const QModelIndex &child) const
{
    if (!child.isValid())
        return {};
    const quintptr tag = child.internalId();
    const quint32 id = idOf(tag);
    const quint32 parentGroup = isGroupTag(tag) ? m_tree.group(id).parent : m_tree.key(id).group;
    return groupIndex(parentGroup);
}

int KeyTreeModel::rowCount(const QModelIndex &parent) const
{
    if (!parent.isValid())
        return int(shownGroups(KeyTree::kRoot) + shownKeys(KeyTree::kRoot));
    if (parent.column() != KeyColumn || !isGroupTag(parent.internalId()))
        return 0;
    const quint32 group = idOf(parent.internalId());
    return int(shownGroups(group) + shownKeys(group));
}

int KeyTreeModel::columnCount(const QModelIndex &) const
{
    return ColumnCount;
}

bool KeyTreeModel::hasChildren(const QModelIndex &parent) const
{
    // A group is never empty but for a moment (addKeys inserts it just before its keys; one
    // left empty leaves the listing): answered without reading its record, which a tree view's
    // layout asks of every row shown, a million times for a big group open.
    if (parent.isValid())
        return parent.column() == KeyColumn && isGroupTag(parent.internalId());
    return rowCount() > 0;
}

Qt::ItemFlags KeyTreeModel::flags(const QModelIndex &index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (!isGroupTag(index.internalId()))
        f |= Qt::ItemNeverHasChildren;
    return f;
}

QVariant KeyTreeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
        case KeyColumn:
            return QStringLiteral("Key");
        case AlgorithmColumn:
            return QStringLiteral("Algorithm");
        case UsageColumn:
            return QStringLiteral("Used / limit");
        case RemainingColumn:
            return QStringLiteral("Remaining");
        case TtlColumn:
            return QStringLiteral("TTL");
        case MemoryColumn:
            return QStringLiteral("Memory");
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case KeyColumn:
            return QStringLiteral("Keys grouped by the profile's separator; a group shows how many keys it holds");
        case AlgorithmColumn:
            return QStringLiteral("The limiter format recognised in the key (or its Redis type "
                                  "when it is no limiter)");
        case UsageColumn:
            return QStringLiteral("Used now against the limit in force (policy, or override)");
        case RemainingColumn:
            return QStringLiteral("Capacity left now, and when a denied request would pass");
        case TtlColumn:
            return QStringLiteral("Time until Redis expires the key");
        case MemoryColumn:
            return QStringLiteral("MEMORY USAGE of the key");
        }
    }
    if (role == Qt::TextAlignmentRole && section != KeyColumn && section != AlgorithmColumn)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant KeyTreeModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid())
        return {};
    const quintptr tag = index.internalId();
    return isGroupTag(tag) ? groupData(idOf(tag), index.column(), role) : keyData(idOf(tag), index.column(), role);
}

std::optional<KeyTreeModel::ShardSummary> KeyTreeModel::shardSummary(quint32 group) const
{
    // A group whose keys are exactly the shards 0..N-1 of one limiter (core's rule for shards
    // no policy declares: 2 <= N <= kMaxInferredShards, decimal numbers, no sub-groups).
    const KeyTree::Group &g = m_tree.group(group);
    const qsizetype n = qsizetype(g.keys.size());
    if (!g.groups.empty() || n < 2 || n > kMaxInferredShards)
        return std::nullopt;
    int lowest = std::numeric_limits<int>::max(), highest = -1;
    QSet<int> numbers;
    for (qsizetype i = 0; i < n; ++i) {
        QByteArray base;
        int number = 0;
        if (!splitShardKey("x:" + m_tree.keyName(g.keys[size_t(i)]).toByteArray(), &base, &number) || numbers.contains(number))
            return std::nullopt;
        numbers.insert(number);
        lowest = std::min(lowest, number);
        highest = std::max(highest, number);
    }
    if (lowest != 0 || highest + 1 != n) // from 1: ids more often than shards (core's rule)
        return std::nullopt;
    ShardSummary sum;
    sum.count = int(n);
    // Summed once every shard has been read and holds the same kind of limiter with limits.
    std::optional<KeyFormat> format;
    for (qsizetype i = 0; i < n; ++i) {
        const KeyDetails *d = details(g.keys[size_t(i)]);
        if (!d)
            return sum;
        if (!d->kind.isLimiter() || (format && *format != d->kind.format))
            return std::nullopt; // not shards of one limiter after all
        format = d->kind.format;
        sum.label = d->kind.label();
        if (!d->usage)
            return sum;
        sum.used += d->usage->usedNow;
        sum.limit += d->usage->decision.limit;
    }
    sum.complete = true;
    return sum;
}

QVariant KeyTreeModel::groupData(quint32 group, int column, int role) const
{
    const KeyTree::Group &g = m_tree.group(group);
    const auto shards =
        role == Qt::DisplayRole || role == UsageBarDelegate::ShortTextRole || role == UsageFractionRole || role == Qt::TextAlignmentRole
            ? shardSummary(group)
            : std::nullopt;
    switch (role) {
    case Qt::DisplayRole:
        if (column == KeyColumn)
            return shards ? QStringLiteral("%1 · %2 shards").arg(nameText(m_tree.groupName(group))).arg(shards->count)
                          : QStringLiteral("%1 (%2)").arg(nameText(m_tree.groupName(group)), formatCount(qint64(g.keyCount)));
        if (shards && column == AlgorithmColumn && !shards->label.isEmpty())
            return QStringLiteral("%1 (sharded)").arg(shards->label);
        if (shards && shards->complete && column == UsageColumn)
            return formatUsage(shards->used, shards->limit);
        if (shards && shards->complete && column == RemainingColumn)
            return formatCount(std::max<qint64>(0, shards->limit - shards->used));
        return {};
    case UsageBarDelegate::ShortTextRole:
        if (shards && shards->complete && column == UsageColumn)
            return formatUsageShort(shards->used, shards->limit);
        return {};
    case Qt::TextAlignmentRole:
        if (column != KeyColumn && column != AlgorithmColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case UsageFractionRole:
        if (shards && shards->complete && shards->limit > 0)
            return std::clamp(double(shards->used) / double(shards->limit), 0.0, 1.0);
        return {};
    case Qt::ToolTipRole:
        if (column == KeyColumn)
            return plainToolTip(QStringLiteral("%1\n%2").arg(displayKey(m_tree.groupPath(group) + m_tree.separator() + "*"),
                                                             formatKeys(qint64(g.keyCount))));
        return {};
    case KeyRole:
        return m_tree.groupPath(group);
    case PatternRole:
        return m_tree.groupPath(group) + m_tree.separator() + "*";
    case ShardBaseRole:
        // Shards are named <base>:<n>: a group of them under another separator is no limiter's.
        if (m_tree.separator() == ":" && shardSummary(group))
            return m_tree.groupPath(group);
        return {};
    case IsGroupRole:
        return true;
    case KeyCountRole:
        return qint64(g.keyCount);
    }
    return {};
}

QVariant KeyTreeModel::keyData(quint32 key, int column, int role) const
{
    const KeyDetails *d = details(key);
    const DetailsSlot *slot = d ? &m_slots[m_tree.key(key).details] : nullptr;
    const bool live = slot && detailsLive(*slot);
    switch (role) {
    case KeyRole:
    case PatternRole:
        return m_tree.fullKey(key);
    case IsGroupRole:
        return false;
    case KeyCountRole:
        return qint64(1);
    case UsageBarDelegate::ShortTextRole:
        if (column == UsageColumn && d && d->usage)
            return formatUsageShort(d->usage->usedNow, d->usage->decision.limit);
        return {};
    case UsageBarDelegate::StaleRole:
        return d && !live;
    case UsageFractionRole:
        if (d && d->usage && d->usage->decision.limit > 0)
            return std::clamp(double(d->usage->usedNow) / double(d->usage->decision.limit), 0.0, 1.0);
        return {};
    case Qt::TextAlignmentRole:
        if (column != KeyColumn && column != AlgorithmColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Qt::ForegroundRole:
        if (!d || !live)
            return column == KeyColumn ? QVariant() : QVariant(mutedColor());
        if (column == UsageColumn && !d->problem.isEmpty())
            return kErrorColor;
        if (column == AlgorithmColumn && (!d->kind.isLimiter() || !d->metadata.isEmpty()))
            return mutedColor();
        if (column == UsageColumn && !d->usage)
            return mutedColor();
        if (column == TtlColumn && d->pttlMs == -1)
            return mutedColor();
        if (column == RemainingColumn && d->usage && !d->usage->decision.allowed)
            return kErrorColor;
        return {};
    case Qt::DisplayRole:
        break;
    case Qt::ToolTipRole: {
        QString tip = displayKey(m_tree.fullKey(key));
        if (!d)
            return plainToolTip(tip);
        tip += QStringLiteral("\n%1 · %2")
                   .arg(QString::fromUtf8(d->type), d->kind.isLimiter() ? d->kind.label() : QStringLiteral("not a limiter"));
        if (d->kind.format == KeyFormat::Library && d->kind.base != m_tree.fullKey(key))
            tip += QStringLiteral("\none limiter with %1: its figures are that limiter's").arg(displayKey(d->kind.base));
        if (!d->policy.isEmpty())
            tip += QStringLiteral("\npolicy %1 (%2)").arg(d->policy, QString::fromUtf8(d->policyMatch));
        if (d->spec)
            tip += QStringLiteral("\nlimit %1%2").arg(formatLimit(*d->spec), d->overridden ? QStringLiteral(", overridden") : QString());
        if (d->usage) {
            const Decision &dec = d->usage->decision;
            tip += QStringLiteral("\nused %1 of %2").arg(formatCount(d->usage->usedNow), formatCount(dec.limit));
            if (!dec.allowed)
                tip += QStringLiteral("; the next request is denied, allowed again in %1").arg(formatSpan(dec.retryAfterUs));
            if (dec.resetAfterUs > 0)
                tip += QStringLiteral("\nfull capacity again in %1").arg(formatSpan(dec.resetAfterUs));
        }
        if (!d->problem.isEmpty())
            tip += QStringLiteral("\n%1").arg(d->problem);
        else if (d->kind.isLimiter() && !d->spec)
            tip += QStringLiteral("\nNo policy matches this key: declare one to see how full it is.");
        if (!live)
            tip += m_live ? QStringLiteral("\nNot live yet: read %1, before the connection was lost; being read again.")
                                .arg(formatAgo(nowMs() - slot->readAtMs))
                          : QStringLiteral("\nNot live: the connection is lost. Read %1.").arg(formatAgo(nowMs() - slot->readAtMs));
        return plainToolTip(tip);
    }
    default:
        return {};
    }

    // Display.
    if (column == KeyColumn)
        return nameText(m_tree.keyName(key));
    if (!d)
        return column == AlgorithmColumn ? QStringLiteral("…") : QVariant();
    switch (column) {
    case AlgorithmColumn:
        if (!d->exists())
            return QStringLiteral("(deleted)");
        if (!d->metadata.isEmpty())
            return QStringLiteral("Ratescope %1").arg(QString::fromUtf8(d->metadata));
        if (d->kind.format == KeyFormat::CounterWindow && d->spec)
            return QStringLiteral("%1 (counter)").arg(algorithmName(d->spec->algorithm));
        // another library's limiter kept in several keys: the others say whose part they are
        if (d->kind.format == KeyFormat::Library && d->kind.base != m_tree.fullKey(key))
            return QStringLiteral("%1 (part)").arg(d->kind.label());
        return d->kind.isLimiter() ? d->kind.label() : QString::fromUtf8(d->type);
    case UsageColumn:
        if (d->usage)
            return formatUsage(d->usage->usedNow, d->usage->decision.limit);
        if (!d->problem.isEmpty())
            return d->problem;
        if (d->kind.isLimiter() && !d->spec)
            return QStringLiteral("no policy");
        return {};
    case RemainingColumn:
        if (!d->usage)
            return {};
        if (!d->usage->decision.allowed && d->usage->decision.retryAfterUs > 0)
            return QStringLiteral("%1 · retry in %2").arg(formatCount(d->remaining()), formatSpan(d->usage->decision.retryAfterUs));
        return formatCount(d->remaining());
    case TtlColumn:
        return d->exists() ? formatTtl(d->pttlMs) : QString();
    case MemoryColumn:
        return formatSize(d->memory);
    }
    return {};
}

} // namespace ratescope::ui
