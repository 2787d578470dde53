// Glob patterns with Redis's own semantics (SCAN MATCH, KEYS): * ? [abc] [^a-z] and \ escapes.
#pragma once

#include <QByteArray>
#include <QString>

namespace ratescope {

// Qt's wildcard conversion differs (in 6.4 '*' stops at '/', '[!' negates, no '\' escapes),
// and policies must match exactly the keys SCAN MATCH would return, so this follows Redis's
// stringmatchlen().
bool globMatch(const QByteArray &pattern, const QByteArray &text);

// Whether some key that starts with `prefix` matches the pattern: exactly, by running the
// pattern over the prefix (every position the pattern can be in after it), O(pattern x prefix).
bool globReachesPrefix(const QByteArray &pattern, const QByteArray &prefix);

// True when the pattern has no unescaped glob character: it can only match itself.
bool isLiteralPattern(const QByteArray &pattern);

// The pattern that matches exactly this key (glob characters escaped), for SCAN MATCH.
QByteArray escapeGlob(const QByteArray &key);

// How specific a glob is, for "longest glob wins": its length without wildcards.
int globSpecificity(const QByteArray &pattern);

// Where a glob is broken for SCAN MATCH and the policy's own matching: an unclosed '['
// ("unbalanced '['") or a trailing '\' that escapes nothing. Empty when it is well formed.
// Redis accepts both silently and matches something nobody meant.
QString globSyntaxProblem(const QByteArray &pattern);
// Throws UsageError ("<what>: unbalanced '[' at position 2") for a broken glob.
void requireWellFormedGlob(const QByteArray &pattern, const QString &what);

} // namespace ratescope
