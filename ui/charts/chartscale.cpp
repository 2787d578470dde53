#include "chartscale.h"

#include <algorithm>
#include <cmath>

namespace ratescope::ui {

double niceStep(double span, int ticks)
{
    const double raw = span / std::max(ticks, 1);
    if (!(raw > 0))
        return 1;
    const double p = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0})
        if (raw <= m * p)
            return m * p;
    return 10 * p;
}

} // namespace ratescope::ui
