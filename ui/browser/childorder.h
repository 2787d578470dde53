// Sorting a group's children into natural order (naturalLess: user:2 before user:10) off the GUI
// thread, for KeyTreeModel's background ordering. A round carries pointers to the children's
// names in the tree's arena and shares the arena's chunks, so a round that outlives a clear()
// still reads valid bytes; the ids come back sorted and are checked against the tree as it is
// by then (keys added or removed meanwhile) before they are applied.
#pragma once

#include "backgroundrun.h"

#include <QByteArrayView>
#include <QtGlobal>

#include <algorithm>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

namespace ratescope::ui {

// Sorts [begin, end) when a sorted run leads it (a group's order from a previous round, the
// keys found since after it): the run is found in one pass, the rest sorted and merged in, so a
// million children with a thousand new ones cost about a million comparisons, not twenty.
template <typename It, typename Less> void sortAfterSortedRun(It begin, It end, Less less)
{
    const It rest = std::is_sorted_until(begin, end, less);
    if (rest == end)
        return;
    std::sort(rest, end, less);
    std::inplace_merge(begin, rest, end, less);
}

struct OrderEntry {
    const char *name;
    quint32 length;
    quint32 id;
    QByteArrayView bytes() const { return {name, qsizetype(length)}; }
};

// What the rounds have sorted so far, by group: the children each round took, in natural
// order. Only the round under way touches it while it runs; the model, between rounds. The
// next round of a group takes only the children that came since and merges them in.
struct OrderCache {
    struct Sorted {
        std::vector<OrderEntry> groups;
        std::vector<OrderEntry> keys;
    };
    std::unordered_map<quint32, Sorted> groups;
};

// One group: its children that came since its last round (all of them the first time), and
// once sorted, the ids of all its children the rounds have taken, in natural order.
struct OrderTask {
    quint32 group = 0;
    std::vector<OrderEntry> newGroups;
    std::vector<OrderEntry> newKeys;
    std::vector<quint32> groups; // out
    std::vector<quint32> keys;   // out
};

struct OrderRound {
    quint64 generation = 0; // the model's: a round for a keyspace read before is dropped
    std::vector<OrderTask> tasks;
    std::shared_ptr<OrderCache> cache;
    std::vector<std::shared_ptr<const char[]>> chunks; // keeps the names alive
};

// Merges every task's new children into the cache, and gives back each group's order.
void sortRound(OrderRound &round);

// One round at a time on a thread of its own (BackgroundRun): the result comes back on the GUI
// thread while this object lives.
class OrderRun : public BackgroundRun {
    Q_OBJECT
public:
    explicit OrderRun(QObject *parent = nullptr)
        : BackgroundRun(parent)
    {
    }
    void start(std::shared_ptr<OrderRound> round, std::function<void(std::shared_ptr<OrderRound>)> done);
};

} // namespace ratescope::ui
