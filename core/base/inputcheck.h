// Checks on text and numbers typed by people (options, names, descriptions): nothing that
// could hide characters, forge a line in a log, or be read two ways reaches a server.
#pragma once

#include <QString>

namespace ratescope {

// Empty when the text holds only visible characters and spaces; otherwise names the first
// offender: a control character (C0, DEL, C1, line or paragraph separator) or an invisible
// formatting one (bidirectional controls, zero-width characters, soft hyphen), e.g.
// "contains a control character (U+000A)".
QString unsafeCharacterProblem(const QString &text);

// Throws UsageError "<what> ..." when the text is empty (unless allowed), longer than
// maxLength characters, or has a character unsafeCharacterProblem() names.
void requireSafeText(const QString &text, const QString &what, int maxLength, bool allowEmpty = false);

// The metadata namespace (--namespace): 1 to 64 characters of A-Z a-z 0-9 : _ . -, so it is
// never empty (top-level "audit" and "policies" keys), never a glob, never a line break.
constexpr int kMaxNamespaceLength = 64;
void requireValidNamespace(const QString &ns);

// A decimal integer exactly: an optional '-' and digits, nothing around or inside them
// (" 5", "5 ", "+5", "0x5" and "5e3" are not integers). nullopt-like: *ok false.
qint64 parseStrictInteger(const QString &text, bool *ok);

} // namespace ratescope
