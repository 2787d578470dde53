// The audit trail: a capped Redis stream of every mutation made through Ratescope.
#pragma once

#include "admin/metadatanamespace.h"
#include "redis/resp.h"

#include <QDateTime>
#include <QString>
#include <QStringList>
#include <vector>

namespace ratescope {

class Connection;
class Reply;
struct DeployPlan;

struct AuditEntry {
    QString id;       // stream id, set when read back
    QDateTime time;   // set by append() when empty
    QString actor;    // the operator's name if given, else the OS user
    QString osUser;   // always the OS user
    QString host;     // the machine it was done from
    QString action;   // "reset", "policy.set", "policy.delete", "override.set", "override.clear", "burst", ...
    QString target;   // key, pattern or policy name
    QString before;   // state before (JSON text), empty when none
    QString after;    // state after (JSON text), empty when none
    qint64 count = 0; // keys affected, requests sent, ...
    QString version;  // the Ratescope release that wrote it (set by append(); empty before 0.2.0)
    QString reason;   // why: a ticket number or a sentence (--reason; the console's reason field), empty when none given
};

// A change's reason: at most kMaxReasonLength characters (code points) of visible text.
inline constexpr int kMaxReasonLength = 200;
// Throws UsageError ("<what> ...") for a reason that is too long, has control or invisible
// characters, or starts or ends with spaces. An empty reason is none, and passes.
void requireValidReason(const QString &reason, const QString &what = QStringLiteral("--reason"));

// The namespace's settings, kept in the hash "<ns>settings" (one field each).
struct NamespaceSettings {
    // Every change must give a reason: without one it is refused before anything is sent, in
    // the CLI and the console alike (AuditLog::ensureWritable). Field "require-reason": "1" / "0".
    bool requireReason = false;
};
// The settings' key and fields, for readers that pipeline them with other reads.
QByteArray settingsKey(const MetadataNamespace &ns);
NamespaceSettings readNamespaceSettings(Connection &connection, const MetadataNamespace &ns);
// The settings' names as `settings` shows and takes them: "require-reason".
QStringList namespaceSettingNames();

class AuditLog {
public:
    static constexpr int kMaxEntries = 100000; // the stream is capped (approximately) here

    // ns: the metadata namespace, e.g. "ratescope:"; the stream is "<ns>audit".
    AuditLog(Connection &connection, MetadataNamespace ns);

    QByteArray streamKey() const { return m_ns.key("audit"); }
    // Before a mutation: throws unless an entry could be appended now, so that a change is
    // never made when its record cannot be. UsageError when the stream key holds another
    // type (a --namespace that collides with an application's keys), ReplyError with the
    // server's words when it refuses XADD (NOPERM for an ACL user without it, READONLY,
    // OOM, ...). Writes nothing: the probe is an XADD with the ID 0-0, which Redis refuses
    // after the ACL check and before touching the key. In the same round, the namespace's
    // settings: when it requires a reason and this log has none (setReason), UsageError
    // "... requires a reason for every change ...", before anything is changed.
    void ensureWritable();
    // The reason every entry this log appends carries (an entry's own reason, if set, wins).
    // Checked with requireValidReason.
    void setReason(const QString &reason);
    const QString &reason() const { return m_reason; }
    // Appends; fills in time, OS user and host, and actor from operatorName (or the OS user),
    // and the reason. Returns the stream id.
    QString append(AuditEntry entry, const QString &operatorName = {});
    // Newest first.
    std::vector<AuditEntry> list(int max = 100);
    // The command list(max) sends: for a caller that reads it ahead with others.
    Command listCommand(int max) const { return olderThanCommand(QString(), max); }
    // Paging back: newest first, strictly older than the entry `id` (empty: from the newest).
    std::vector<AuditEntry> olderThan(const QString &id, int max);
    Command olderThanCommand(const QString &id, int max) const;
    // Following the stream: oldest first, strictly newer than the entry `id` (empty: from the
    // oldest). Oldest first so that a reader taking at most `max` at a time never skips any.
    std::vector<AuditEntry> newerThan(const QString &id, int max);
    // One XRANGE/XREVRANGE item ([id, [field, value, ...]]); unknown fields are ignored.
    static AuditEntry fromStreamItem(const Reply &item);

    static QString osUser();
    static QString hostName();

private:
    Connection &m_connection;
    MetadataNamespace m_ns;
    QString m_reason;
};

// The entry a deploy of the functions library leaves (scripts.deploy): what each master had
// before, the plan, and on how many it was loaded; the CLI and the console write the same.
AuditEntry scriptsDeployAuditEntry(const DeployPlan &plan, int loaded);

} // namespace ratescope
