#include "connectionprofile.h"

#include "base/errors.h"

#include <QFileInfo>
#include <QRegularExpression>

namespace ratescope::ui {

namespace {

quint16 defaultSeedPort(ConnectionProfile::Transport t)
{
    return t == ConnectionProfile::Transport::Sentinel ? 26379 : 6379;
}

} // namespace

QStringList ConnectionProfile::splitSeeds(const QString &text)
{
    return text.split(QRegularExpression(QStringLiteral("[,;\\s]+")), Qt::SkipEmptyParts);
}

QStringList ConnectionProfile::problems() const
{
    QStringList p;
    if (name.trimmed().isEmpty())
        p << QStringLiteral("Give the profile a name.");
    if (transport == Transport::Unix) {
        if (socketPath.trimmed().isEmpty())
            p << QStringLiteral("Enter the path of the server's unix socket.");
    } else if (usesSeeds()) {
        const bool cluster = transport == Transport::Cluster;
        if (seeds.isEmpty())
            p << (cluster ? QStringLiteral("Enter at least one node of the cluster (host:port).")
                          : QStringLiteral("Enter at least one sentinel (host:port, usually port 26379)."));
        for (const QString &seed : seeds) {
            // A pasted URL may hold a password: say what is wrong without repeating it.
            if (seed.contains(QLatin1Char('@')) || seed.contains(QLatin1Char('/'))) {
                p << QStringLiteral("Nodes are host:port only, without a scheme, user or password "
                                    "(those have fields of their own).");
                continue;
            }
            try {
                HostPort::parse(seed, defaultSeedPort(transport));
            } catch (const UsageError &e) {
                p << QStringLiteral("'%1': %2.").arg(seed, e.message());
            }
        }
        if (cluster && db != 0)
            p << QStringLiteral("Redis Cluster has only database 0.");
        if (!cluster && masterName.trimmed().isEmpty())
            p << QStringLiteral("Enter the master name the sentinels monitor (e.g. mymaster).");
        else if (!cluster && masterName.contains(QLatin1Char('/')))
            p << QStringLiteral("A master name cannot contain '/'.");
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
             {std::pair{caFile, "CA file"}, std::pair{certFile, "Client certificate"}, std::pair{keyFile, "Private key"}})
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

ConnectionOptions ConnectionProfile::toOptions(const QString &password, const QString &sentinelPassword) const
{
    ConnectionOptions o;
    switch (transport) {
    case Transport::Cluster:
    case Transport::Sentinel:
        o.transport = transport == Transport::Cluster ? ConnectionOptions::Transport::Cluster : ConnectionOptions::Transport::Sentinel;
        for (const QString &seed : seeds) {
            try {
                o.seeds << HostPort::parse(seed, defaultSeedPort(transport));
            } catch (const UsageError &) {
                // problems() names it; the form cannot be saved with it
            }
        }
        if (!o.seeds.isEmpty())
            o.address = o.seeds.first();
        if (transport == Transport::Sentinel) {
            o.masterName = masterName.trimmed();
            o.sentinelUser = sentinelUser;
            o.sentinelPassword = sentinelPassword;
        }
        break;
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
    o.db = transport == Transport::Cluster ? 0 : db;
    o.clientName = QStringLiteral("ratescope-console");
    return o;
}

ConnectionProfile ConnectionProfile::fromOptions(const ConnectionOptions &options, const QString &name)
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
    case ConnectionOptions::Transport::Cluster:
    case ConnectionOptions::Transport::Sentinel:
        p.transport = options.transport == ConnectionOptions::Transport::Cluster ? Transport::Cluster : Transport::Sentinel;
        for (const HostPort &seed : options.seeds)
            p.seeds << seed.toString();
        p.masterName = options.masterName;
        p.sentinelUser = options.sentinelUser;
        p.sentinelPasswordStorage = options.sentinelPassword.isEmpty() ? PasswordStorage::None : PasswordStorage::Ask;
        break;
    case ConnectionOptions::Transport::Tcp:
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
    return toOptions().endpoint();
}

} // namespace ratescope::ui
