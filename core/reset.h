// Resetting limiters: exact keys or a pattern, always previewed, then exactly the preview deleted.
#pragma once

#include <QByteArrayList>
#include <QString>
#include <functional>

namespace ratescope {

class Connection;

struct ResetPlan {
    QByteArrayList keys;  // exactly what execute() deletes
    QByteArray pattern;   // empty for exact keys
    QByteArrayList requested; // the exact keys asked for
};

class Resetter {
public:
    // ns: Ratescope's metadata prefix; a pattern never deletes metadata unless it starts
    // with the namespace itself.
    Resetter(Connection &connection, QString ns);

    // Exact keys, glob characters and all (UNLINK takes names literally). A key that does
    // not exist but is the base of counter windows (<key>:<window id>) expands to them.
    ResetPlan planKeys(const QByteArrayList &keys);
    // A SCAN snapshot of the pattern. progress(scanned keys) is called per page.
    ResetPlan planPattern(const QByteArray &pattern, const std::function<void(qint64)> &progress = {});
    // UNLINKs exactly the planned keys, in batches; keys created since the preview are never
    // touched. Returns how many existed and were deleted.
    qint64 execute(const ResetPlan &plan);

private:
    QByteArrayList counterWindows(const QByteArray &base);

    Connection &m_connection;
    QByteArray m_ns;
};

} // namespace ratescope
