// Draws "used / limit" over a bar that fills with the window: green while there is room,
// amber past 80 %, red when full, so hot keys stand out while scrolling.
#pragma once

#include <QStyledItemDelegate>

namespace ratescope::ui {

class UsageBarDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    // fractionRole: the model role holding used / limit as a double (1 and above: full).
    // A neutral bar (a share of traffic, not a quota) is drawn in one calm colour.
    explicit UsageBarDelegate(int fractionRole, QObject *parent = nullptr, bool neutral = false);
    void paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const override;

private:
    int m_fractionRole;
    bool m_neutral;
};

} // namespace ratescope::ui
