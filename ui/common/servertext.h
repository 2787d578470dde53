// The server's shape in words, as the status bar, the Overview and the connection dialog say it.
#pragma once

#include "redis/serverinfo.h"

#include <QString>

namespace ratescope::ui {

// "3 masters · 3 replicas", "master 127.0.0.1:6380 · 1 replica"
QString nodesSummary(const ServerInfo &info, bool cluster);
// What cluster sums cover: "all masters", "the 2 of 3 masters that answered".
QString overMasters(const ServerInfo &info);

} // namespace ratescope::ui
