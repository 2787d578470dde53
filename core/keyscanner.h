// Walks a keyspace page by page with SCAN (never KEYS) and classifies what it finds.
#pragma once

#include "keyformat.h"

#include <vector>

namespace ratescope {

class Connection;

struct KeyRecord {
    QByteArray key;
    QByteArray type;     // as TYPE says: "zset", "hash", "string", ...
    qint64 pttlMs = -1;  // -1: no expiry; -2: gone meanwhile
    qint64 memory = -1;  // MEMORY USAGE in bytes; -1 when not asked for
    KeyClass kind;
};

class KeyScanner {
public:
    struct Options {
        QByteArray match = "*";
        int count = 1000;         // SCAN COUNT hint per page
        QByteArray type;          // SCAN TYPE filter; empty: every type
        bool memory = false;      // MEMORY USAGE per key (costly on big keyspaces)
        std::optional<qint64> nowUs; // classify against this clock; default: the server's TIME
        std::vector<Policy> policies; // declared score units for foreign logs
    };

    KeyScanner(Connection &connection, Options options);

    bool atEnd() const { return m_started && m_cursor == "0"; }
    // One SCAN call, then one pipelined round of TYPE + PTTL (+ MEMORY USAGE) and one of
    // format samples. A page may be empty while the scan goes on.
    std::vector<KeyRecord> nextPage();
    qint64 scanned() const { return m_scanned; }
    qint64 nowUs() const { return m_nowUs; }

private:
    Connection &m_connection;
    Options m_options;
    QByteArray m_cursor = "0";
    bool m_started = false;
    qint64 m_scanned = 0;
    qint64 m_nowUs = 0;
};

// The server's clock (TIME) in microseconds; this machine's clock for a user who may not
// run TIME (it is not in @read).
qint64 serverTimeUs(Connection &connection);

} // namespace ratescope
