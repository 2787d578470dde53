// Globs (base/glob.h): the syntax check and the matching a policy and SCAN MATCH rely on.
// Input: the pattern, a newline, then the key. Matching must stay O(pattern x key) whatever
// the pattern: an input running past -timeout (a backtracking blow-up) is a finding too.
#include "fuzzsupport.h"

#include "base/glob.h"

using namespace ratescope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const fuzz::Lines in = fuzz::splitLines(fuzz::bytes(data, size), 1);
    const QByteArray &pattern = in.lines[0];
    const QByteArray &key = in.rest;

    const QString problem = globSyntaxProblem(pattern);
    try {
        requireWellFormedGlob(pattern, QStringLiteral("glob"));
        fuzz::check(problem.isEmpty(), "requireWellFormedGlob accepted a glob with a problem", pattern);
    } catch (const UsageError &) {
        fuzz::check(!problem.isEmpty(), "requireWellFormedGlob refused a well-formed glob", pattern);
    }
    const bool matches = globMatch(pattern, key);
    isLiteralPattern(pattern);
    const int specificity = globSpecificity(pattern);
    fuzz::check(specificity >= 0 && specificity <= pattern.size(), "specificity out of range", pattern);

    // A key that matches: every prefix of it can still be completed to a match.
    if (matches) {
        fuzz::check(globReachesPrefix(pattern, key), "a matching key is no reachable prefix", pattern + '\n' + key);
        fuzz::check(globReachesPrefix(pattern, key.left(key.size() / 2)), "a matching key's prefix is unreachable", pattern + '\n' + key);
    } else {
        globReachesPrefix(pattern, key);
    }
    // The key escaped is a well-formed literal glob that matches exactly it.
    const QByteArray escaped = escapeGlob(key);
    fuzz::check(globSyntaxProblem(escaped).isEmpty(), "an escaped key is no well-formed glob", key);
    fuzz::check(isLiteralPattern(escaped), "an escaped key is no literal", key);
    fuzz::check(globMatch(escaped, key), "an escaped key does not match itself", key);
    fuzz::check(globSpecificity(escaped) == key.size(), "an escaped key's specificity is not its length", key);
    if (!pattern.isEmpty())
        fuzz::check(!globMatch(escaped, key + pattern.left(1)), "an escaped key matches a longer key", key);
    return 0;
}
