#include "keyactions.h"

#include "displayformat.h"
#include "redisclient.h"

#include <QMenu>

#include <algorithm>

namespace ratescope::ui {

namespace {

bool isSegmentSeparator(char c)
{
    return QByteArrayView(": /{}|.,;=@-_").contains(c);
}

bool allDigits(QByteArrayView s)
{
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

} // namespace

QByteArray lookupIdAt(const QByteArray &key, qsizetype pos)
{
    if (pos >= 0 && pos < key.size() && !isSegmentSeparator(key[pos])) {
        qsizetype from = pos, to = pos + 1;
        while (from > 0 && !isSegmentSeparator(key[from - 1]))
            --from;
        while (to < key.size() && !isSegmentSeparator(key[to]))
            ++to;
        const QByteArray segment = key.mid(from, to - from);
        if (!allDigits(segment))
            return segment;
    }
    qsizetype to = key.size();
    while (to > 0) {
        while (to > 0 && isSegmentSeparator(key[to - 1]))
            --to;
        qsizetype from = to;
        while (from > 0 && !isSegmentSeparator(key[from - 1]))
            --from;
        const QByteArray segment = key.mid(from, to - from);
        if (!segment.isEmpty() && !allDigits(segment))
            return segment;
        to = from;
    }
    return {};
}

QString whyReadOnly(const RedisClient *client)
{
    if (!client)
        return QStringLiteral("Not connected to a server");
    if (client->isReadOnlyForSession())
        return QStringLiteral("Read-only: changes are refused for this whole session (--read-only)");
    if (client->isReadOnly())
        return QStringLiteral("Read-only: changes are locked for this connection (the toolbar's lock, or the "
                              "profile's read-only setting)");
    return {};
}

void addKeyActions(QMenu *menu, const RedisClient *client, const QList<QByteArray> &keys,
                   const std::function<void(KeyAction, const QList<QByteArray> &)> &trigger)
{
    if (keys.isEmpty())
        return;
    menu->setToolTipsVisible(true);
    const QString locked = whyReadOnly(client);
    const bool one = keys.size() == 1;
    auto add = [&](const QString &text, KeyAction action, bool mutates, bool needsOne, const QString &tip) {
        QAction *a = menu->addAction(text, menu, [trigger, action, keys] { trigger(action, keys); });
        const bool connected = client != nullptr;
        if (needsOne && !one) {
            a->setEnabled(false);
            a->setToolTip(QStringLiteral("One key at a time"));
        } else if (!connected || (mutates && !locked.isEmpty())) {
            a->setEnabled(false);
            a->setToolTip(locked);
        } else {
            a->setToolTip(tip);
        }
    };
    // Opening an editor changes nothing by itself: the editor refuses to save when locked.
    add(QStringLiteral("Burst…"), KeyAction::Burst, true, true,
        QStringLiteral("Fire a test burst at this key (it consumes the key's real quota)"));
    add(QStringLiteral("Change this key's limit…"), KeyAction::ChangeLimit, false, true,
        QStringLiteral("A temporary override for this key, prefilled with the limits in force"));
    add(QStringLiteral("Edit its policy…"), KeyAction::EditPolicy, false, true,
        QStringLiteral("The policy that gives this key its limits"));
    add(QStringLiteral("What if…"), KeyAction::WhatIf, false, true,
        QStringLiteral("Replay this key's recent requests (its log) against other limits in a private sandbox; nothing "
                       "is written to the server"));
    menu->addSeparator();
    add(one ? QStringLiteral("Reset…") : QStringLiteral("Reset %1 keys…").arg(formatCount(keys.size())), KeyAction::Reset, true, false,
        QStringLiteral("Delete the limiter state (a preview comes first)"));
}

} // namespace ratescope::ui
