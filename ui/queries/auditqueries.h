// The Audit tab's reads of the audit stream (<ns>audit), a page at a time.
#pragma once

#include "admin/audit.h"
#include "admin/metadatanamespace.h"

#include <vector>

namespace ratescope {
class Connection;
}

namespace ratescope::ui {

// Which entries: the newest, those newer than an id (following), or older than one.
struct AuditSlice {
    enum class Direction { Newest, NewerThan, OlderThan };
    Direction direction = Direction::Newest;
    QString id; // NewerThan, OlderThan
    int count = 100;
};

struct AuditRead {
    std::vector<AuditEntry> entries;
    QString wrongType; // the key holds this type, not a stream: nothing could be read
};

// Throws the connection's errors; a key of another type is said in wrongType.
AuditRead readAuditSlice(Connection &c, const MetadataNamespace &ns, const AuditSlice &slice);

// Appends one entry (a change the console made); returns its id.
QString appendAuditEntry(Connection &c, const MetadataNamespace &ns, const AuditEntry &entry, const QString &operatorName = {});

} // namespace ratescope::ui
