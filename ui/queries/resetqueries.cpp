#include "resetqueries.h"

#include "admin/audit.h"
#include "base/errors.h"
#include "base/keytext.h"
#include "redis/connection.h"
#include "refusal.h"

#include <algorithm>

namespace ratescope::ui {

namespace {

// Refusals explained where they are caught, on the worker, which knows the connection's user.
[[noreturn]] void rethrowExplained(const QString &user)
{
    try {
        throw;
    } catch (const ReplyError &e) {
        if (e.prefix() == QLatin1String("NOPERM"))
            throw ReplyError(explainRefusal(e.message(), user));
        throw;
    }
}

QString explained(const std::exception_ptr &failure, const QString &user, bool *connectionLost)
{
    try {
        std::rethrow_exception(failure);
    } catch (const ConnectionError &e) {
        *connectionLost = true;
        return e.message();
    } catch (const ReplyError &e) {
        return explainRefusal(e.message(), user);
    } catch (const std::exception &e) {
        return QString::fromUtf8(e.what());
    } catch (...) {
        return QStringLiteral("unexpected failure");
    }
}

} // namespace

PlanOutcome planReset(Connection &c, const MetadataNamespace &ns, const QByteArray &pattern, const QByteArrayList &exact,
                      ResetProgress &progress)
{
    PlanOutcome out;
    try {
        Resetter resetter(c, ns);
        if (pattern.isEmpty()) {
            out.plan = resetter.planKeys(exact);
        } else {
            // About how many keys there are, for the progress bar; users without DBSIZE go without.
            qint64 total = 0;
            for (const auto &node : c.onEachMaster({{"DBSIZE"}}))
                if (!node.empty() && node[0].isInteger())
                    total += node[0].integer();
            progress.total = total > 0 ? total : -1;
            out.plan = resetter.planPattern(pattern, [&](qint64 examined, qint64 matched) {
                progress.done = total > 0 ? std::min(examined, total) : examined;
                progress.found = matched;
                return !progress.stop.load();
            });
        }
        // Ratescope's own keys are never offered here, even to a pattern naming them.
        resetter.leaveOutMetadata(out.plan);
        // A pattern resets limiters only, unless the box asks for the rest too.
        if (!pattern.isEmpty())
            resetter.holdBackNonLimiters(out.plan);
        out.metadataLeftOut = out.plan.metadataLeftOut;
        sortPlanNaturally(out.plan);
    } catch (const ReplyError &) {
        rethrowExplained(c.options().user);
    }
    return out;
}

void sortPlanNaturally(ResetPlan &plan)
{
    std::sort(plan.keys.begin(), plan.keys.end(), [](const QByteArray &a, const QByteArray &b) { return naturalLess(a, b); });
    std::sort(plan.heldBack.begin(), plan.heldBack.end(), [](const auto &a, const auto &b) { return naturalLess(a.first, b.first); });
}

DetailsOutcome readResetDetails(Connection &c, const MetadataNamespace &ns, const std::vector<QByteArray> &keys, bool needPolicies,
                                const std::vector<Policy> &policies, ResetProgress &progress)
{
    DetailsOutcome out;
    if (progress.noMoreDetails)
        return out;
    out.policies = policies;
    if (needPolicies) {
        try {
            out.policies = PolicyStore(c, ns).list();
        } catch (const ReplyError &) {
            // No policies readable: the state shows without limits.
        }
        out.policiesRead = true;
    }
    out.details = readKeyDetails(c, keys, out.policies, ns);
    return out;
}

RunOutcome runReset(Connection &c, const MetadataNamespace &ns, const ResetPlan &plan, const QString &op, ResetProgress &progress,
                    const std::function<void(qint64)> &hook, const QString &reason)
{
    RunOutcome out;
    const QString user = c.options().user;
    try {
        AuditLog log(c, ns);
        log.setReason(reason);
        log.ensureWritable(); // before anything is deleted: no reset without its record
        // The intent first, as the CLI: a reset cut short still leaves a trace.
        log.append(resetIntentAuditEntry(plan), op);
    } catch (const ConnectionError &) {
        throw; // not sent at all
    } catch (...) {
        bool lost = false;
        out.problem = explained(std::current_exception(), user, &lost); // refused: nothing deleted
        return out;
    }
    Resetter resetter(c, ns);
    out.run = resetter.execute(plan, [&](const ResetRun &run) {
        progress.done = run.processed;
        progress.found = run.deleted;
        if (hook)
            hook(run.processed);
        return !progress.stop.load();
    });
    if (out.run.failure)
        out.problem = explained(out.run.failure, user, &out.interrupted);
    // One entry per reset, unless the server refused the very first batch (nothing
    // deleted, nothing to record). A batch without an answer may have deleted keys.
    if (out.run.processed > 0 || out.interrupted) {
        try {
            AuditLog log(c, ns);
            log.setReason(reason);
            log.append(resetAuditEntry(plan, out.run), op);
            out.audited = true;
        } catch (...) {
            bool lost = false;
            out.auditProblem = explained(std::current_exception(), user, &lost);
        }
    }
    return out;
}

} // namespace ratescope::ui
