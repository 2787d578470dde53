// A saved way to reach a Redis: address, TLS, ACL user, database, Ratescope's namespace and
// key separator, read-only. Never the password: that lives in the system keychain.
#pragma once

#include "connectionoptions.h"

#include <QString>
#include <QStringList>

namespace ratescope::ui {

struct ConnectionProfile {
    enum class Transport { Tcp, Tls, Unix };
    // Where the password is: nowhere (none needed), the keychain, or (no keychain service
    // running) asked for each time the console starts.
    enum class PasswordStorage { None, Keychain, Ask };

    QString name;
    Transport transport = Transport::Tcp;
    QString host = QStringLiteral("127.0.0.1");
    int port = 6379;
    QString socketPath;
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
    // The core's options for it, with the password given (not stored here).
    ConnectionOptions toOptions(const QString &password = {}) const;
    // A profile for a URL given on the command line; the URL's password is not kept.
    static ConnectionProfile fromOptions(const ConnectionOptions &options, const QString &name);
    // "127.0.0.1:6379", "unix:/run/redis.sock": for the picker and the status bar.
    QString endpoint() const;

    bool operator==(const ConnectionProfile &) const = default;
};

} // namespace ratescope::ui
