// The read-only lock's icon, drawn rather than shipped: a closed padlock when changes are
// refused, an open one when they are allowed.
#pragma once

#include <QIcon>

namespace ratescope::ui {

QIcon lockIcon();

} // namespace ratescope::ui
