#include "resp.h"

#include "errors.h"

#include <hiredis/hiredis.h>

#include <charconv>
#include <memory>

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
    // spent a sixth of the client's time there (bench_top).
    char digits[24];
    auto header = [&](char tag, qsizetype n) {
        out.append(tag);
        const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
        out.append(digits, end - digits);
        out.append("\r\n", 2);
    };
    header('*', args.size());
    for (const QByteArray &a : args) {
        header('$', a.size());
        out.append(a);
        out.append("\r\n", 2);
    }
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

// hiredis builds its own redisReply tree; we convert it once the reply is complete.
Reply convert(const redisReply *r)
{
    switch (r->type) {
    case REDIS_REPLY_STRING:
        return Reply::string(QByteArray(r->str, qsizetype(r->len)));
    case REDIS_REPLY_STATUS:
        return Reply::status(QByteArray(r->str, qsizetype(r->len)));
    case REDIS_REPLY_ERROR:
        return Reply::error(QByteArray(r->str, qsizetype(r->len)));
    case REDIS_REPLY_INTEGER:
        return Reply::integer(r->integer);
    case REDIS_REPLY_ARRAY: {
        std::vector<Reply> elements;
        elements.reserve(r->elements);
        for (size_t i = 0; i < r->elements; ++i)
            elements.push_back(convert(r->element[i]));
        return Reply::array(std::move(elements));
    }
    default:
        return Reply::nil();
    }
}

} // namespace

RespParser::RespParser()
    : m_reader(redisReaderCreate())
{
    if (!m_reader)
        throw std::bad_alloc();
}

RespParser::~RespParser()
{
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
    std::unique_ptr<redisReply, void (*)(void *)> owned(static_cast<redisReply *>(raw), freeReplyObject);
    return convert(owned.get());
}

bool RespParser::idle() const
{
    return m_reader->pos >= m_reader->len;
}

void RespParser::reset()
{
    redisReaderFree(m_reader);
    m_reader = redisReaderCreate();
    if (!m_reader)
        throw std::bad_alloc();
}

} // namespace ratescope
