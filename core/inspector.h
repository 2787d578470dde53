// The full state of one limiter key, read-only: what it is, what it holds, what applies to it.
#pragma once

#include "keyformat.h"
#include "policy.h"

#include <QJsonObject>
#include <optional>

namespace ratescope {

class Connection;

// Classifies one key. A key that does not exist but whose current or previous counter
// window does (<key>:<window id>, window from `spec`) is a counter base.
KeyClass classifyKey(Connection &connection, const QByteArray &key, qint64 nowUs, ScoreUnit declaredUnit = ScoreUnit::Auto,
                     const std::optional<LimitSpec> &spec = {});

struct InspectOptions {
    qint64 nowUs = 0;
    int entryOffset = 0;    // paging through a log's entries in the window
    int entryCount = 50;
    std::optional<LimitSpec> spec; // limits from flags; else policy/override
    ScoreUnit scoreUnit = ScoreUnit::Auto;
};

// Everything about the key as one JSON object (the CLI prints it; the GUI reads it):
// key, exists, type, encoding, ttl_ms, memory, format, algorithm, policy, override,
// limits, decision (what a request would be told now), and the per-format "state".
QJsonObject inspectKey(Connection &connection, const QByteArray &key, const std::vector<Policy> &policies,
                       const std::optional<Override> &override, const InspectOptions &options);

} // namespace ratescope
