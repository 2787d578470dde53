// The actions an operator takes on limiter keys, offered the same way wherever keys are shown
// (the keys panel's context menu, a key view): fire a burst, change the key's limit, edit its
// policy, reset. The ones that change the server are disabled under the read-only lock, with a
// tooltip that says why.
#pragma once

#include <QByteArray>
#include <QList>

#include <functional>

class QMenu;

namespace ratescope::ui {

class RedisClient;

enum class KeyAction {
    Burst,       // the Burst tab, prefilled with the key
    ChangeLimit, // an override prefilled with the limits in force
    EditPolicy,  // the policy that matches the key
    WhatIf,      // the What-if view on the key's log, its limits against proposed ones
    Reset,       // the reset dialog's preview of these keys
};

// Adds the actions for `keys` (one key, or a selection: only Reset takes more than one) to
// `menu`. `trigger` runs when one is chosen. client may be null (disconnected: all disabled).
void addKeyActions(QMenu *menu, const RedisClient *client, const QList<QByteArray> &keys,
                   const std::function<void(KeyAction, const QList<QByteArray> &)> &trigger);

// "Look up this customer": the segment of key around byte pos (segments split by
// `: / { } | . , ; = @ - _` and space, as a lookup matches them). When pos is unknown (-1,
// e.g. the keyboard's menu key) or on a separator or a number: the last segment that is not
// all digits ("acme" in "rl:{acme}:3"). Empty when the key has no such segment.
QByteArray lookupIdAt(const QByteArray &key, qsizetype pos = -1);

// Why changes are refused now, for tooltips; empty when they are allowed.
QString whyReadOnly(const RedisClient *client);

} // namespace ratescope::ui
