// A line that says a page no longer follows the server (its connection is lost): on amber, so
// that it reads before the figures it qualifies.
#pragma once

class QWidget;

namespace ratescope::ui {

// Palette colours, not a style sheet: a style sheet would fix the text colour for the dark
// palette too. The amber pair reads the same in light and dark themes. Off: the widget takes
// its parent's palette again.
void showNotUpdating(QWidget *line, bool on);

} // namespace ratescope::ui
