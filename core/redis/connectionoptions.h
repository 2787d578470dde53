// Where and how to connect: the parsed form of a Ratescope connection URL (docs/urls.md).
#pragma once

#include <QList>
#include <QString>

#include <atomic>
#include <memory>

namespace ratescope {

struct HostPort {
    QString host;
    quint16 port = 6379;

    // "host", "host:port", "[::1]:port". Throws UsageError naming the problem.
    static HostPort parse(const QString &text, quint16 defaultPort = 6379);
    QString toString() const; // "host:port", IPv6 in brackets; parse() reads it back (% [ ] @ / , encoded)
    bool operator==(const HostPort &) const = default;
};

struct TlsOptions {
    QString caFile;        // trust only this CA bundle; empty = the system's
    QString certFile;      // client certificate (PEM), for servers that ask for one
    QString keyFile;       // its private key (PEM)
    QString sni;           // server name to send and verify; empty = the host
    bool insecure = false; // skip peer verification (explicit opt-in only)
    bool operator==(const TlsOptions &) const = default;
};

// Raised from any thread to cut short the network waits of every connection made with the
// options that carry it (the console closing while a request waits on a silent server):
// socket waits are taken in short slices that look at it, and end with a ConnectionError.
// Copies share it. Not part of what the options say: it never makes options unequal.
class AbortSignal {
public:
    static AbortSignal create() // a live one; a default-constructed signal is never raised
    {
        AbortSignal s;
        s.m_flag = std::make_shared<std::atomic<bool>>(false);
        return s;
    }
    void raise() const
    {
        if (m_flag)
            m_flag->store(true);
    }
    bool raised() const { return m_flag && m_flag->load(); }
    bool live() const { return bool(m_flag); } // can be raised: waits are sliced
    bool operator==(const AbortSignal &) const { return true; }

private:
    std::shared_ptr<std::atomic<bool>> m_flag;
};

struct ConnectionOptions {
    enum class Transport { Tcp, Tls, Unix, Sentinel, Cluster };

    Transport transport = Transport::Tcp;
    HostPort address{QStringLiteral("127.0.0.1"), 6379}; // Tcp and Tls
    QString socketPath;                                  // Unix
    QList<HostPort> seeds;                               // Sentinel and Cluster
    QString masterName;                                  // Sentinel
    QString sentinelUser;                                // credentials for the sentinels themselves (?sentinel_user=)
    QString sentinelPassword;                            // (?sentinel_password=), never printed
    QString user;
    QString password; // never printed: see toUrl()
    int db = 0;
    TlsOptions tls;
    int connectTimeoutMs = 5000;
    int commandTimeoutMs = 5000;
    QString clientName = QStringLiteral("ratescope");
    AbortSignal abort; // not in the URL: set by the program that owns the connection

    // Parses any URL form of docs/urls.md. Throws UsageError with a message that names the
    // problem and never repeats the password.
    static ConnectionOptions fromUrl(const QString &url);

    // The URL back, with the password replaced by "***" unless asked otherwise.
    QString toUrl(bool revealPassword = false) const;
    // How to reach one of the sentinels of a redis-sentinel:// URL (its own credentials).
    ConnectionOptions forSentinel(const HostPort &sentinel) const;
    // Short human name of the server: "127.0.0.1:6379", "unix:/run/redis.sock",
    // "cluster via 127.0.0.1:7000", "sentinel mymaster via 127.0.0.1:26379".
    QString endpoint() const;

    bool operator==(const ConnectionOptions &) const = default;
};

} // namespace ratescope
