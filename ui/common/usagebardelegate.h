// Draws "used / limit" over a bar that fills with the window: green while there is room,
// amber past 80 %, red when full, so hot keys stand out while scrolling. Where the figures do
// not fit the cell, their short form ("1.0M / 1.0M", ShortTextRole) is drawn instead of an
// elided one; the exact figures stay in the row's tooltip. Figures that are not live (StaleRole) get a
// grey bar.
#pragma once

#include <QStyledItemDelegate>

namespace ratescope::ui {

class UsageBarDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    // The role a model answers with the cell's text in short form (formatCountShort).
    static constexpr int ShortTextRole = Qt::UserRole + 64;
    // True where the figures are not live (as read before a lost connection): a grey bar.
    static constexpr int StaleRole = Qt::UserRole + 65;

    // fractionRole: the model role holding used / limit as a double (1 and above: full).
    // A neutral bar (a share of traffic, not a quota) is drawn in one calm colour.
    explicit UsageBarDelegate(int fractionRole, QObject *parent = nullptr, bool neutral = false);
    void paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const override;

    // The text drawn in a cell of option.rect's width: the display text when it fits, else
    // the short form when the model has one (which may be elided still, in a very narrow cell).
    QString shownText(const QStyleOptionViewItem &option, const QModelIndex &index) const;
    // Whether the display text fits a cell of this width (drawn as it is, not elided).
    static bool fits(const QStyleOptionViewItem &option, const QString &text);

private:
    int m_fractionRole;
    bool m_neutral;
};

} // namespace ratescope::ui
