#include "admin/audit.h"

#include "limiters/scriptlibrary.h"

#include "redis/connection.h"
#include "base/errors.h"
#include "base/inputcheck.h"
#include "redis/resp.h"

#include <pwd.h>
#include <QHostInfo>
#include <QJsonDocument>
#include <unistd.h>

namespace ratescope {

AuditLog::AuditLog(Connection &connection, MetadataNamespace ns)
    : m_connection(connection)
    , m_ns(std::move(ns))
{
}

QString AuditLog::osUser()
{
    if (const passwd *pw = ::getpwuid(::geteuid()); pw && pw->pw_name)
        return QString::fromLocal8Bit(pw->pw_name);
    return qEnvironmentVariable("USER", QStringLiteral("unknown"));
}

QString AuditLog::hostName()
{
    return QHostInfo::localHostName();
}

void AuditLog::ensureWritable()
{
    const QString name = QString::fromUtf8(streamKey());
    const auto replies = m_connection.pipeline({{"TYPE", streamKey()},
                                                {"XADD", streamKey(), "NOMKSTREAM", "0-0", "probe", "1"},
                                                {"HGET", settingsKey(m_ns), "require-reason"}});
    const Reply &required = replies[2];
    if (required.isError() && !required.bytes().startsWith("NOPERM"))
        throw UsageError(QStringLiteral("the settings record '%1' cannot be read (%2; is --namespace right?); nothing was changed")
                             .arg(QString::fromUtf8(settingsKey(m_ns)), required.text()));
    // A user who may not read the settings is held to them all the same.
    if ((required.isError() || required.bytes() == "1") && m_reason.isEmpty())
        throw UsageError(QStringLiteral("namespace '%1' requires a reason for every change (a ticket number or a sentence: "
                                        "--reason TEXT, or the console's reason field); nothing was changed")
                             .arg(m_ns.text()));
    const Reply &type = replies[0];
    if (type.isError())
        throw ReplyError(QStringLiteral("%1 (reading the audit trail %2; nothing was changed)").arg(type.text(), name));
    if (type.bytes() != "stream" && type.bytes() != "none")
        throw UsageError(QStringLiteral("the audit trail '%1' is a %2, not a stream (is --namespace right?); nothing was changed")
                             .arg(name, type.text()));
    const Reply &probe = replies[1];
    // The one answer that proves XADD would be accepted: the complaint about the ID itself.
    if (probe.isError() && probe.bytes().contains("must be greater than 0-0"))
        return;
    if (probe.isError())
        throw ReplyError(QStringLiteral("%1 (the audit trail %2 cannot be written; nothing was changed)").arg(probe.text(), name));
    throw UnexpectedReplyError(QStringLiteral("probing the audit trail %1 returned %2").arg(name, probe.debugString()));
}

void AuditLog::setReason(const QString &reason)
{
    requireValidReason(reason);
    m_reason = reason;
}

QString AuditLog::append(AuditEntry e, const QString &operatorName)
{
    if (!e.time.isValid())
        e.time = QDateTime::currentDateTimeUtc();
    if (e.osUser.isEmpty())
        e.osUser = osUser();
    if (e.host.isEmpty())
        e.host = hostName();
    e.actor = operatorName.isEmpty() ? e.osUser : operatorName;
    if (e.reason.isEmpty())
        e.reason = m_reason;
    const Reply id = m_connection.command({
        "XADD",
        streamKey(),
        "MAXLEN",
        "~",
        QByteArray::number(kMaxEntries),
        "*",
        "time",
        QByteArray::number(e.time.toMSecsSinceEpoch()),
        "actor",
        e.actor.toUtf8(),
        "os_user",
        e.osUser.toUtf8(),
        "host",
        e.host.toUtf8(),
        "action",
        e.action.toUtf8(),
        "target",
        e.target.toUtf8(),
        "before",
        e.before.toUtf8(),
        "after",
        e.after.toUtf8(),
        "count",
        QByteArray::number(e.count),
        "version",
        QByteArrayLiteral(RATESCOPE_VERSION), // the release that wrote it
        "reason",
        e.reason.toUtf8(),
    });
    return id.text();
}

std::vector<AuditEntry> AuditLog::list(int max)
{
    return olderThan(QString(), max);
}

namespace {

std::vector<AuditEntry> entriesOf(const Reply &r)
{
    std::vector<AuditEntry> entries;
    entries.reserve(r.size());
    for (const Reply &item : r.elements())
        entries.push_back(AuditLog::fromStreamItem(item));
    return entries;
}

} // namespace

Command AuditLog::olderThanCommand(const QString &id, int max) const
{
    const QByteArray end = id.isEmpty() ? QByteArray("+") : "(" + id.toLatin1();
    return {"XREVRANGE", streamKey(), end, "-", "COUNT", QByteArray::number(std::max(1, max))};
}

std::vector<AuditEntry> AuditLog::olderThan(const QString &id, int max)
{
    return entriesOf(m_connection.command(olderThanCommand(id, max)));
}

std::vector<AuditEntry> AuditLog::newerThan(const QString &id, int max)
{
    const QByteArray start = id.isEmpty() ? QByteArray("-") : "(" + id.toLatin1();
    return entriesOf(m_connection.command({"XRANGE", streamKey(), start, "+", "COUNT", QByteArray::number(std::max(1, max))}));
}

AuditEntry AuditLog::fromStreamItem(const Reply &item)
{
    if (item.size() != 2)
        throw UnexpectedReplyError(QStringLiteral("unexpected stream entry %1").arg(item.debugString()));
    AuditEntry e;
    e.id = item[0].text();
    const auto &fields = item[1].elements();
    for (size_t i = 0; i + 1 < fields.size(); i += 2) {
        const QByteArray &name = fields[i].bytes();
        const QString value = fields[i + 1].text();
        if (name == "time")
            e.time = QDateTime::fromMSecsSinceEpoch(value.toLongLong(), Qt::UTC);
        else if (name == "actor")
            e.actor = value;
        else if (name == "os_user")
            e.osUser = value;
        else if (name == "host")
            e.host = value;
        else if (name == "action")
            e.action = value;
        else if (name == "target")
            e.target = value;
        else if (name == "before")
            e.before = value;
        else if (name == "after")
            e.after = value;
        else if (name == "count")
            e.count = value.toLongLong();
        else if (name == "version")
            e.version = value;
        else if (name == "reason")
            e.reason = value;
    }
    return e;
}

void requireValidReason(const QString &reason, const QString &what)
{
    if (reason.isEmpty())
        return;
    requireSafeText(reason, what, kMaxReasonLength);
    if (reason.trimmed() != reason)
        throw UsageError(QStringLiteral("%1 must not start or end with spaces").arg(what));
}

QByteArray settingsKey(const MetadataNamespace &ns)
{
    return ns.key("settings");
}

NamespaceSettings readNamespaceSettings(Connection &connection, const MetadataNamespace &ns)
{
    NamespaceSettings settings;
    const Reply r = connection.command({"HGET", settingsKey(ns), "require-reason"});
    if (r.isError())
        throw ReplyError(QStringLiteral("%1 (reading the settings %2)").arg(r.text(), QString::fromUtf8(settingsKey(ns))));
    settings.requireReason = r.bytes() == "1";
    return settings;
}

QStringList namespaceSettingNames()
{
    return {QStringLiteral("require-reason")};
}

AuditEntry scriptsDeployAuditEntry(const DeployPlan &plan, int loaded)
{
    QJsonObject before;
    for (const DeployPlan::Target &t : plan.targets)
        before.insert(t.address, t.loaded.isEmpty() ? QJsonValue() : QJsonValue(t.loaded));
    AuditEntry e;
    e.action = QStringLiteral("scripts.deploy");
    e.target = QStringLiteral("%1 %2").arg(QString::fromLatin1(plan.library), plan.version);
    e.before = QString::fromUtf8(QJsonDocument(before).toJson(QJsonDocument::Compact));
    e.after = QString::fromUtf8(QJsonDocument(plan.toJson()).toJson(QJsonDocument::Compact));
    e.count = loaded;
    return e;
}

} // namespace ratescope
