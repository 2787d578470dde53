// Resetting limiters: exact keys or a pattern, always previewed, then exactly the preview deleted.
#pragma once

#include "admin/audit.h"
#include "admin/policy.h"

#include <exception>
#include <functional>
#include <optional>
#include <QByteArrayList>
#include <QString>
#include <vector>

namespace ratescope {

class Connection;

struct ResetPlan {
    QByteArrayList keys;        // exactly what execute() deletes
    QByteArray pattern;         // empty for exact keys
    QByteArrayList requested;   // the exact keys asked for
    qint64 examined = 0;        // pattern: about how many keys SCAN looked at (pages x COUNT)
    qint64 metadataLeftOut = 0; // Ratescope's own keys matched or asked for that the plan leaves out
    bool complete = true;       // false: the scan was stopped early and keys holds what it had found
    // Matched keys that are no limiter (holdBackNonLimiters), with their Redis type: left out
    // of keys unless asked for explicitly.
    std::vector<std::pair<QByteArray, QByteArray>> heldBack;
};

// How far execute() got. Deletions are counted from UNLINK's answers only, so after a lost
// connection the batch under way may or may not have been deleted.
struct ResetRun {
    qint64 planned = 0;         // keys in the plan
    qint64 processed = 0;       // keys of the batches whose UNLINK was answered
    qint64 deleted = 0;         // of those, the ones that still existed and were deleted
    bool stopped = false;       // stopped between batches on request
    std::exception_ptr failure; // why it ended early; the batch it happened in is not counted

    bool finished() const { return processed == planned && !failure; }
};

// The Redis types limiters are stored in: zset, string, hash (and list, Python limits').
bool isLimiterType(const QByteArray &type);
// A key of Ratescope's own metadata under the namespace ns (policies, audit, overrides).
bool isMetadataKey(const MetadataNamespace &ns, const QByteArray &key);

class Resetter {
public:
    // ns: Ratescope's metadata prefix; a pattern never deletes metadata unless it starts
    // with the namespace itself.
    Resetter(Connection &connection, MetadataNamespace ns);

    // Exact keys, glob characters and all (UNLINK takes names literally). A key that does
    // not exist but is the base of counter windows (<key>:<window id>) expands to them; a
    // key of another library's limiter kept in several keys expands to all of them, and the
    // name of one whose keys carry the window to the windows that exist.
    ResetPlan planKeys(const QByteArrayList &keys);
    // A SCAN snapshot of the pattern. progress(about how many keys SCAN has looked at, keys
    // matched so far) is called per page; returning false stops the scan there (the plan is
    // then not complete).
    ResetPlan planPattern(const QByteArray &pattern, const std::function<bool(qint64, qint64)> &progress = {});
    // Takes Ratescope's own keys (under the namespace: policies, overrides, audit) out of a
    // plan, whatever the pattern said, for front ends that never offer them. Returns how many.
    qint64 leaveOutMetadata(ResetPlan &plan) const;
    // Ratescope's own metadata in the plan (<ns>policies, <ns>audit, <ns>override:*), which
    // front ends delete only when asked to explicitly.
    QByteArrayList metadataKeys(const ResetPlan &plan) const;
    // The planned keys of a type no limiter is stored in (stream, list, set, ...: limiters
    // are zset, string or hash, docs/key-formats.md), with their type. One pipelined TYPE
    // round per kBatchSize keys.
    std::vector<std::pair<QByteArray, QByteArray>> nonLimiterTypes(const ResetPlan &plan);
    // Moves the planned keys that are no limiter into plan.heldBack, recognised exactly as
    // `keys` and the console's keys panel recognise them (type, a sample, the policies'
    // declared formats): Ratescope's formats, other libraries' (all keys of one kept in
    // several), other services' logs and counter windows stay. A key whose type cannot be
    // read is held back too. Ratescope's own records are left to metadataKeys(). One
    // pipelined round pair per kBatchSize keys. Returns how many were held back.
    qint64 holdBackNonLimiters(ResetPlan &plan);
    // Puts the held-back keys into the plan after all (asked for explicitly).
    static void includeHeldBack(ResetPlan &plan);
    // UNLINKs exactly the planned keys, in batches; keys created since the preview are never
    // touched. Returns how many existed and were deleted.
    qint64 execute(const ResetPlan &plan);
    // The same, reporting after each batch: afterBatch(run so far) returning false stops
    // before the next batch. Never throws: a failure ends the run and is kept in it.
    ResetRun execute(const ResetPlan &plan, const std::function<bool(const ResetRun &)> &afterBatch);

    static constexpr int kBatchSize = 500; // keys per UNLINK

private:
    QByteArrayList counterWindows(const QByteArray &base);
    QByteArrayList companionKeys(const QByteArray &key);
    QByteArrayList libraryWindows(const QByteArray &name);
    QByteArrayList existing(const QByteArrayList &keys);
    const std::vector<Policy> &policies(); // read once, for the formats they declare
    qint64 nowUs();                        // the server's clock, read once per Resetter

    Connection &m_connection;
    MetadataNamespace m_ns;
    std::optional<std::vector<Policy>> m_policies;
    std::optional<qint64> m_nowUs;
};

// The one audit entry a reset leaves, built here so that the CLI and the console write the same
// entry: target the keys asked for (or "match:<pattern>"), before the plan (its first 100 keys
// as people read them, and its size), after how many were deleted, count the deletions.
AuditEntry resetAuditEntry(const ResetPlan &plan, qint64 deleted);
// The entry written before the first key is deleted ("reset.intent": the plan, its size as
// the count), so that a reset cut short by a dying server or connection still leaves a trace;
// the "reset" entry with what was deleted follows when the run ends and can be recorded.
AuditEntry resetIntentAuditEntry(const ResetPlan &plan);
// For a run that may have ended early: the same entry, and when it did not finish, after also
// says how far it got ("processed") and why it stopped ("cancelled" or "error").
AuditEntry resetAuditEntry(const ResetPlan &plan, const ResetRun &run);

} // namespace ratescope
