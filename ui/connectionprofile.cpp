#include "connectionprofile.h"

#include <QFileInfo>

namespace ratescope::ui {

QStringList ConnectionProfile::problems() const
{
    QStringList p;
    if (name.trimmed().isEmpty())
        p << QStringLiteral("Give the profile a name.");
    if (transport == Transport::Unix) {
        if (socketPath.trimmed().isEmpty())
            p << QStringLiteral("Enter the path of the server's unix socket.");
    } else {
        if (host.trimmed().isEmpty())
            p << QStringLiteral("Enter the server's host name or address.");
        else if (host.contains(QLatin1Char(' ')) || host.contains(QLatin1Char('/')))
            p << QStringLiteral("'%1' is not a host name or address.").arg(host);
        if (port < 1 || port > 65535)
            p << QStringLiteral("The port must be between 1 and 65535.");
    }
    if (transport == Transport::Tls) {
        if (!certFile.isEmpty() && keyFile.isEmpty())
            p << QStringLiteral("A client certificate needs its private key.");
        if (certFile.isEmpty() && !keyFile.isEmpty())
            p << QStringLiteral("A private key needs its client certificate.");
        for (const auto &[file, what] :
             {std::pair{caFile, "CA file"}, std::pair{certFile, "Client certificate"},
              std::pair{keyFile, "Private key"}})
            if (!file.isEmpty() && !QFileInfo(file).isReadable())
                p << QStringLiteral("%1 '%2' cannot be read.").arg(QLatin1String(what), file);
    }
    if (db < 0)
        p << QStringLiteral("The database number cannot be negative.");
    if (ns.isEmpty())
        p << QStringLiteral("The namespace cannot be empty (Ratescope's own keys live under it; "
                            "the default is ratescope:).");
    if (separator.isEmpty())
        p << QStringLiteral("The key separator cannot be empty (the default is ':').");
    return p;
}

ConnectionOptions ConnectionProfile::toOptions(const QString &password) const
{
    ConnectionOptions o;
    switch (transport) {
    case Transport::Unix:
        o.transport = ConnectionOptions::Transport::Unix;
        o.socketPath = socketPath;
        break;
    case Transport::Tls:
        o.transport = ConnectionOptions::Transport::Tls;
        o.tls.caFile = caFile;
        o.tls.certFile = certFile;
        o.tls.keyFile = keyFile;
        o.tls.sni = serverName;
        o.tls.insecure = !verifyPeer;
        [[fallthrough]];
    case Transport::Tcp:
        o.address = {host.trimmed(), quint16(port)};
        break;
    }
    o.user = user;
    o.password = password;
    o.db = db;
    o.clientName = QStringLiteral("ratescope-console");
    return o;
}

ConnectionProfile ConnectionProfile::fromOptions(const ConnectionOptions &options,
                                                 const QString &name)
{
    ConnectionProfile p;
    p.name = name;
    switch (options.transport) {
    case ConnectionOptions::Transport::Unix:
        p.transport = Transport::Unix;
        p.socketPath = options.socketPath;
        break;
    case ConnectionOptions::Transport::Tls:
        p.transport = Transport::Tls;
        p.caFile = options.tls.caFile;
        p.certFile = options.tls.certFile;
        p.keyFile = options.tls.keyFile;
        p.serverName = options.tls.sni;
        p.verifyPeer = !options.tls.insecure;
        break;
    default:
        p.transport = Transport::Tcp;
        break;
    }
    p.host = options.address.host;
    p.port = options.address.port;
    p.user = options.user;
    p.db = options.db;
    p.passwordStorage = options.password.isEmpty() ? PasswordStorage::None : PasswordStorage::Ask;
    return p;
}

QString ConnectionProfile::endpoint() const
{
    if (transport == Transport::Unix)
        return QStringLiteral("unix:%1").arg(socketPath);
    return QStringLiteral("%1:%2").arg(host).arg(port);
}

} // namespace ratescope::ui
