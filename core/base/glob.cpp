#include "base/glob.h"

#include "base/errors.h"

namespace ratescope {

namespace {

bool isGlobChar(char c)
{
    return c == '*' || c == '?' || c == '[' || c == ']' || c == '\\';
}

bool match(const char *p, const char *pend, const char *s, const char *send, int depth)
{
    if (depth > 1000)
        return false; // pathological patterns: refuse rather than recurse without bound
    while (p < pend) {
        switch (*p) {
        case '*':
            while (p + 1 < pend && p[1] == '*')
                ++p;
            if (p + 1 == pend)
                return true;
            for (const char *t = s; t <= send; ++t)
                if (match(p + 1, pend, t, send, depth + 1))
                    return true;
            return false;
        case '?':
            if (s == send)
                return false;
            ++s;
            break;
        case '[': {
            if (s == send)
                return false;
            ++p;
            const bool negate = p < pend && *p == '^';
            if (negate)
                ++p;
            bool matched = false;
            while (p < pend && *p != ']') {
                if (*p == '\\' && p + 1 < pend) {
                    ++p;
                    matched |= *p == *s;
                } else if (p + 2 < pend && p[1] == '-' && p[2] != ']') {
                    char lo = p[0], hi = p[2];
                    if (lo > hi)
                        std::swap(lo, hi);
                    matched |= *s >= lo && *s <= hi;
                    p += 2;
                } else {
                    matched |= *p == *s;
                }
                ++p;
            }
            if (matched == negate)
                return false;
            ++s;
            break;
        }
        case '\\':
            if (p + 1 < pend)
                ++p;
            [[fallthrough]];
        default:
            if (s == send || *p != *s)
                return false;
            ++s;
            break;
        }
        ++p;
    }
    return s == send;
}

} // namespace

bool globMatch(const QByteArray &pattern, const QByteArray &text)
{
    return match(pattern.constData(), pattern.constData() + pattern.size(), text.constData(), text.constData() + text.size(), 0);
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
