// How the Audit tab writes what it read from the audit stream: every value from the server as
// plain text with control and invisible characters escaped, before/after JSON pretty-printed,
// the fields a change touched, and the CSV an operator exports.
#pragma once

#include "admin/audit.h"

#include <QString>
#include <vector>

class QIODevice;

namespace ratescope::ui {

// A value from the server as one line of plain text: itself when printable, else quoted with
// \xNN escapes (displayKey's rules: no value can forge a line, move the cursor or reorder text).
QString auditText(const QString &value);

// before/after as indented JSON, strings shown with auditText's rules; text that is not JSON
// is shown line by line with those rules. Empty stays empty.
QString prettyAuditJson(const QString &json);

// One field a change touched: its dotted path ("spec.limit"), and its value before and after
// as compact JSON ("" when the field was absent on that side).
struct FieldChange {
    QString field;
    QString before;
    QString after;
};
// The fields that differ between two JSON states (objects compared field by field, nested
// objects by dotted path, anything else as a whole).
std::vector<FieldChange> changedFields(const QString &beforeJson, const QString &afterJson);

// The CSV an export writes: a header, then one line per entry (RFC 4180 quoting; UTC times;
// text cells a spreadsheet would run as a formula prefixed with ').
QByteArray auditCsvHeader();
QByteArray auditCsvLine(const AuditEntry &entry);

} // namespace ratescope::ui
