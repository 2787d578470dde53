// Charts drawn in their widget's palette, the same way on every page: Qt Charts' light or dark
// theme chosen by the window's lightness, then the palette's own colours for the background,
// titles, legend, axis labels and a faint grid, so a chart reads on a light and a dark desktop
// alike. Series colours are each page's own business (the theme resets them: set them after).
#pragma once

#include <QPalette>

class QChart;

namespace ratescope::ui {

bool isDarkPalette(const QPalette &palette);

// background: the role the plot sits on (Window to blend with the page, Base for a panel).
void applyChartPalette(QChart *chart, const QPalette &palette, QPalette::ColorRole background = QPalette::Window);

} // namespace ratescope::ui
