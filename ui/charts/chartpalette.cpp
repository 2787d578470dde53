#include "chartpalette.h"

#include <QtCharts/QAbstractAxis>
#include <QtCharts/QChart>
#include <QtCharts/QLegend>

namespace ratescope::ui {

QColor seriesColor(int index)
{
    static const QColor colors[kSeriesColors] = {
        QColor(0x3b, 0x82, 0xf6), QColor(0xf5, 0x9e, 0x0b), QColor(0x10, 0xb9, 0x81), QColor(0xa8, 0x55, 0xf7), QColor(0xec, 0x48, 0x99),
        QColor(0x06, 0xb6, 0xd4), QColor(0x84, 0xcc, 0x16), QColor(0xf9, 0x73, 0x16), QColor(0x63, 0x66, 0xf1), QColor(0x94, 0xa3, 0xb8)};
    return colors[((index % kSeriesColors) + kSeriesColors) % kSeriesColors];
}

void setChartStale(QChart *chart, bool stale)
{
    chart->setOpacity(stale ? 0.4 : 1.0);
}

bool isDarkPalette(const QPalette &palette)
{
    return palette.color(QPalette::Window).lightness() < 128;
}

void applyChartPalette(QChart *chart, const QPalette &palette, QPalette::ColorRole background)
{
    // The theme resets fonts and colours: the title's font is kept, the colours set after it.
    const QFont titleFont = chart->titleFont();
    chart->setTheme(isDarkPalette(palette) ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    chart->setTitleFont(titleFont);
    chart->setBackgroundBrush(palette.color(background));
    chart->setBackgroundPen(Qt::NoPen);
    chart->setBackgroundRoundness(0);
    const QColor text = palette.color(background == QPalette::Base ? QPalette::Text : QPalette::WindowText);
    chart->setTitleBrush(text);
    chart->legend()->setLabelColor(text);
    QColor grid = text;
    grid.setAlpha(40);
    for (QAbstractAxis *axis : chart->axes()) {
        axis->setLabelsBrush(text);
        axis->setTitleBrush(text);
        axis->setGridLineColor(grid);
        axis->setLinePenColor(grid);
        axis->setShadesVisible(false);
    }
}

} // namespace ratescope::ui
