// Draws "used / limit" over a bar that fills with the window: green while there is room,
// amber past 80 %, red when full, so hot keys stand out while scrolling.
#pragma once

#include <QStyledItemDelegate>

namespace ratescope::ui {

class UsageBarDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    // fractionRole: the model role holding used / limit as a double in 0..1.
    explicit UsageBarDelegate(int fractionRole, QObject *parent = nullptr);
    void paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const override;

private:
    int m_fractionRole;
};

} // namespace ratescope::ui
