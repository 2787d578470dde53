// What the fuzz targets share: inputs as header lines followed by a body, RESP replies from
// bytes and back, and the abort that turns a broken property into a libFuzzer crash report.
//
// An input that a parser refuses is fine: the core's own Error (UsageError, ProtocolError,
// UnexpectedReplyError, ...) is what it should throw, and the targets catch only that. Any
// other exception escapes LLVMFuzzerTestOneInput and is reported as a crash, like a sanitizer
// report, a failed property (fail()) or an input running past -timeout.
#pragma once

#include "base/errors.h"
#include "formats/usage.h"
#include "redis/resp.h"

#include <QByteArray>
#include <QList>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace ratescope::fuzz {

inline QByteArray bytes(const uint8_t *data, size_t size)
{
    return QByteArray(reinterpret_cast<const char *>(data), qsizetype(size));
}

// The input as `count` lines (the last ones empty when there are fewer) and the rest after them,
// so that a seed reads as text: a few header lines, then the body.
struct Lines {
    QList<QByteArray> lines;
    QByteArray rest;
};
inline Lines splitLines(const QByteArray &input, int count)
{
    Lines out;
    qsizetype at = 0;
    for (int i = 0; i < count; ++i) {
        const qsizetype nl = at <= input.size() ? input.indexOf('\n', at) : -1;
        if (nl < 0) {
            out.lines << input.mid(at);
            at = input.size() + 1;
        } else {
            out.lines << input.mid(at, nl - at);
            at = nl + 1;
        }
    }
    out.rest = at <= input.size() ? input.mid(at) : QByteArray();
    return out;
}

// A whole decimal integer, or `fallback`.
inline qint64 number(const QByteArray &text, qint64 fallback)
{
    qint64 v = 0;
    const char *end = text.constData() + text.size();
    const auto r = std::from_chars(text.constData(), end, v);
    return r.ec == std::errc() && r.ptr == end && !text.isEmpty() ? v : fallback;
}

// Every complete reply in `resp`, in order, up to the first protocol error.
inline std::vector<Reply> parseReplies(const QByteArray &resp)
{
    std::vector<Reply> out;
    RespParser parser;
    try {
        parser.feed(resp);
        while (std::optional<Reply> r = parser.next())
            out.push_back(std::move(*r));
    } catch (const ProtocolError &) {
    }
    return out;
}

// A reply as a server would send it (RESP2).
inline void encodeReply(QByteArray &out, const Reply &r)
{
    switch (r.type()) {
    case Reply::Type::Nil:
        out += "$-1\r\n";
        return;
    case Reply::Type::String:
        out += '$' + QByteArray::number(r.bytes().size()) + "\r\n" + r.bytes() + "\r\n";
        return;
    case Reply::Type::Status:
        out += '+' + r.bytes() + "\r\n";
        return;
    case Reply::Type::Error:
        out += '-' + r.bytes() + "\r\n";
        return;
    case Reply::Type::Integer:
        out += ':' + QByteArray::number(r.integer()) + "\r\n";
        return;
    case Reply::Type::Array:
        out += '*' + QByteArray::number(qint64(r.size())) + "\r\n";
        for (const Reply &e : r.elements())
            encodeReply(out, e);
        return;
    }
}

// A property that does not hold: says which, and aborts (libFuzzer saves the input).
[[noreturn]] inline void fail(const char *what, const QByteArray &detail = {})
{
    std::fprintf(stderr, "FUZZ PROPERTY FAILED: %s %s\n", what, detail.toPercentEncoding(" :*?[]^-\\/").constData());
    std::abort();
}
inline void check(bool holds, const char *what, const QByteArray &detail = {})
{
    if (!holds)
        fail(what, detail);
}

// What any usage must be, whatever another service wrote in the key it was read from.
inline void checkUsage(const Usage &u, const QByteArray &what)
{
    const Decision &d = u.decision;
    check(d.retryAfterUs >= 0, "a negative retry-after", what);
    check(d.resetAfterUs >= 0, "a negative reset-after", what);
    check(d.remaining >= 0, "a negative remaining", what);
    check(!d.allowed || d.retryAfterUs == 0, "allowed with a retry-after", what);
}

} // namespace ratescope::fuzz
