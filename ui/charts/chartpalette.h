// Charts drawn in their widget's palette, the same way on every page: Qt Charts' light or dark
// theme chosen by the window's lightness, then the palette's own colours for the background,
// titles, legend, axis labels and a faint grid, so a chart reads on a light and a dark desktop
// alike. Series colours come from seriesColor() (the theme resets them: set them after).
#pragma once

#include <QColor>
#include <QPalette>

class QChart;

namespace ratescope::ui {

bool isDarkPalette(const QPalette &palette);

// background: the role the plot sits on (Window to blend with the page, Base for a panel).
void applyChartPalette(QChart *chart, const QPalette &palette, QPalette::ColorRole background = QPalette::Window);

// A chart whose values are no longer live (the connection is lost): drawn faint by the chart
// itself, inside its view. Never by a QGraphicsEffect on a widget that holds a chart view: Qt
// then paints the view twice, through the effect and straight into the window, and leaves a
// faint, shifted ghost copy of the chart on screen (a grab() of the widget does not show it).
void setChartStale(QChart *chart, bool stale);

// The console's series colours, one per line a chart tells apart (the monitor's keys, the
// What-if view's specs), in order; they read on a light and on a dark background alike and
// repeat after kSeriesColors.
inline constexpr int kSeriesColors = 10;
QColor seriesColor(int index);

} // namespace ratescope::ui
