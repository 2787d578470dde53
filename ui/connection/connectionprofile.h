// A saved way to reach a Redis: one server (TCP, TLS or unix socket), a Redis Cluster by its
// seed nodes, or the master that Sentinels name; ACL user, database, Ratescope's namespace
// and key separator, read-only. Never a password: those live in the system keychain.
#pragma once

#include "redis/connectionoptions.h"

#include <QString>
#include <QStringList>

namespace ratescope::ui {

struct ConnectionProfile {
    // The order of the dialog's "Connect with" choices.
    enum class Transport { Tcp, Tls, Unix, Cluster, Sentinel };
    // Where the password is: nowhere (none needed), the keychain, or (no keychain service
    // running) asked for each time the console starts.
    enum class PasswordStorage { None, Keychain, Ask };

    QString name;
    Transport transport = Transport::Tcp;
    QString host = QStringLiteral("127.0.0.1");
    int port = 6379;
    QString socketPath;
    QStringList seeds;    // Cluster: any of its nodes; Sentinel: the sentinels ("host:port")
    QString masterName;   // Sentinel: the name the sentinels monitor
    QString sentinelUser; // Sentinel: ACL user of the sentinels themselves, if they need one
    PasswordStorage sentinelPasswordStorage = PasswordStorage::None;
    QString caFile;   // TLS: trust only this CA bundle; empty: the system's
    QString certFile; // TLS client certificate, for servers that ask for one
    QString keyFile;
    QString serverName; // SNI and the name verified; empty: the host
    bool verifyPeer = true;
    QString user; // ACL user; empty: default
    int db = 0;
    QString ns = QStringLiteral("ratescope:");
    QString separator = QStringLiteral(":");
    bool readOnly = false;
    PasswordStorage passwordStorage = PasswordStorage::None;

    // What is wrong with it, one sentence per problem; empty when it can be used.
    QStringList problems() const;
    bool usesSeeds() const { return transport == Transport::Cluster || transport == Transport::Sentinel; }
    // The core's options for it, with the passwords given (not stored here).
    ConnectionOptions toOptions(const QString &password = {}, const QString &sentinelPassword = {}) const;
    // A profile for a URL given on the command line; the URL's password is not kept.
    // "127.0.0.1:7000, 127.0.0.1:7001" typed into the form: one entry per host.
    static QStringList splitSeeds(const QString &text);
    static ConnectionProfile fromOptions(const ConnectionOptions &options, const QString &name);
    // "127.0.0.1:6379", "unix:/run/redis.sock", "cluster via 127.0.0.1:7000": for the picker
    // and the status bar.
    QString endpoint() const;

    bool operator==(const ConnectionProfile &) const = default;
};

} // namespace ratescope::ui
