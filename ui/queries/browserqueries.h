// The keys panel's reads: what a listing starts from, a page of key names, and the marks that
// tell whether limits changed elsewhere (policies, and the audit stream's newest entry).
#pragma once

#include "admin/metadatanamespace.h"
#include "admin/policy.h"
#include "scannednames.h"

#include <functional>
#include <vector>

namespace ratescope {
class Connection;
}

namespace ratescope::ui {

struct NamesPage {
    QByteArray cursor; // "0": the walk is complete
    ScannedNames names;
};

// What a listing starts from, in one round trip (the handshake's, when the console has just
// connected): the key count, the policies, the newest audit entry (as readChangeMarks reads it,
// so that following changes starts from it) and the first SCAN call's names.
struct ListingStart {
    qint64 dbSize = -1; // -1: unknown (a cluster master out of reach)
    std::vector<Policy> policies;
    QString policyProblem; // why some or all policies could not be read (columns stay empty)
    QString lastChange;    // null when the audit is unreadable (ChangeMarks::lastChange)
    NamesPage first;       // SCAN 0 MATCH match COUNT scanCount
};
ListingStart readListingStart(Connection &c, const MetadataNamespace &ns, const QByteArray &match, int scanCount);
// SCAN from cursor, `scanCount` per call, until about pageKeys names, sliceMs spent, the walk's
// end, or yield() says stop. yield() is called between two SCAN calls (the console's runs the
// reads waiting on the connection there, RedisClient::betweenRequests, and says go on). A
// failure after some names ends the page early (the next page meets it again from its
// cursor); before any, it is thrown.
struct NamesPageRequest {
    QByteArray cursor;
    QByteArray match;
    qsizetype pageKeys = 10000;
    int scanCount = 1000;
    int sliceMs = 100;
};
NamesPage scanNamesPage(Connection &c, const NamesPageRequest &request, const std::function<bool()> &yield);

// Which of these keys exist now: one pipelined round of EXISTS.
std::vector<QByteArray> existingKeys(Connection &c, const std::vector<QByteArray> &keys);

// What says that limits may have changed: the policies (with their versions) and the newest
// audit entry's id (overrides set or cleared, keys reset; null when the audit is unreadable).
struct ChangeMarks {
    std::vector<Policy> policies;
    QString lastChange;
};
ChangeMarks readChangeMarks(Connection &c, const MetadataNamespace &ns);

} // namespace ratescope::ui
