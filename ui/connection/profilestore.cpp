#include "profilestore.h"

#include <QSettings>
#include <QUrl>

#include <algorithm>

namespace ratescope::ui {

namespace {

// Profile names are free text; settings keys must not contain '/' or '\'.
QString groupFor(const QString &name)
{
    return QStringLiteral("profiles/") + QString::fromLatin1(QUrl::toPercentEncoding(name));
}

// The operator name given for a profile: beside the profiles, so that saving one keeps it.
QString operatorKey(const QString &name)
{
    return QStringLiteral("operators/") + QString::fromLatin1(QUrl::toPercentEncoding(name));
}

QString transportName(ConnectionProfile::Transport t)
{
    switch (t) {
    case ConnectionProfile::Transport::Tls:
        return QStringLiteral("tls");
    case ConnectionProfile::Transport::Unix:
        return QStringLiteral("unix");
    case ConnectionProfile::Transport::Cluster:
        return QStringLiteral("cluster");
    case ConnectionProfile::Transport::Sentinel:
        return QStringLiteral("sentinel");
    case ConnectionProfile::Transport::Tcp:
        break;
    }
    return QStringLiteral("tcp");
}

ConnectionProfile::Transport parseTransport(const QString &s)
{
    if (s == QLatin1String("tls"))
        return ConnectionProfile::Transport::Tls;
    if (s == QLatin1String("unix"))
        return ConnectionProfile::Transport::Unix;
    if (s == QLatin1String("cluster"))
        return ConnectionProfile::Transport::Cluster;
    if (s == QLatin1String("sentinel"))
        return ConnectionProfile::Transport::Sentinel;
    return ConnectionProfile::Transport::Tcp;
}

QString storageName(ConnectionProfile::PasswordStorage s)
{
    switch (s) {
    case ConnectionProfile::PasswordStorage::Keychain:
        return QStringLiteral("keychain");
    case ConnectionProfile::PasswordStorage::Ask:
        return QStringLiteral("ask");
    case ConnectionProfile::PasswordStorage::None:
        break;
    }
    return QStringLiteral("none");
}

ConnectionProfile::PasswordStorage parseStorage(const QString &s)
{
    if (s == QLatin1String("keychain"))
        return ConnectionProfile::PasswordStorage::Keychain;
    if (s == QLatin1String("ask"))
        return ConnectionProfile::PasswordStorage::Ask;
    return ConnectionProfile::PasswordStorage::None;
}

} // namespace

ProfileStore::ProfileStore(QSettings *settings)
    : m_settings(settings)
{
    if (!m_settings) {
        m_own = std::make_unique<QSettings>();
        m_settings = m_own.get();
    }
}

ProfileStore::~ProfileStore() = default;

QSettings &ProfileStore::settings() const
{
    return *m_settings;
}

QList<ConnectionProfile> ProfileStore::list() const
{
    QList<ConnectionProfile> profiles;
    QSettings &s = settings();
    s.beginGroup(QStringLiteral("profiles"));
    const QStringList groups = s.childGroups();
    s.endGroup();
    for (const QString &g : groups)
        if (auto p = find(QUrl::fromPercentEncoding(g.toLatin1())))
            profiles << *p;
    std::sort(profiles.begin(), profiles.end(), [](const auto &a, const auto &b) { return a.name.localeAwareCompare(b.name) < 0; });
    return profiles;
}

std::optional<ConnectionProfile> ProfileStore::find(const QString &name) const
{
    QSettings &s = settings();
    s.beginGroup(groupFor(name));
    if (!s.contains(QStringLiteral("transport"))) {
        s.endGroup();
        return std::nullopt;
    }
    ConnectionProfile p;
    p.name = name;
    p.transport = parseTransport(s.value(QStringLiteral("transport")).toString());
    p.host = s.value(QStringLiteral("host"), p.host).toString();
    p.port = s.value(QStringLiteral("port"), p.port).toInt();
    p.socketPath = s.value(QStringLiteral("socket")).toString();
    p.seeds = s.value(QStringLiteral("seeds")).toStringList();
    p.masterName = s.value(QStringLiteral("sentinel/master")).toString();
    p.sentinelUser = s.value(QStringLiteral("sentinel/user")).toString();
    p.sentinelPasswordStorage = parseStorage(s.value(QStringLiteral("sentinel/password")).toString());
    p.caFile = s.value(QStringLiteral("tls/ca")).toString();
    p.certFile = s.value(QStringLiteral("tls/cert")).toString();
    p.keyFile = s.value(QStringLiteral("tls/key")).toString();
    p.serverName = s.value(QStringLiteral("tls/server_name")).toString();
    p.verifyPeer = s.value(QStringLiteral("tls/verify"), true).toBool();
    p.user = s.value(QStringLiteral("user")).toString();
    p.db = s.value(QStringLiteral("db"), 0).toInt();
    p.ns = s.value(QStringLiteral("namespace"), p.ns).toString();
    p.separator = s.value(QStringLiteral("separator"), p.separator).toString();
    p.readOnly = s.value(QStringLiteral("read_only"), false).toBool();
    p.passwordStorage = parseStorage(s.value(QStringLiteral("password")).toString());
    s.endGroup();
    return p;
}

void ProfileStore::save(const ConnectionProfile &p, const QString &previousName)
{
    QSettings &s = settings();
    if (!previousName.isEmpty() && previousName != p.name) {
        s.remove(groupFor(previousName));
        if (s.contains(operatorKey(previousName))) { // the operator goes with the profile
            s.setValue(operatorKey(p.name), s.value(operatorKey(previousName)));
            s.remove(operatorKey(previousName));
        }
    }
    s.remove(groupFor(p.name));
    s.beginGroup(groupFor(p.name));
    s.setValue(QStringLiteral("transport"), transportName(p.transport));
    s.setValue(QStringLiteral("host"), p.host);
    s.setValue(QStringLiteral("port"), p.port);
    s.setValue(QStringLiteral("socket"), p.socketPath);
    s.setValue(QStringLiteral("seeds"), p.seeds);
    s.setValue(QStringLiteral("sentinel/master"), p.masterName);
    s.setValue(QStringLiteral("sentinel/user"), p.sentinelUser);
    s.setValue(QStringLiteral("sentinel/password"), storageName(p.sentinelPasswordStorage));
    s.setValue(QStringLiteral("tls/ca"), p.caFile);
    s.setValue(QStringLiteral("tls/cert"), p.certFile);
    s.setValue(QStringLiteral("tls/key"), p.keyFile);
    s.setValue(QStringLiteral("tls/server_name"), p.serverName);
    s.setValue(QStringLiteral("tls/verify"), p.verifyPeer);
    s.setValue(QStringLiteral("user"), p.user);
    s.setValue(QStringLiteral("db"), p.db);
    s.setValue(QStringLiteral("namespace"), p.ns);
    s.setValue(QStringLiteral("separator"), p.separator);
    s.setValue(QStringLiteral("read_only"), p.readOnly);
    // Where the password is, never the password itself.
    s.setValue(QStringLiteral("password"), storageName(p.passwordStorage));
    s.endGroup();
    s.sync();
}

void ProfileStore::remove(const QString &name)
{
    settings().remove(groupFor(name));
    settings().remove(operatorKey(name));
    settings().sync();
}

std::optional<QString> ProfileStore::operatorName(const QString &profile) const
{
    const QVariant v = settings().value(operatorKey(profile));
    return v.isValid() ? std::optional<QString>(v.toString()) : std::nullopt;
}

void ProfileStore::setOperatorName(const QString &profile, const QString &name)
{
    settings().setValue(operatorKey(profile), name);
    settings().sync();
}

QString ProfileStore::lastUsed() const
{
    return settings().value(QStringLiteral("last_profile")).toString();
}

void ProfileStore::setLastUsed(const QString &name)
{
    settings().setValue(QStringLiteral("last_profile"), name);
}

} // namespace ratescope::ui
