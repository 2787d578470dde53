// Axis scales of the console's charts, shared by every page that draws one.
#pragma once

namespace ratescope::ui {

// A round tick step (1, 2 or 5 times a power of ten) giving about `ticks` ticks over `span`;
// 1 for an empty or negative span.
double niceStep(double span, int ticks);

} // namespace ratescope::ui
