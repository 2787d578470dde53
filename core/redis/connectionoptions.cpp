#include "redis/connectionoptions.h"

#include "base/duration.h"
#include "base/errors.h"
#include "base/inputcheck.h"
#include "base/keytext.h"

#include <QHash>
#include <QStringDecoder>

#include <QUrl>
#include <QUrlQuery>

// QUrl cannot hold the comma-separated host lists of sentinel and cluster URLs, so the
// authority is split here; QUrl still does the percent-decoding.

namespace ratescope {

namespace {

constexpr int kMaxDb = 1 << 20;

UsageError urlError(const QString &what)
{
    return UsageError(QStringLiteral("invalid connection URL: %1").arg(what));
}

bool isHexDigit(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Percent-decoding that refuses what QUrl would silently turn into U+FFFD: a '%' without
// two hex digits, or bytes that are not UTF-8. `what` names the part, never its value (it
// may be a password).
QString decode(const QString &s, const QString &what, bool inUrl = true)
{
    auto error = [&](const QString &why) { return inUrl ? urlError(why) : UsageError(why); };
    const QByteArray raw = s.toUtf8();
    for (qsizetype i = 0; i < raw.size(); ++i)
        if (raw[i] == '%' && (i + 2 >= raw.size() || !isHexDigit(raw[i + 1]) || !isHexDigit(raw[i + 2])))
            throw error(QStringLiteral("bad percent-encoding in the %1 ('%' must be followed by two hex digits)").arg(what));
    const QByteArray bytes = QByteArray::fromPercentEncoding(raw);
    QStringDecoder utf8(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    const QString text = utf8(bytes);
    if (utf8.hasError())
        throw error(QStringLiteral("the %1 is not UTF-8 once percent-decoded").arg(what));
    return text;
}

bool allDigits(const QString &text, int maxDigits)
{
    if (text.isEmpty() || text.size() > maxDigits)
        return false;
    for (const QChar c : text)
        if (c < QLatin1Char('0') || c > QLatin1Char('9'))
            return false;
    return true;
}

HostPort parseHostPortText(const QString &text, quint16 defaultPort)
{
    HostPort hp;
    hp.port = defaultPort;
    QString portText;
    if (text.startsWith(QLatin1Char('['))) {
        const int close = text.indexOf(QLatin1Char(']'));
        if (close < 0)
            throw UsageError(QStringLiteral("unterminated IPv6 address '%1'").arg(text));
        hp.host = text.mid(1, close - 1);
        const QString rest = text.mid(close + 1);
        if (!rest.isEmpty()) {
            if (!rest.startsWith(QLatin1Char(':')))
                throw UsageError(QStringLiteral("unexpected '%1' after IPv6 address").arg(rest));
            portText = rest.mid(1);
        }
    } else {
        if (text.count(QLatin1Char(':')) > 1)
            throw UsageError(QStringLiteral("IPv6 address '%1' must be written in brackets, e.g. [::1]:6379").arg(text));
        const int colon = text.indexOf(QLatin1Char(':'));
        hp.host = colon < 0 ? text : text.left(colon);
        if (colon >= 0)
            portText = text.mid(colon + 1);
    }
    hp.host = decode(hp.host, QStringLiteral("host"), false);
    if (hp.host.isEmpty())
        throw UsageError(QStringLiteral("missing host"));
    if (const QString bad = unsafeCharacterProblem(hp.host); !bad.isEmpty())
        throw UsageError(QStringLiteral("the host %1").arg(bad));
    if (hp.host.contains(QLatin1Char(' ')))
        throw UsageError(QStringLiteral("the host contains a space"));
    if (portText.isNull())
        return hp;
    bool ok = allDigits(portText, 5); // digits only: not "+7601", " 7601"
    const uint port = ok ? portText.toUInt(&ok) : 0;
    if (!ok || port == 0 || port > 65535)
        throw UsageError(QStringLiteral("bad port '%1' (1-65535)").arg(portText));
    hp.port = quint16(port);
    return hp;
}

// A host and port as a URL writes them: the host percent-encoded, so that fromUrl() decodes back
// exactly this host ("%40" stays part of it, where a bare '@' would end a user name; ',' '/' '?'
// '#' likewise), an IPv6 address in brackets with its colons as they are. toUrl() encodes the
// master name and the socket path the same way (a '?' in them would start the query, spaces
// at the ends would be trimmed).
QString urlHostPort(const HostPort &hp)
{
    const bool ipv6 = hp.host.contains(QLatin1Char(':'));
    const QString host = QString::fromUtf8(QUrl::toPercentEncoding(hp.host, ipv6 ? QByteArrayLiteral(":") : QByteArray()));
    return (ipv6 ? QLatin1Char('[') + host + QLatin1Char(']') : host) + QLatin1Char(':') + QString::number(hp.port);
}

HostPort parseHostPort(const QString &text, quint16 defaultPort)
{
    try {
        return parseHostPortText(text, defaultPort);
    } catch (const UsageError &e) {
        throw urlError(e.message());
    }
}

int parseDb(const QString &text)
{
    bool ok = allDigits(text, 7); // digits only: not " 0", "+1"
    const int db = ok ? text.toInt(&ok) : -1;
    if (!ok || db < 0 || db > kMaxDb)
        throw urlError(QStringLiteral("bad database number '%1'").arg(text));
    return db;
}

int parseTimeoutMs(const QString &name, const QString &value)
{
    qint64 us = 0;
    try {
        us = parseDurationUs(value);
    } catch (const UsageError &e) { // the duration's own message, under the URL's prefix once
        throw urlError(QStringLiteral("%1: %2").arg(name, e.message()));
    }
    if (us <= 0 || us > 3600LL * 1000000)
        throw urlError(QStringLiteral("%1 must be between 1ms and 1h").arg(name));
    return int((us + 999) / 1000);
}

// Splits "user:pass@rest" into its parts; the password is percent-decoded.
QString takeUserInfo(const QString &authority, ConnectionOptions &o)
{
    const int at = authority.lastIndexOf(QLatin1Char('@'));
    if (at < 0)
        return authority;
    const QString info = authority.left(at);
    const int colon = info.indexOf(QLatin1Char(':'));
    o.user = decode(colon < 0 ? info : info.left(colon), QStringLiteral("user name"));
    if (colon >= 0)
        o.password = decode(info.mid(colon + 1), QStringLiteral("password"));
    return authority.mid(at + 1);
}

void applyQuery(const QString &query, ConnectionOptions &o)
{
    const QUrlQuery q(query);
    QHash<QString, QString> seen; // a parameter by its name in lower case: as it was written
    for (const auto &[rawKey, rawValue] : q.queryItems(QUrl::FullyDecoded)) {
        const QString key = rawKey.toLower();
        // Names are case-insensitive, so TIMEOUT and timeout are one parameter: given twice is
        // refused, as a repeated option is, never last-wins.
        if (const auto before = seen.constFind(key); before != seen.cend())
            throw urlError(before.value() == rawKey
                               ? QStringLiteral("'%1' is given twice").arg(escapeControls(rawKey))
                               : QStringLiteral("'%1' is given twice (as '%2' and '%3')")
                                     .arg(escapeControls(key), escapeControls(before.value()), escapeControls(rawKey)));
        seen.insert(key, rawKey);
        const QString &value = rawValue;
        const bool tlsKey = key == QLatin1String("cacert") || key == QLatin1String("cert") || key == QLatin1String("key") ||
                            key == QLatin1String("sni") || key == QLatin1String("insecure");
        if (tlsKey && o.transport != ConnectionOptions::Transport::Tls)
            throw urlError(QStringLiteral("'%1' is only valid with rediss://").arg(key));
        if (key == QLatin1String("cacert"))
            o.tls.caFile = value;
        else if (key == QLatin1String("cert"))
            o.tls.certFile = value;
        else if (key == QLatin1String("key"))
            o.tls.keyFile = value;
        else if (key == QLatin1String("sni"))
            o.tls.sni = value;
        else if (key == QLatin1String("insecure"))
            o.tls.insecure = value == QLatin1String("1") || value == QLatin1String("true") || value == QLatin1String("yes");
        else if (key == QLatin1String("db") && o.transport == ConnectionOptions::Transport::Unix)
            o.db = parseDb(value);
        else if (key == QLatin1String("timeout"))
            o.commandTimeoutMs = parseTimeoutMs(key, value);
        else if (key == QLatin1String("connect_timeout"))
            o.connectTimeoutMs = parseTimeoutMs(key, value);
        else if (key == QLatin1String("sentinel_user") && o.transport == ConnectionOptions::Transport::Sentinel)
            o.sentinelUser = value;
        else if (key == QLatin1String("sentinel_password") && o.transport == ConnectionOptions::Transport::Sentinel)
            o.sentinelPassword = value;
        else if (key == QLatin1String("name"))
            o.clientName = value;
        else
            throw urlError(QStringLiteral("unknown option '%1'").arg(rawKey));
    }
    if (o.tls.certFile.isEmpty() != o.tls.keyFile.isEmpty())
        throw urlError(QStringLiteral("cert and key must be given together"));
}

} // namespace

ConnectionOptions ConnectionOptions::fromUrl(const QString &input)
{
    ConnectionOptions o;
    const QString url = input.trimmed();
    const int sep = url.indexOf(QStringLiteral("://"));
    if (sep <= 0)
        throw urlError(QStringLiteral("'%1' has no scheme (expected redis://, rediss://, unix://, "
                                      "redis-sentinel:// or redis-cluster://)")
                           .arg(sep < 0 ? QStringLiteral("...") : url));
    const QString scheme = url.left(sep).toLower();
    QString rest = url.mid(sep + 3);

    QString query;
    if (const int qm = rest.indexOf(QLatin1Char('?')); qm >= 0) {
        query = rest.mid(qm + 1);
        rest.truncate(qm);
    }
    if (rest.contains(QLatin1Char('#')))
        throw urlError(QStringLiteral("fragments ('#') are not allowed"));

    if (scheme == QLatin1String("unix")) {
        o.transport = Transport::Unix;
        if (!rest.startsWith(QLatin1Char('/')))
            rest = takeUserInfo(rest, o); // unix://:secret@/path/redis.sock
        o.socketPath = decode(rest, QStringLiteral("socket path"));
        if (const QString bad = unsafeCharacterProblem(o.socketPath); !bad.isEmpty())
            throw urlError(QStringLiteral("the socket path %1").arg(bad));
        if (!o.socketPath.startsWith(QLatin1Char('/')))
            throw urlError(QStringLiteral("unix socket path must be absolute (unix:///path/to/redis.sock)"));
        applyQuery(query, o);
        return o;
    }

    if (scheme == QLatin1String("redis"))
        o.transport = Transport::Tcp;
    else if (scheme == QLatin1String("rediss"))
        o.transport = Transport::Tls;
    else if (scheme == QLatin1String("redis-sentinel"))
        o.transport = Transport::Sentinel;
    else if (scheme == QLatin1String("redis-cluster"))
        o.transport = Transport::Cluster;
    else
        throw urlError(QStringLiteral("unknown scheme '%1://' (expected redis://, rediss://, unix://, "
                                      "redis-sentinel:// or redis-cluster://)")
                           .arg(scheme));

    const int slash = rest.indexOf(QLatin1Char('/'));
    QString authority = slash < 0 ? rest : rest.left(slash);
    const QStringList path = slash < 0 ? QStringList() : rest.mid(slash + 1).split(QLatin1Char('/'));
    authority = takeUserInfo(authority, o);

    if (o.transport == Transport::Tcp || o.transport == Transport::Tls) {
        if (authority.contains(QLatin1Char(',')))
            throw urlError(QStringLiteral("several hosts need redis-sentinel:// or redis-cluster://"));
        if (!authority.isEmpty())
            o.address = parseHostPort(authority, 6379);
        if (path.size() > 1 || (path.size() == 1 && path[0].contains(QLatin1Char('/'))))
            throw urlError(QStringLiteral("path must be just a database number"));
        if (!path.isEmpty() && !path[0].isEmpty())
            o.db = parseDb(path[0]);
    } else {
        const quint16 defaultPort = o.transport == Transport::Sentinel ? 26379 : 6379;
        if (authority.isEmpty())
            throw urlError(QStringLiteral("at least one host:port is required"));
        for (const QString &h : authority.split(QLatin1Char(',')))
            o.seeds << parseHostPort(h, defaultPort);
        if (o.transport == Transport::Sentinel) {
            if (path.isEmpty() || path[0].isEmpty())
                throw urlError(QStringLiteral("the master name is missing (redis-sentinel://host:26379/mymaster)"));
            o.masterName = decode(path[0], QStringLiteral("master name"));
            if (path.size() > 2)
                throw urlError(QStringLiteral("path must be /MASTERNAME[/db]"));
            if (path.size() == 2 && !path[1].isEmpty())
                o.db = parseDb(path[1]);
        } else if (!path.isEmpty() && !(path.size() == 1 && path[0].isEmpty())) {
            throw urlError(QStringLiteral("cluster URLs take no path (Redis Cluster has only database 0)"));
        }
        o.address = o.seeds.first();
    }
    applyQuery(query, o);
    return o;
}

QString ConnectionOptions::toUrl(bool revealPassword) const
{
    QString userInfo;
    if (!user.isEmpty() || !password.isEmpty()) {
        userInfo = QString::fromUtf8(QUrl::toPercentEncoding(user));
        if (!password.isEmpty())
            userInfo += QLatin1Char(':') + (revealPassword ? QString::fromUtf8(QUrl::toPercentEncoding(password)) : QStringLiteral("***"));
        userInfo += QLatin1Char('@');
    }
    QUrlQuery q;
    // Encoded here: QUrlQuery takes a '%' followed by two hex digits as encoded already, so a
    // file named "a%25b" would read back as "a%b".
    const auto encoded = [](const QString &value) { return QString::fromUtf8(QUrl::toPercentEncoding(value)); };
    if (!tls.caFile.isEmpty())
        q.addQueryItem(QStringLiteral("cacert"), encoded(tls.caFile));
    if (!tls.certFile.isEmpty())
        q.addQueryItem(QStringLiteral("cert"), encoded(tls.certFile));
    if (!tls.keyFile.isEmpty())
        q.addQueryItem(QStringLiteral("key"), encoded(tls.keyFile));
    if (!tls.sni.isEmpty())
        q.addQueryItem(QStringLiteral("sni"), encoded(tls.sni));
    if (tls.insecure)
        q.addQueryItem(QStringLiteral("insecure"), QStringLiteral("1"));
    if (!sentinelUser.isEmpty())
        q.addQueryItem(QStringLiteral("sentinel_user"), encoded(sentinelUser));
    if (!sentinelPassword.isEmpty())
        q.addQueryItem(QStringLiteral("sentinel_password"), revealPassword ? encoded(sentinelPassword) : QStringLiteral("***"));
    QString url;
    switch (transport) {
    case Transport::Tcp:
    case Transport::Tls:
        url = (transport == Transport::Tls ? QStringLiteral("rediss://") : QStringLiteral("redis://")) + userInfo + urlHostPort(address) +
              QLatin1Char('/') + QString::number(db);
        break;
    case Transport::Unix:
        url = QStringLiteral("unix://") + userInfo + QString::fromUtf8(QUrl::toPercentEncoding(socketPath, "/"));
        if (db != 0)
            q.addQueryItem(QStringLiteral("db"), QString::number(db));
        break;
    case Transport::Sentinel:
    case Transport::Cluster: {
        QStringList hosts;
        for (const HostPort &hp : seeds)
            hosts << urlHostPort(hp);
        url = (transport == Transport::Sentinel ? QStringLiteral("redis-sentinel://") : QStringLiteral("redis-cluster://")) + userInfo +
              hosts.join(QLatin1Char(','));
        if (transport == Transport::Sentinel)
            url += QLatin1Char('/') + QString::fromUtf8(QUrl::toPercentEncoding(masterName)) +
                   (db ? QLatin1Char('/') + QString::number(db) : QString());
        break;
    }
    }
    if (!q.isEmpty())
        url += QLatin1Char('?') + q.toString(QUrl::FullyEncoded);
    return url;
}

HostPort HostPort::parse(const QString &text, quint16 defaultPort)
{
    return parseHostPortText(text.trimmed(), defaultPort);
}

QString HostPort::toString() const
{
    // parse() percent-decodes the host and reads '[' ']' as an IPv6 address's brackets; the
    // console's seed list refuses '@' '/' (a pasted URL). Those characters are written encoded,
    // so that the text parses back to this host (an IPv6 zone: "[fe80::1%25eth0]:7000").
    QString encoded;
    for (const QChar c : host)
        encoded += QStringView(u"%[]@/,").contains(c) ? QLatin1Char('%') + QString::number(c.unicode(), 16).toUpper() : QString(c);
    const QString h = host.contains(QLatin1Char(':')) ? QLatin1Char('[') + encoded + QLatin1Char(']') : encoded;
    return h + QLatin1Char(':') + QString::number(port);
}

ConnectionOptions ConnectionOptions::forSentinel(const HostPort &sentinel) const
{
    ConnectionOptions o;
    o.address = sentinel;
    o.user = sentinelUser;
    o.password = sentinelPassword;
    o.connectTimeoutMs = connectTimeoutMs;
    o.commandTimeoutMs = commandTimeoutMs;
    o.clientName = clientName;
    o.abort = abort;
    return o;
}

QString ConnectionOptions::endpoint() const
{
    switch (transport) {
    case Transport::Unix:
        return QStringLiteral("unix:") + socketPath;
    case Transport::Sentinel:
        return QStringLiteral("sentinel %1 via %2").arg(masterName, address.toString());
    case Transport::Cluster:
        return QStringLiteral("cluster via %1").arg(address.toString());
    default:
        break;
    }
    return address.toString();
}

} // namespace ratescope
