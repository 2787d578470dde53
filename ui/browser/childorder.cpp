#include "childorder.h"

#include "base/keytext.h"

namespace ratescope::ui {

void sortRound(OrderRound &round)
{
    const auto less = [](const OrderEntry &a, const OrderEntry &b) { return naturalLess(a.bytes(), b.bytes()); };
    const auto merge = [&](std::vector<OrderEntry> &sorted, std::vector<OrderEntry> &fresh, std::vector<quint32> &ids) {
        sortAfterSortedRun(fresh.begin(), fresh.end(), less);
        const size_t before = sorted.size();
        sorted.insert(sorted.end(), fresh.begin(), fresh.end());
        std::inplace_merge(sorted.begin(), sorted.begin() + qsizetype(before), sorted.end(), less);
        std::vector<OrderEntry>().swap(fresh);
        ids.resize(sorted.size());
        for (size_t i = 0; i < sorted.size(); ++i)
            ids[i] = sorted[i].id;
    };
    for (OrderTask &task : round.tasks) {
        OrderCache::Sorted &sorted = round.cache->groups[task.group];
        merge(sorted.groups, task.newGroups, task.groups);
        merge(sorted.keys, task.newKeys, task.keys);
    }
}

void OrderRun::start(std::shared_ptr<OrderRound> round, std::function<void(std::shared_ptr<OrderRound>)> done)
{
    launch([round = std::move(round), done = std::move(done)](Thread &thread) {
        if (!thread.cancelled())
            sortRound(*round);
        thread.finish([round, done] { done(round); });
    });
}

} // namespace ratescope::ui
