// What `lookup`, `reset --lookup` and `override set --lookup` share: one customer's limiters,
// found the same way for all three (core/keys/lookup.h).
#pragma once

#include "keys/lookup.h"

#include <QCommandLineOption>

namespace ratescope::cli {

class Cli;

// --lookup ID, for the commands that act on a customer's limiters.
QCommandLineOption lookupOption();
// The pass, with the namespace and its policies filled in; a progress line on a terminal,
// Ctrl-C ends the scan early (the result then says it is not complete).
LookupResult lookUp(Cli &cli, LookupOptions options);

} // namespace ratescope::cli
