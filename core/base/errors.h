// The error hierarchy of the core library: what went wrong talking to Redis, by kind.
#pragma once

#include <QString>
#include <stdexcept>

namespace ratescope {

// Base of every error the core throws. what() is UTF-8 and never contains a secret.
class Error : public std::runtime_error {
public:
    explicit Error(const QString &message)
        : std::runtime_error(message.toStdString())
    {
    }
    QString message() const { return QString::fromUtf8(what()); }
};

// Bad input from the user: a malformed URL, duration, key or limit. Nothing was sent.
class UsageError : public Error {
    using Error::Error;
};

// A mutation refused because the session is read-only. Nothing was sent.
class ReadOnlyError : public Error {
    using Error::Error;
};

// A write based on stale data was refused: someone else changed it first.
class ConflictError : public Error {
    using Error::Error;
};

// The connection could not be used. A command that raised one of these may or may not
// have executed on the server: callers must not replay it blindly.
class ConnectionError : public Error {
    using Error::Error;
};

// Socket-level failure: refused, reset, DNS, TLS handshake, broken pipe.
class IoError : public ConnectionError {
    using ConnectionError::ConnectionError;
};

// No reply (or no progress) within the configured time.
class TimeoutError : public ConnectionError {
    using ConnectionError::ConnectionError;
};

// The peer closed the connection (an I/O failure seen from our side).
class ClosedError : public IoError {
    using IoError::IoError;
};

// AUTH was rejected. Carries the server's text, never the password.
class AuthError : public ConnectionError {
    using ConnectionError::ConnectionError;
};

// The byte stream is not valid RESP; the connection is dropped.
class ProtocolError : public ConnectionError {
    using ConnectionError::ConnectionError;
};

// A well-formed reply whose content this build cannot use: a policy record it cannot parse,
// a script reply of the wrong shape, an element that is not there. The connection is fine
// (the stream is in step), so this is no ConnectionError: nobody reconnects for it.
class UnexpectedReplyError : public Error {
    using Error::Error;
};

// The server answered with an error reply (-WRONGTYPE ..., -NOSCRIPT ..., -MOVED ...).
class ReplyError : public Error {
public:
    explicit ReplyError(const QString &serverText)
        : Error(serverText)
        , m_prefix(serverText.section(QLatin1Char(' '), 0, 0))
    {
    }
    // The first word of the reply: "ERR", "WRONGTYPE", "NOSCRIPT", "MOVED", "BUSY", ...
    QString prefix() const { return m_prefix; }

private:
    QString m_prefix;
};

} // namespace ratescope
