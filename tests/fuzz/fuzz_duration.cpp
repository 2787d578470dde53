// Durations and numbers people type (base/duration.h, base/inputcheck.h): parseDurationUs,
// parseStrictInteger and the checks on text and namespaces, on the input as UTF-8 text; and
// formatDurationUs / formatWaitUs on its first eight bytes as a number of microseconds.
#include "fuzzsupport.h"

#include "base/duration.h"
#include "base/inputcheck.h"

#include <cstring>
#include <limits>

using namespace ratescope;

namespace {

// The longest duration parseDurationUs takes (9e15 us, about 285 years).
constexpr qint64 kLongestUs = 9000000000000000LL;

void durationText(const QString &text)
{
    try {
        const qint64 us = parseDurationUs(text);
        fuzz::check(us >= 0 && us <= kLongestUs, "a duration out of range", text.toUtf8());
        fuzz::check(parseDurationUs(formatDurationUs(us)) == us, "a parsed duration does not round-trip", text.toUtf8());
    } catch (const UsageError &) {
    }
}

void integerText(const QString &text)
{
    bool ok = false;
    const qint64 v = parseStrictInteger(text, &ok);
    // Exactly an optional '-' and ASCII digits, in range.
    qsizetype digits = 0;
    bool shape = !text.isEmpty();
    for (qsizetype i = 0; i < text.size() && shape; ++i) {
        if (text[i] >= QLatin1Char('0') && text[i] <= QLatin1Char('9'))
            ++digits;
        else if (!(i == 0 && text[i] == QLatin1Char('-')))
            shape = false;
    }
    shape = shape && digits > 0;
    if (ok) {
        fuzz::check(shape, "parseStrictInteger took what is no integer", text.toUtf8());
        bool again = false;
        fuzz::check(parseStrictInteger(QString::number(v), &again) == v && again, "an integer does not round-trip", text.toUtf8());
    } else if (shape) {
        // Refused digits: only out of range (or longer than 20 characters).
        bool fits = false;
        text.toLongLong(&fits);
        fuzz::check(!fits || text.size() > 20, "parseStrictInteger refused an integer", text.toUtf8());
    }
}

void checkedText(const QString &text)
{
    const QString problem = unsafeCharacterProblem(text);
    try {
        requireSafeText(text, QStringLiteral("--description"), 200, true);
        fuzz::check(problem.isEmpty(), "requireSafeText took unsafe text", text.toUtf8());
    } catch (const UsageError &) {
    }
    try {
        requireValidNamespace(text);
    } catch (const UsageError &) {
    }
}

void formatted(qint64 us)
{
    const QString text = formatDurationUs(us);
    formatWaitUs(us);
    if (us >= 0 && us <= kLongestUs) {
        try {
            fuzz::check(parseDurationUs(text) == us, "formatDurationUs does not round-trip", text.toUtf8());
        } catch (const UsageError &e) {
            fuzz::fail("parseDurationUs refuses what formatDurationUs wrote", text.toUtf8() + ": " + e.what());
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QString text = QString::fromUtf8(fuzz::bytes(data, size));
    durationText(text);
    integerText(text);
    checkedText(text);

    qint64 us = 0;
    std::memcpy(&us, data, std::min(size, sizeof us));
    formatted(us);
    formatted(us % (kLongestUs + 1)); // within what parses, where most numbers fall otherwise
    return 0;
}
