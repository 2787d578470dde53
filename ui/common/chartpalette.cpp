#include "chartpalette.h"

#include <QtCharts/QAbstractAxis>
#include <QtCharts/QChart>
#include <QtCharts/QLegend>

namespace ratescope::ui {

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
