// Looking up a customer: every limiter whose key holds an identifier as a whole segment
// ("acme" in api:acme, login:acme:/search, rl:{acme}:3, rlflx:acme; not in api:acmecorp),
// with the limits in force on each (admin/limitsinforce.h), how full it is and, in words, why
// it denies. The CLI's `lookup`, `reset --lookup` and `override set --lookup` and the
// console's Lookup page ask this, so that they list the same limiters. Reading only.
#pragma once

#include "admin/limitsinforce.h"
#include "admin/metadatanamespace.h"
#include "admin/policy.h"
#include "formats/keykind.h"
#include "formats/usage.h"

#include <QByteArrayList>
#include <functional>
#include <optional>
#include <vector>

namespace ratescope {

class Connection;

struct LookupOptions {
    QByteArray id;                // the identifier: a whole segment of the keys (bytes, exactly)
    QByteArray match;             // only keys this glob matches too; empty: every key
    std::vector<Policy> policies; // the namespace's
    MetadataNamespace ns;         // Ratescope's own records there are never listed
    std::optional<qint64> nowUs;  // read against this clock; default: the server's TIME
    int scanCount = 1000;         // SCAN COUNT per page
};

struct LookupRow {
    QByteArray key; // the limiter: its key; counter windows' and other libraries' keys: their base; a shard group: its base
    KeyKind kind;   // as its (first) key was recognised
    QByteArrayList keys; // what a reset deletes: the key; a counter's or library's base (its keys then found by name); a group's shards
    int shards = 0;      // a shard group: how many shards
    QString policy;      // the policy in force, if any
    std::optional<Override> override; // in force (the key's own, or its group's)
    std::optional<LimitSpec> spec;    // the limits in force; none: no limits, so no usage
    LimitSource source = LimitSource::None;
    std::optional<Usage> usage;       // how full it is now (needs limits and a readable state)
    std::optional<qint64> deniedSinceUs; // a denying log: it has denied at least since this time

    bool denying() const { return usage && !usage->decision.allowed; }
    // used / limit (above 1 when over); nullopt without usage.
    std::optional<double> fill() const;
    // "sliding-log", "token-bucket", ...; the format's label when no algorithm is known.
    QString algorithmText() const;
};

struct LookupResult {
    std::vector<LookupRow> rows; // denying first (longest wait first), then fullest, then by key
    qint64 scanned = 0;          // keys SCAN returned (those holding the identifier somewhere)
    qint64 nowUs = 0;            // the clock the rows were read at
    bool complete = true;        // false: stopped by progress() before the scan ended
};

// The SCAN MATCH pattern that finds every key holding the id anywhere (its glob characters
// taken literally): the server's coarse filter; keyHoldsSegment is the exact one.
QByteArray lookupScanPattern(const QByteArray &id);

// One pass: SCAN MATCH *id* (on every master of a cluster), each page classified (TYPE and
// format samples), the keys holding the id as a segment kept (limiters only; Ratescope's own
// records never), counter windows and other libraries' keys made one limiter each, shard
// groups one row; then their overrides in one round, their usage in one round (a shard group
// one more each). progress(keys scanned so far) after each page; false stops the scan and
// the rows found so far are read (complete false). Throws UsageError for an empty id or a
// broken --match glob, the server's error (NOPERM) as it comes.
LookupResult lookupLimiters(Connection &connection, const LookupOptions &options,
                            const std::function<bool(qint64)> &progress = {});

// Why a row admits or denies, in words, with times of day in local time:
// "denied since 10:41:07: 60 of 60 used in the last 10s; the next request passes in 3.4s (at 10:41:12)";
// "admits: 12 of 60 used in the last 10s, 48 remaining"; "no limits: no policy matches it".
QString lookupVerdict(const LookupRow &row, qint64 nowUs);

} // namespace ratescope
