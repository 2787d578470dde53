// The full state of one limiter key, read-only: what it is, what it holds, what applies to it.
#pragma once

#include "formats/recognition.h"
#include "admin/limitsinforce.h"
#include "admin/policy.h"
#include "redis/resp.h"

#include <functional>
#include <optional>
#include <QJsonObject>

namespace ratescope {

class Connection;

// Classifies one key. A key that does not exist but whose current or previous counter
// window does (<key>:<window id>, window from `spec`) is a counter base.
KeyKind classifyKey(Connection &connection, const QByteArray &key, qint64 nowUs, ScoreUnit declaredUnit = ScoreUnit::Auto,
                     const std::optional<LimitSpec> &spec = {}, const QString &declaredFormat = {});

// The reads classifyKey() starts with, whatever the key's type (TYPE and each type's
// sample), and, with forInspect, the key's own facts inspectKey() reads: for a command that
// reads them ahead with the rest of its first round (Connection::prefetch). The samples of
// the other types come back as WRONGTYPE errors, small and thrown away.
std::vector<Command> classifyReads(const QByteArray &key, bool forInspect = false);

// Whether `key` is the base of counter windows (<key>:<window id>, classifyKey) depends on the
// window of its limits, known only once the policies are read. This read-only script answers
// it in the first round for every whole-second window a policy, the key's overrides or
// `windowsUs` state: the server's clock, then EXISTS of the current and previous window of
// each. takeCounterWindows() keeps its answers as the replies of the EXISTS classifyKey()
// will send (Connection::keepPrefetched). One server only (its keys are not all declared).
Command counterWindowsQuery(const QByteArray &key, const QByteArray &policiesHash, const std::vector<Command> &overrideReads,
                            const std::vector<qint64> &windowsUs = {});
// Returns the EXISTS commands whose replies it kept.
std::vector<Command> takeCounterWindows(Connection &connection, const QByteArray &key, const Reply &reply);

// Everything a one-key command or view reads before its last rounds, whatever the key turns
// out to be, for one round trip (Connection::prefetch): the policies, the key's overrides,
// the server's clock, the key's type and samples (classifyReads, with forInspect its own
// facts), and on one server whether it has the scripts and this build's functions library
// (askScripts: a connection that does not know yet) and whether counter windows of the
// policies' or `windowsUs` lengths lie beside the key (counterWindowsQuery).
struct FirstRound {
    bool forInspect = false;
    bool oneServer = true;
    bool askScripts = true;
    // Before a write: also what writeRefusal() asks at the server's clock (whether the key
    // exists, and the counter windows beside it of every usual length), so that it sends nothing.
    bool forWrite = false;
    std::vector<qint64> windowsUs;
};
std::vector<Command> firstRoundReads(const MetadataNamespace &ns, const QByteArray &key, const FirstRound &round);
// Sends them ahead (Connection::prefetch, in the handshake's round when it connects) and keeps
// the counter windows' answer for the key's classification. Returns the reads and the EXISTS
// kept, for a caller on a connection that lives on to take back what nobody asked for
// (takePrefetched): a reply left would answer a later read of the same command with what was
// true at this round.
std::vector<Command> prefetchFirstRound(Connection &connection, const MetadataNamespace &ns, const QByteArray &key, const FirstRound &round);

// Why Ratescope's scripts must not write a limiter at `key` (empty when they may), asked before
// anything is written: one of Ratescope's own records; a key `policy` (the one covering it)
// declares another library's; another service's limiter, by what the key holds or names now,
// or, for a key that does not exist, by a counter window <key>:<window id> beside it, current or
// previous, of the window of `spec` or of any usual length. With `atUs` (a write at another
// time than the server's clock) the key is recognised at that time as well.
QString writeRefusal(Connection &connection, const MetadataNamespace &ns, const QByteArray &key, const Policy *policy,
                     const LimitSpec &spec, std::optional<qint64> atUs = std::nullopt);

// Why a key that exists is not read as the format `policy` declares for it (empty when it is,
// or when nothing is declared): its value does not parse as that library's ("'cell:x' is
// covered by policy 'cell', which declares its keys redis-cell limiters, but it holds no
// redis-cell GCRA (a string that does not read as one)"). `type` is the key's Redis type.
QString declaredFormatMismatch(const QByteArray &key, const QByteArray &type, const KeyKind &kind, const Policy *policy);

struct InspectOptions {
    qint64 nowUs = 0;
    int entryOffset = 0; // paging through a log's entries in the window
    int entryCount = 50;
    std::optional<LimitSpec> spec; // limits from flags; else policy/override
    ScoreUnit scoreUnit = ScoreUnit::Auto;
    // A log's entries counted in this many equal buckets over the span ending now (0: none);
    // the span defaults to the limits' window. Counted on the server (readLogWindow).
    int buckets = 0;
    qint64 bucketSpanUs = 0;
    // Reads the caller will make once the key is known (its classification and the limits in
    // force), sent along with the key's state in the same round trip (Connection::readAlong):
    // a view that draws more of the key than its state. Their replies are the caller's to take,
    // and to forget.
    std::function<std::vector<Command>(const KeyKind &kind, const std::optional<LimitSpec> &spec)> readAlong;
};

// Everything about the key as one JSON object (the CLI prints it; the GUI reads it):
// key, exists, type, encoding, ttl_ms, memory, format, algorithm, policy, override,
// limits, decision (what a request would be told now), the per-format "state", and with
// options.buckets the "buckets" [{from_us, to_us, count}] of a log over (now - span, now].
// Throws UsageError when buckets are asked of a key that is no log, or without span or limits.
// The limits are the ones in force (the resolver's; options.spec wins as given with the
// command); the overrides it needs are read into it.
// kindRead: where to leave what the key was read as (its classification), for a caller that
// shows it without classifying the key a second time.
QJsonObject inspectKey(Connection &connection, const QByteArray &key, LimitResolver &limits, const InspectOptions &options,
                       KeyKind *kindRead = nullptr);

} // namespace ratescope
