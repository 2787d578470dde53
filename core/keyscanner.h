// Walks a keyspace page by page with SCAN (never KEYS) and classifies what it finds.
#pragma once

#include "keyformat.h"
#include "resp.h"

#include <functional>
#include <optional>
#include <vector>

namespace ratescope {

class Connection;

struct KeyRecord {
    QByteArray key;
    QByteArray type;    // as TYPE says: "zset", "hash", "string", ...; "?" when refused
    qint64 pttlMs = -1; // -1: no expiry; -2: gone meanwhile; -3: not known (PTTL refused)
    qint64 memory = -1; // MEMORY USAGE in bytes; -1 when not asked for, or refused
    KeyClass kind;
    QString problem; // the server's refusal of TYPE or of the format sample, if any
};

// What a batch of keys is: one pipeline of TYPE, PTTL (unless off; and MEMORY USAGE), then one of the
// samples that tell the limiter formats apart, classified with the declared score units of
// the policies matching each key. Shared by the key scanner (the CLI's keys) and the
// console's key details, so that both read and classify a key alike. Nothing is written.
// Error replies are kept per key (type "?", pttl -3, memory -1, problem); a lost connection
// is thrown.
struct KeyRound {
    std::optional<qint64> nowUs; // classify against this; unset: TIME, read in the first
                                 // pipeline (this machine's clock when it is refused)
    bool memory = false;
    bool ttl = true; // PTTL per key (KeyRecord::pttlMs); off, pttlMs stays -1
    const std::vector<Policy> *policies = nullptr;
    // More commands per key, sent with the first pipeline and with the samples; their
    // replies come back per key in KeyRoundResult::alsoRead / alsoSampled.
    std::function<std::vector<Command>(const QByteArray &key)> alsoRead;
    std::function<std::vector<Command>(const KeyRecord &record)> alsoSample;
};
struct KeyRoundResult {
    std::vector<KeyRecord> records;
    qint64 nowUs = 0;
    std::vector<std::vector<Reply>> alsoRead;    // per key
    std::vector<std::vector<Reply>> alsoSampled; // per key
};
KeyRoundResult readKeyRecords(Connection &connection, const std::vector<QByteArray> &keys, const KeyRound &round);

// readKeyRecords in its steps, for callers that send a round's commands along with others
// (top keeps the next page's first round in flight while it classifies a page): the first
// round's commands, their replies taken (firstCommands().size() of them, in order), then the
// samples' commands and their replies, which give the result. `round` must outlive it.
class KeyRoundReader {
public:
    KeyRoundReader(std::vector<QByteArray> keys, const KeyRound &round);
    std::vector<Command> firstCommands();
    void takeFirst(Reply *replies); // moved from
    std::vector<Command> sampleCommands();
    KeyRoundResult takeSamples(Reply *replies); // moved from; the reader is spent

private:
    std::vector<QByteArray> m_keys;
    const KeyRound &m_round;
    KeyRoundResult m_out;
    std::vector<std::pair<size_t, size_t>> m_extra, m_ranges, m_sampledExtra; // per key: first reply, count
};

class KeyScanner {
public:
    struct Options {
        QByteArray match = "*";
        int count = 1000;             // SCAN COUNT hint per page
        QByteArray type;              // SCAN TYPE filter; empty: every type
        bool memory = false;          // MEMORY USAGE per key (costly on big keyspaces)
        std::optional<qint64> nowUs;  // classify against this clock; default: the server's TIME
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
