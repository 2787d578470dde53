// What a request to Redis came back with at the UI boundary: its value, or the failure the
// console shows in place (never an exception through the event loop).
#pragma once

#include <QString>

#include <exception>
#include <optional>

namespace ratescope::ui {

struct Failure {
    enum class Kind {
        Usage,      // bad input; nothing was sent
        ReadOnly,   // refused by the read-only lock; nothing was sent
        Conflict,   // someone else changed it first
        Connection, // the connection is gone or timed out (the banner's business)
        Auth,       // the server refused the credentials, or wants some (NOAUTH)
        Reply,      // the server answered with an error reply (shown verbatim)
        Other,
    };
    Kind kind = Kind::Other;
    QString message; // the server's or the socket's own text; never a secret

    bool isConnectionLoss() const { return kind == Kind::Connection; }
    // Classifies an exception thrown by the core library (Error hierarchy of errors.h).
    static Failure from(std::exception_ptr error);
};

template <typename T> class Outcome {
public:
    Outcome(T value)
        : m_value(std::move(value))
    {
    }
    Outcome(Failure failure)
        : m_failure(std::move(failure))
    {
    }

    bool ok() const { return m_value.has_value(); }
    const T &value() const { return *m_value; }
    T &value() { return *m_value; }
    const Failure &failure() const { return m_failure; }

private:
    std::optional<T> m_value;
    Failure m_failure;
};

} // namespace ratescope::ui
