// The registry of readers of other libraries' and gateways' limiters (docs/key-formats.md,
// "Other libraries"): classification, usage, inspection and reset all find them here. Adding
// a format is adding one file in core/formats/readers/ and a line in the registry.
#pragma once

#include "formats/keykind.h"

namespace ratescope {

// Every format, in detection order (the most specific first).
const std::vector<const FormatReader *> &formatReaders();
// Those of one Redis type ("string", "hash", "zset", "list"), in the same order.
const std::vector<const FormatReader *> &formatReadersOfType(const QByteArray &type);
// nullptr when there is none of that name.
const FormatReader *findFormatReader(const QString &name);
// Throws UsageError naming the known formats.
const FormatReader *parseFormatReader(const QString &name);

} // namespace ratescope
