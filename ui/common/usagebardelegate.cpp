#include "usagebardelegate.h"

#include <QApplication>
#include <QPainter>

#include <algorithm>

namespace ratescope::ui {

UsageBarDelegate::UsageBarDelegate(int fractionRole, QObject *parent, bool neutral)
    : QStyledItemDelegate(parent)
    , m_fractionRole(fractionRole)
    , m_neutral(neutral)
{
}

bool UsageBarDelegate::fits(const QStyleOptionViewItem &option, const QString &text)
{
    // The room the style leaves the text (QCommonStyle: the focus frame's margin, plus one,
    // on each side).
    const QWidget *widget = option.widget;
    const QStyle *style = widget ? widget->style() : QApplication::style();
    const int margin = style->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, widget) + 1;
    return option.fontMetrics.horizontalAdvance(text) <= option.rect.width() - 2 * margin;
}

QString UsageBarDelegate::shownText(const QStyleOptionViewItem &option, const QModelIndex &index) const
{
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    if (fits(opt, opt.text))
        return opt.text;
    const QString brief = index.data(ShortTextRole).toString();
    return brief.isEmpty() ? opt.text : brief;
}

void UsageBarDelegate::paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const
{
    const QVariant fraction = index.data(m_fractionRole);
    if (fraction.isValid()) {
        const double f = std::clamp(fraction.toDouble(), 0.0, 1.0);
        QColor color = index.data(StaleRole).toBool() ? option.palette.color(QPalette::Disabled, QPalette::Text)
                       : m_neutral                    ? QColor(0x3d, 0x7e, 0xc9)
                       : f >= 1.0                     ? QColor(0xe0, 0x4f, 0x3f)
                       : f >= 0.8                     ? QColor(0xf0, 0xa2, 0x30)
                                                      : QColor(0x3f, 0xa3, 0x5b);
        const QRect cell = option.rect.adjusted(3, 3, -3, -3);
        painter->save();
        painter->setRenderHint(QPainter::Antialiasing);
        color.setAlpha(40);
        painter->setPen(Qt::NoPen);
        painter->setBrush(color);
        painter->drawRoundedRect(cell, 3, 3);
        color.setAlpha(110);
        painter->setBrush(color);
        painter->drawRoundedRect(QRect(cell.topLeft(), QSize(int(cell.width() * f), cell.height())), 3, 3);
        painter->restore();
    }
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    opt.text = shownText(option, index);
    const QWidget *widget = opt.widget;
    QStyle *style = widget ? widget->style() : QApplication::style();
    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);
}

} // namespace ratescope::ui
