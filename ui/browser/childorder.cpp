#include "childorder.h"

#include "base/keytext.h"

namespace ratescope::ui {

void sortRound(OrderRound &round)
{
    const auto less = [](const OrderEntry &a, const OrderEntry &b) { return naturalLess(a.bytes(), b.bytes()); };
    for (OrderTask &task : round.tasks) {
        sortAfterSortedRun(task.groups.begin(), task.groups.end(), less);
        sortAfterSortedRun(task.keys.begin(), task.keys.end(), less);
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
