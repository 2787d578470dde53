// The Policies tab's reads and changes: policies and overrides, the keys a pattern matches
// (walked a few pages at a time), a proposed policy's effect on them, and every change
// (audited, refused before anything is written when the audit cannot be).
#pragma once

#include "admin/metadatanamespace.h"
#include "admin/policy.h"
#include "limitqueries.h"

#include <atomic>
#include <optional>
#include <utility>
#include <vector>

namespace ratescope {
class Connection;
}

namespace ratescope::ui {

std::pair<std::vector<Policy>, std::vector<Override>> readPoliciesAndOverrides(Connection &c, const MetadataNamespace &ns);

// How far the walk for a policy's pattern got, and what it found.
struct PolicyPreview {
    QByteArray glob;
    std::vector<QByteArray> keys; // the first `listed` found
    qint64 matched = 0;
    qint64 excluded = 0; // Ratescope's own metadata keys the glob also matched
    qint64 scanned = 0;
    qint64 total = 0;
    bool complete = false; // the walk reached the end of the keyspace
    bool stopped = false;  // the bound stopped it: matched is a lower bound
    QByteArray cursor = "0";
    qint64 pages = 0;
};

// A proposed policy's effect on the keys previewed.
struct PolicyEffect {
    qint64 read = 0;    // limiters read under the proposed limits
    qint64 atLimit = 0; // of those, the ones a request of the proposed cost would be refused by
    qint64 otherPolicy = 0;
    qint64 overridden = 0;
    qint64 notLimiters = 0;
    qint64 unreadable = 0;
};

// Up to pagesPerStep SCAN pages more of the walk for soFar.glob, at most `budget` keys scanned
// in all; the first `listed` matching keys are kept; Ratescope's own records are left out.
PolicyPreview previewPolicyStep(Connection &c, const MetadataNamespace &ns, PolicyPreview soFar, qint64 budget, int pagesPerStep,
                                int listed, const std::atomic<bool> &cancel);

// The keys under `policies` (the proposal among them, named `name`), read without writing:
// how many of those the proposal governs a request of its cost would be refused by.
PolicyEffect readPolicyEffect(Connection &c, const MetadataNamespace &ns, const std::vector<QByteArray> &keys,
                              const std::vector<Policy> &policies, const QString &name, const LimitSpec &proposed,
                              std::optional<qint64> frozenNowUs);

// A policy saved or deleted (stored: what was, or is now, stored), or the conflict that
// stopped it, with the policy as it is now (theirs).
struct PolicyChange {
    std::optional<Policy> stored;
    QString conflict;
    std::optional<Policy> theirs;
};

// Saves p over version basedOn (0: a new policy) as actor, audited as op.
PolicyChange storePolicy(Connection &c, const MetadataNamespace &ns, const Policy &p, qint64 basedOn, const QString &actor,
                         const QString &op);
PolicyChange removePolicy(Connection &c, const MetadataNamespace &ns, const QString &name, qint64 basedOn, const QString &actor,
                          const QString &op);
// Grants o for forUs µs; returns the override as stored.
std::optional<Override> storeOverride(Connection &c, const MetadataNamespace &ns, const Override &o, qint64 forUs,
                                      const QString &actor, const QString &op);
// True when there was an override to clear (clearing nothing is not audited).
bool removeOverride(Connection &c, const MetadataNamespace &ns, const QByteArray &key, const QString &actor, const QString &op);

} // namespace ratescope::ui
