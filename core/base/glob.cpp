#include "base/glob.h"

#include "base/errors.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace ratescope {

namespace {

bool isGlobChar(char c)
{
    return c == '*' || c == '?' || c == '[' || c == ']' || c == '\\';
}

// Whether the one-character token at p ('?', a class "[...]", an escaped or a plain byte)
// matches c; *next is where the token ends.
bool matchToken(const char *p, const char *pend, char c, const char **next)
{
    switch (*p) {
    case '?':
        *next = p + 1;
        return true;
    case '[': {
        ++p;
        const bool negate = p < pend && *p == '^';
        if (negate)
            ++p;
        bool matched = false;
        while (p < pend && *p != ']') {
            if (*p == '\\' && p + 1 < pend) {
                ++p;
                matched |= *p == c;
            } else if (p + 2 < pend && p[1] == '-' && p[2] != ']') {
                char lo = p[0], hi = p[2];
                if (lo > hi)
                    std::swap(lo, hi);
                matched |= c >= lo && c <= hi;
                p += 2;
            } else {
                matched |= *p == c;
            }
            ++p;
        }
        *next = p < pend ? p + 1 : pend; // past the ']' (an unclosed class ends the pattern)
        return matched != negate;
    }
    case '\\':
        if (p + 1 < pend)
            ++p;
        [[fallthrough]];
    default:
        *next = p + 1;
        return *p == c;
    }
}

// Every token but '*' consumes exactly one byte, so on a mismatch only the last '*' seen
// needs to take one byte more: earlier stars can gain nothing by taking more (the last one
// could take it instead). Time O(pattern x text), whatever the pattern, where recursing at
// every '*' is exponential in the number of stars ('*a*a*a*a*b' against "aaaa...").
bool match(const char *p, const char *pend, const char *s, const char *send)
{
    const char *starP = nullptr; // the pattern just after the last '*'
    const char *starS = nullptr; // where that '*' stopped taking bytes
    while (s < send) {
        if (p < pend && *p == '*') {
            while (p < pend && *p == '*')
                ++p;
            if (p == pend)
                return true;
            starP = p;
            starS = s;
            continue;
        }
        const char *next = nullptr;
        if (p < pend && matchToken(p, pend, *s, &next)) {
            p = next;
            ++s;
        } else if (starP) {
            p = starP;
            s = ++starS;
        } else {
            return false;
        }
    }
    while (p < pend && *p == '*')
        ++p;
    return p == pend;
}

} // namespace

bool globReachesPrefix(const QByteArray &pattern, const QByteArray &prefix)
{
    // The pattern's tokens: a '*', or one that consumes one byte (matchToken).
    const char *p = pattern.constData(), *pend = p + pattern.size();
    std::vector<const char *> starts;
    std::vector<char> star;
    for (const char *t = p; t < pend;) {
        starts.push_back(t);
        star.push_back(*t == '*');
        const char *next = t + 1;
        if (*t != '*')
            matchToken(t, pend, '\0', &next);
        t = next;
    }
    const size_t n = starts.size();
    // live[i]: the pattern can stand before token i (i == n: at its end) after the bytes read.
    std::vector<char> live(n + 1, 0), next(n + 1, 0);
    const auto close = [&](std::vector<char> &set) { // a '*' may take nothing
        for (size_t i = 0; i < n; ++i)
            if (set[i] && star[i])
                set[i + 1] = 1;
    };
    live[0] = 1;
    close(live);
    for (const char c : prefix) {
        std::fill(next.begin(), next.end(), 0);
        bool any = false;
        for (size_t i = 0; i < n; ++i) {
            if (!live[i])
                continue;
            const char *after = nullptr;
            if (star[i])
                next[i] = any = 1;
            else if (matchToken(starts[i], pend, c, &after))
                next[i + 1] = any = 1;
        }
        if (!any)
            return false;
        close(next);
        live.swap(next);
    }
    return std::any_of(live.begin(), live.end(), [](char v) { return v != 0; });
}

bool globMatch(const QByteArray &pattern, const QByteArray &text)
{
    return match(pattern.constData(), pattern.constData() + pattern.size(), text.constData(), text.constData() + text.size());
}

bool isLiteralPattern(const QByteArray &pattern)
{
    for (qsizetype i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == '\\') {
            ++i;
            continue;
        }
        if (pattern[i] == '*' || pattern[i] == '?' || pattern[i] == '[')
            return false;
    }
    return true;
}

QByteArray escapeGlob(const QByteArray &key)
{
    QByteArray out;
    out.reserve(key.size() + 8);
    for (char c : key) {
        if (isGlobChar(c))
            out += '\\';
        out += c;
    }
    return out;
}

int globSpecificity(const QByteArray &pattern)
{
    int n = 0;
    for (qsizetype i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c == '\\') {
            ++i;
            ++n;
        } else if (c != '*' && c != '?') {
            ++n;
        }
    }
    return n;
}

QString globSyntaxProblem(const QByteArray &pattern)
{
    // The same walk as Redis's stringmatchlen(): '\\' escapes the next byte, also inside a class.
    const qsizetype n = pattern.size();
    for (qsizetype i = 0; i < n; ++i) {
        if (pattern[i] == '\\') {
            if (i + 1 == n)
                return QStringLiteral("a trailing '\\' escapes nothing");
            ++i;
        } else if (pattern[i] == '[') {
            qsizetype j = i + 1;
            if (j < n && pattern[j] == '^')
                ++j;
            bool closed = false;
            for (; j < n; ++j) {
                if (pattern[j] == '\\') {
                    if (j + 1 == n)
                        break;
                    ++j;
                } else if (pattern[j] == ']') {
                    closed = true;
                    break;
                }
            }
            if (!closed)
                return QStringLiteral("unbalanced '[' at position %1").arg(i + 1);
            i = j;
        }
    }
    return {};
}

void requireWellFormedGlob(const QByteArray &pattern, const QString &what)
{
    if (const QString problem = globSyntaxProblem(pattern); !problem.isEmpty())
        throw UsageError(QStringLiteral("%1: %2").arg(what, problem));
}

} // namespace ratescope
