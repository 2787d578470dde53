#include "refusal.h"

#include <QRegularExpression>
#include <QSet>

namespace ratescope::ui {

QString explainRefusal(const QString &serverText, const QString &user, const QString &keys)
{
    if (!serverText.startsWith(QLatin1String("NOPERM")))
        return serverText;
    static const QRegularExpression command(QStringLiteral("NOPERM (?:User (\\S+)|this user) has no permissions to run the '([^']+)' command"),
                                            QRegularExpression::CaseInsensitiveOption);
    const QRegularExpressionMatch m = command.match(serverText);
    const QString named = m.hasMatch() ? m.captured(1) : QString();
    const QString who = !named.isEmpty() ? named : user.isEmpty() ? QStringLiteral("default") : user;
    if (m.hasMatch()) {
        const QString name = m.captured(2).toLower();
        // What Ratescope's changes run: a profile with write access has them.
        static const QSet<QString> writes = {QStringLiteral("unlink"), QStringLiteral("del"),     QStringLiteral("xadd"),
                                             QStringLiteral("set"),    QStringLiteral("eval"),    QStringLiteral("evalsha"),
                                             QStringLiteral("fcall"),  QStringLiteral("function|load"), QStringLiteral("publish")};
        return QStringLiteral("user '%1' may not run %2; ask for +%3 or %4")
            .arg(who, name.toUpper().replace(QLatin1Char('|'), QLatin1Char(' ')), name,
                 writes.contains(name) ? QStringLiteral("use a profile with write access")
                                       : QStringLiteral("connect with a profile whose user may"));
    }
    if (serverText.contains(QLatin1String("channel"), Qt::CaseInsensitive))
        return QStringLiteral("user '%1' may not publish change events; ask for access to the events channel or use a profile with "
                              "write access")
            .arg(who);
    if (serverText.contains(QLatin1String("key")))
        return QStringLiteral("user '%1' may not write %2 (its ACL key patterns leave them out); ask for access to them or use a "
                              "profile with write access")
            .arg(who, keys);
    return QStringLiteral("user '%1' is not allowed this (%2); ask for the permission or use a profile with write access")
        .arg(who, serverText);
}

} // namespace ratescope::ui
