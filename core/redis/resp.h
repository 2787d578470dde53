// RESP values and the codec around hiredis: command encoding and incremental reply parsing.
#pragma once

#include <optional>
#include <QByteArray>
#include <QList>
#include <QString>
#include <vector>

struct redisReader;

namespace ratescope {

using Command = QList<QByteArray>;

// One RESP2 reply. Arrays own their elements; nil is its own type, not an empty string.
class Reply {
public:
    enum class Type { Nil, String, Status, Error, Integer, Array };

    Reply() = default;
    static Reply nil() { return Reply(); }
    static Reply string(QByteArray s) { return Reply(Type::String, std::move(s)); }
    static Reply status(QByteArray s) { return Reply(Type::Status, std::move(s)); }
    static Reply error(QByteArray s) { return Reply(Type::Error, std::move(s)); }
    static Reply integer(long long v);
    static Reply array(std::vector<Reply> elements);

    Type type() const { return m_type; }
    bool isNil() const { return m_type == Type::Nil; }
    bool isError() const { return m_type == Type::Error; }
    bool isArray() const { return m_type == Type::Array; }
    bool isInteger() const { return m_type == Type::Integer; }
    // Bulk string, status or error text.
    const QByteArray &bytes() const { return m_bytes; }
    // As text: an error reply's bytes that are not UTF-8 (a key quoted in the message) as \xNN
    // escapes, never U+FFFD; other replies decoded as UTF-8.
    QString text() const;
    long long integer() const { return m_integer; }
    const std::vector<Reply> &elements() const { return m_elements; }
    std::vector<Reply> &elements() { return m_elements; }
    // Throws UnexpectedReplyError when there is no element i (not an array, or too short).
    const Reply &operator[](size_t i) const;
    size_t size() const { return m_elements.size(); }

    // Throws ReplyError when this is an error reply; returns *this otherwise.
    const Reply &orThrow() const;
    // The reply as an integer: an integer reply, or a bulk string holding one. Throws
    // UnexpectedReplyError for anything else.
    long long toInteger() const;

    // Readable form for diagnostics and tests: "(nil)", "\"abc\"", "(integer) 3", ...
    QString debugString() const;

    bool operator==(const Reply &other) const = default;

private:
    Reply(Type t, QByteArray s)
        : m_type(t)
        , m_bytes(std::move(s))
    {
    }

    Type m_type = Type::Nil;
    QByteArray m_bytes;
    long long m_integer = 0;
    std::vector<Reply> m_elements;
};

// Encodes a command as a RESP array of bulk strings (what redisFormatCommandArgv writes).
QByteArray encodeCommand(const Command &args);
// The same, appended to out (a pipeline's batch).
void appendCommand(QByteArray &out, const Command &args);

// Incremental RESP parser over hiredis' redisReader: feed bytes as they arrive, take
// complete replies out. Not copyable; one per connection.
class RespParser {
public:
    RespParser();
    ~RespParser();
    RespParser(const RespParser &) = delete;
    RespParser &operator=(const RespParser &) = delete;

    // Throws ProtocolError when the stream is not valid RESP.
    void feed(const char *data, size_t len);
    void feed(const QByteArray &data) { feed(data.constData(), size_t(data.size())); }
    // The next complete reply, if one has arrived. Throws ProtocolError.
    std::optional<Reply> next();
    // True when no partial reply is buffered.
    bool idle() const;
    // Forget any partial input (after a reconnect).
    void reset();

private:
    redisReader *m_reader = nullptr;
};

} // namespace ratescope
