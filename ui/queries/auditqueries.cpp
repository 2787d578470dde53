#include "auditqueries.h"

#include "base/errors.h"
#include "redis/connection.h"

namespace ratescope::ui {

AuditRead readAuditSlice(Connection &c, const MetadataNamespace &ns, const AuditSlice &slice)
{
    AuditRead r;
    AuditLog log(c, ns);
    try {
        switch (slice.direction) {
        case AuditSlice::Direction::Newest:
            r.entries = log.olderThan(QString(), slice.count);
            break;
        case AuditSlice::Direction::NewerThan:
            r.entries = log.newerThan(slice.id, slice.count);
            break;
        case AuditSlice::Direction::OlderThan:
            r.entries = log.olderThan(slice.id, slice.count);
            break;
        }
    } catch (const ReplyError &e) {
        if (e.prefix() != QLatin1String("WRONGTYPE"))
            throw;
        try {
            r.wrongType = c.command({"TYPE", log.streamKey()}).text();
        } catch (const ReplyError &) {
            r.wrongType = QStringLiteral("key of another type");
        }
    }
    return r;
}

QString appendAuditEntry(Connection &c, const MetadataNamespace &ns, const AuditEntry &entry, const QString &operatorName)
{
    return AuditLog(c, ns).append(entry, operatorName);
}

} // namespace ratescope::ui
