#include "redis/resp.h"

#include "base/errors.h"
#include "base/keytext.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <memory>
#include <new>

namespace ratescope {

Reply Reply::integer(long long v)
{
    Reply r;
    r.m_type = Type::Integer;
    r.m_integer = v;
    return r;
}

Reply Reply::array(std::vector<Reply> elements)
{
    Reply r;
    r.m_type = Type::Array;
    r.m_elements = std::move(elements);
    return r;
}

QString Reply::text() const
{
    return m_type == Type::Error ? escapeInvalidUtf8(m_bytes) : QString::fromUtf8(m_bytes);
}

const Reply &Reply::orThrow() const
{
    if (m_type == Type::Error)
        throw ReplyError(text());
    return *this;
}

long long Reply::toInteger() const
{
    orThrow();
    if (m_type == Type::Integer)
        return m_integer;
    if (m_type == Type::String) {
        bool ok = false;
        const long long v = m_bytes.toLongLong(&ok);
        if (ok)
            return v;
    }
    throw UnexpectedReplyError(QStringLiteral("expected an integer reply, got %1").arg(debugString()));
}

const Reply &Reply::operator[](size_t i) const
{
    if (i >= m_elements.size())
        throw UnexpectedReplyError(QStringLiteral("expected a reply with at least %1 elements, got %2").arg(i + 1).arg(debugString()));
    return m_elements[i];
}

QString Reply::debugString() const
{
    switch (m_type) {
    case Type::Nil:
        return QStringLiteral("(nil)");
    case Type::String:
        return QLatin1Char('"') + QString::fromUtf8(m_bytes.left(200)) +
               (m_bytes.size() > 200 ? QStringLiteral("...\"") : QStringLiteral("\""));
    case Type::Status:
        return text();
    case Type::Error:
        return QStringLiteral("(error) ") + text();
    case Type::Integer:
        return QStringLiteral("(integer) %1").arg(m_integer);
    case Type::Array: {
        QStringList parts;
        for (const Reply &e : m_elements)
            parts << e.debugString();
        return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
    }
    }
    return {};
}

void appendCommand(QByteArray &out, const Command &args)
{
    // RESP's request form: *<count>, then $<length> and the bytes of each argument. Written
    // here rather than with redisFormatCommandArgv: that one formats every length with
    // sprintf into a buffer of its own, then it is copied, and pipelines of limiter calls
    // spent a sixth of the client's time there (bench_top). The bytes go straight into room
    // made once (QByteArray::append goes through insert's checks for every piece).
    qsizetype room = 24;
    for (const QByteArray &a : args)
        room += a.size() + 24;
    const qsizetype start = out.size();
    out.resize(start + room);
    char *p = out.data() + start;
    auto header = [&p](char tag, qsizetype n) {
        *p++ = tag;
        p = std::to_chars(p, p + 21, n).ptr;
        *p++ = '\r';
        *p++ = '\n';
    };
    header('*', args.size());
    for (const QByteArray &a : args) {
        header('$', a.size());
        if (!a.isEmpty())
            std::memcpy(p, a.constData(), size_t(a.size()));
        p += a.size();
        *p++ = '\r';
        *p++ = '\n';
    }
    out.truncate(p - out.constData());
}

QByteArray encodeCommand(const Command &args)
{
    qsizetype size = 16;
    for (const QByteArray &a : args)
        size += a.size() + 16;
    QByteArray out;
    out.reserve(size);
    appendCommand(out, args);
    return out;
}

namespace {

// hiredis' reader builds the replies through these functions, straight into our Reply tree:
// its default ones build a redisReply tree, which then had to be copied into Replies (two
// allocations and a copy per element; a fifth of the client's time in bench_top). A reply
// with a parent is appended to the parent's elements (the reader meets them in order, index
// 0 first); the root is allocated here and handed to RespParser::next, which owns it from then
// on. An array that is still being filled is the last element of its own parent, so the
// pointers the reader keeps to open arrays stay valid while elements are appended.
//
// These are called from C: nothing may be thrown through them. A failure to allocate returns
// nullptr, which the reader reports as out of memory (a ProtocolError from next(), and the
// connection is dropped).
template <typename Make> void *place(const redisReadTask *task, Make make) noexcept
{
    try {
        if (task->parent) {
            std::vector<Reply> &elements = static_cast<Reply *>(task->parent->obj)->elements();
            Q_ASSERT(size_t(task->idx) == elements.size());
            elements.push_back(make());
            return &elements.back();
        }
        return new Reply(make());
    } catch (...) {
        return nullptr;
    }
}

void *createString(const redisReadTask *task, char *str, size_t len)
{
    return place(task, [&] {
        QByteArray bytes(str, qsizetype(len));
        switch (task->type) {
        case REDIS_REPLY_STATUS:
            return Reply::status(std::move(bytes));
        case REDIS_REPLY_ERROR:
            return Reply::error(std::move(bytes));
        default:
            return Reply::string(std::move(bytes));
        }
    });
}

// Room for the elements grows as they arrive, from at most kReservedElements: a header alone
// ("*2147483647") must not make this side allocate for elements that never come.
constexpr size_t kReservedElements = 1 << 16;

void *createArray(const redisReadTask *task, int elements)
{
    return place(task, [&] {
        std::vector<Reply> room;
        room.reserve(std::min(size_t(std::max(0, elements)), kReservedElements));
        return Reply::array(std::move(room));
    });
}

void *createInteger(const redisReadTask *task, long long value)
{
    return place(task, [&] { return Reply::integer(value); });
}

void *createNil(const redisReadTask *task)
{
    return place(task, [] { return Reply::nil(); });
}

void freeObject(void *reply)
{
    delete static_cast<Reply *>(reply); // only ever a root: children live in their parent
}

redisReplyObjectFunctions replyFunctions = {createString, createArray, createInteger, createNil, freeObject};

redisReader *createReader()
{
    redisReader *reader = redisReaderCreateWithFunctions(&replyFunctions);
    if (!reader)
        throw std::bad_alloc();
    return reader;
}

} // namespace

RespParser::RespParser()
    : m_reader(createReader())
{
}

RespParser::~RespParser()
{
    if (m_reader)
        redisReaderFree(m_reader);
}

void RespParser::feed(const char *data, size_t len)
{
    if (redisReaderFeed(m_reader, data, len) != REDIS_OK)
        throw ProtocolError(QStringLiteral("protocol error: %1").arg(QString::fromUtf8(m_reader->errstr)));
}

std::optional<Reply> RespParser::next()
{
    void *raw = nullptr;
    if (redisReaderGetReply(m_reader, &raw) != REDIS_OK) {
        const QString why = QString::fromUtf8(m_reader->errstr);
        reset();
        throw ProtocolError(QStringLiteral("protocol error: %1").arg(why));
    }
    if (!raw)
        return std::nullopt;
    const std::unique_ptr<Reply> owned(static_cast<Reply *>(raw));
    return std::move(*owned);
}

bool RespParser::idle() const
{
    // Every byte read, and no reply begun: no array under construction (hiredis keeps its
    // root in `reply`) and no type byte read for a reply still to come (a reader asked for a
    // reply with nothing buffered holds an empty task at the root, type -1).
    const redisReader &r = *m_reader;
    return r.pos >= r.len && !r.reply && (r.ridx < 0 || r.rstack[0].type < 0);
}

void RespParser::reset()
{
    redisReaderFree(m_reader);
    m_reader = nullptr;
    m_reader = createReader();
}

} // namespace ratescope
