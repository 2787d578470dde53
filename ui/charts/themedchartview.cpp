#include "themedchartview.h"

#include "chartpalette.h"
#include "chartscale.h"

#include <QAreaSeries>
#include <QChart>
#include <QEvent>
#include <QLineSeries>
#include <QValueAxis>

#include <cmath>

namespace ratescope::ui {

void setNiceRange(QValueAxis *axis, double from, double to, int ticks)
{
    const double step = niceStep(std::max(to - from, 1e-9), ticks);
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setTickAnchor(0);
    axis->setTickInterval(step);
    axis->setRange(from, std::max(from + step, std::ceil(to / step - 1e-9) * step));
}

ThemedChartView::ThemedChartView(QWidget *parent)
    : QChartView(parent)
{
    setRenderHint(QPainter::Antialiasing);
    chart()->legend()->setAlignment(Qt::AlignBottom);
    chart()->setBackgroundRoundness(0);
    chart()->setMargins(QMargins(4, 4, 4, 4));
    QFont f = chart()->titleFont();
    f.setBold(true);
    chart()->setTitleFont(f);
}

QValueAxis *ThemedChartView::addValueAxis(Qt::Alignment alignment, const QString &title)
{
    auto *axis = new QValueAxis(this);
    axis->setTitleText(title);
    axis->setLabelFormat(QStringLiteral("%g"));
    chart()->addAxis(axis, alignment);
    return axis;
}

void ThemedChartView::changeEvent(QEvent *event)
{
    QChartView::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        applyPalette();
}

// The theme first (it resets colours), then the palette's own colours over it, then the
// series' colours again (the theme resets those too).
void ThemedChartView::applyPalette()
{
    const QPalette pal = palette();
    QChart *c = chart();
    std::vector<std::pair<QAbstractSeries *, std::pair<QPen, QBrush>>> kept;
    for (QAbstractSeries *s : c->series()) {
        if (auto *area = qobject_cast<QAreaSeries *>(s))
            kept.push_back({s, {area->pen(), area->brush()}});
        else if (auto *line = qobject_cast<QLineSeries *>(s))
            kept.push_back({s, {line->pen(), QBrush()}});
    }
    applyChartPalette(c, pal);
    for (auto &[s, style] : kept) {
        if (auto *area = qobject_cast<QAreaSeries *>(s)) {
            area->setPen(style.first);
            area->setBrush(style.second);
        } else if (auto *line = qobject_cast<QLineSeries *>(s)) {
            line->setPen(style.first);
        }
    }
    setBackgroundBrush(pal.color(QPalette::Window));
    QColor minor = pal.color(QPalette::WindowText);
    minor.setAlpha(18);
    for (QAbstractAxis *axis : c->axes())
        axis->setMinorGridLinePen(QPen(minor, 1));
    legendChanged();
}

} // namespace ratescope::ui
