// How full limiters are right now, read without writing: Ratescope's keys through the
// scripts' peek, foreign logs and counter windows computed here from their raw data.
#pragma once

#include "formats/keykind.h"
#include "limiters/limiter.h"
#include "redis/resp.h"

#include <exception>
#include <optional>
#include <vector>

namespace ratescope {

class Connection;
enum class ScriptCalls;

// Another service's numbers, made safe for 64-bit arithmetic. A score (double) in
// microseconds as an integer clamped to +-2^62 (NaN: 0), so that adding a window or a time to
// it cannot overflow; a counter clamped to 0 .. 2^61 (a sum of two plus a cost cannot).
qint64 scoreToUs(double score, double unitUs);
qint64 saneCount(qint64 count);

// The limits a key is read with: another library's key may state its own limits (Python
// limits), its window (Kong's period, Envoy's unit) and its algorithm; the policy's (or the
// flags') fill in the rest, the cost always theirs. Ratescope's own formats: `spec` as is.
LimitSpec limitsAsRead(const KeyKind &kind, const LimitSpec &spec);
// The same for limits that may be unknown: a key that states its own limits has them even
// without a policy.
std::optional<LimitSpec> limitsFor(const KeyKind &kind, const std::optional<LimitSpec> &spec);

struct UsageTarget {
    QByteArray key; // for a CounterWindow: the base
    KeyKind kind;
    LimitSpec spec; // the limits that apply (policy, override or flags)
};

// What a request of spec.cost would be told now, plus how much is used before it.
struct Usage {
    qint64 usedNow = 0; // used before the request asked about
    Decision decision;  // what check would answer for one request of spec.cost
};

// One pipelined round. A target whose state cannot be read gets std::nullopt (wrong type
// meanwhile, unknown format); with `errors`, the error that said so in the same place (null
// for a target that was read), for a caller that reports why.
std::vector<std::optional<Usage>> readUsage(Connection &connection, const std::vector<UsageTarget> &targets, qint64 nowUs,
                                            std::vector<std::exception_ptr> *errors = nullptr);

// readUsage in two halves, for callers that read many limiters in one round of their own
// (the console's Monitor puts TIME in front): the commands that read one target (throws
// UsageError for limits the scripts refuse, or a key that is no readable limiter; `calls` is
// asked of the server once and kept), then its usage from their replies (throws the server's
// error, e.g. WRONGTYPE when the key changed). A script not loaded is loaded by a peek of its own.
std::vector<Command> usageCommands(Connection &connection, const UsageTarget &t, qint64 nowUs, std::optional<ScriptCalls> &calls);
Usage usageFromReplies(Connection &connection, const UsageTarget &t, const Reply *replies, size_t n, qint64 nowUs);

// A foreign sorted-set log in one round: the entries in the window, the newest entry, and the
// one whose expiry lets a request of the cost pass. Scores are clamped (scoreToUs).
std::vector<Command> foreignLogCommands(const UsageTarget &t, qint64 nowUs);
Usage foreignLogUsage(const UsageTarget &t, const Reply &count, const Reply &newest, const Reply &freeing, qint64 nowUs);

// A counter limiter (<base>:<window id> strings): the GETs of its current and previous window,
// for a caller's pipeline, and its usage from their two replies. readUsage and peekAnyFormat
// read counters this way; callers that read many limiters in one round of their own (the
// console's monitor) do too. The base is t.kind.base, else t.key.
std::vector<Command> counterWindowCommands(const UsageTarget &t, qint64 nowUs);
Usage counterWindowUsage(const UsageTarget &t, const Reply &current, const Reply &previous, qint64 nowUs);

// Peek for one key of any recognised format; throws UsageError for a key that is not a
// limiter of a known format.
Usage peekAnyFormat(Connection &connection, const QByteArray &key, const KeyKind &kind, const LimitSpec &spec, qint64 nowUs);

} // namespace ratescope
