// The Reset dialog's work: the plan (a pattern walked with progress, or exact keys), the state
// of the planned keys a batch at a time, and the reset itself, audited before and after.
#pragma once

#include "admin/metadatanamespace.h"
#include "admin/policy.h"
#include "keys/keydetails.h"
#include "keys/reset.h"

#include <atomic>
#include <functional>
#include <vector>

namespace ratescope {
class Connection;
}

namespace ratescope::ui {

// Written by the worker, read by the poll timer on the GUI thread: no object crosses threads,
// so a dialog closed mid-way leaves the worker nothing dangling to call.
struct ResetProgress {
    std::atomic<qint64> total{-1}; // planning: about how many keys the server holds; running: keys planned
    std::atomic<qint64> done{0};   // planning: about how many keys SCAN looked at; running: keys processed
    std::atomic<qint64> found{0};  // planning: keys matched; running: keys deleted
    std::atomic<bool> stop{false}; // Cancel: stop the scan, or stop between batches
    std::atomic<bool> noMoreDetails{false};
};

struct PlanOutcome {
    ResetPlan plan;
    qint64 metadataLeftOut = 0;
};

struct RunOutcome {
    ResetRun run;
    bool interrupted = false;
    bool audited = false;
    QString problem;
    QString auditProblem;
};

struct DetailsOutcome {
    std::vector<Policy> policies;
    bool policiesRead = false;
    std::vector<KeyDetails> details;
};

// The plan: exact keys, or the keys a pattern matches (limiters only; the rest held back to be
// chosen), Ratescope's own records left out; its keys and those held back in natural order
// (c2 before c10), as the keys panel lists them. Refusals come explained (NOPERM in words).
PlanOutcome planReset(Connection &c, const MetadataNamespace &ns, const QByteArray &pattern, const QByteArrayList &exact,
                      ResetProgress &progress);
// The plan's keys and those held back in natural order (naturalLess): the order the preview
// lists them in, and the order they are deleted in.
void sortPlanNaturally(ResetPlan &plan);
// The planned keys' state, under the policies (read first when needPolicies).
DetailsOutcome readResetDetails(Connection &c, const MetadataNamespace &ns, const std::vector<QByteArray> &keys, bool needPolicies,
                                const std::vector<Policy> &policies, ResetProgress &progress);
// Resets plan as op: the intent audited first (refused: nothing deleted, also when the namespace
// requires a reason and reason is empty), then batches (hook after each, for tests), then the
// result audited; both entries carry reason.
RunOutcome runReset(Connection &c, const MetadataNamespace &ns, const ResetPlan &plan, const QString &op, ResetProgress &progress,
                    const std::function<void(qint64)> &hook, const QString &reason = {});

} // namespace ratescope::ui
