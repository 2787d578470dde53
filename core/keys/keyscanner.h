// Walks a keyspace page by page with SCAN (never KEYS) and classifies what it finds.
#pragma once

#include "admin/policy.h"
#include "formats/recognition.h"
#include "redis/resp.h"

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

namespace ratescope {

class Connection;

struct KeyRecord {
    QByteArray key;
    QByteArray type;    // as TYPE says: "zset", "hash", "string", ...; "?" when refused
    qint64 pttlMs = -1; // -1: no expiry; -2: gone meanwhile; -3: not known (PTTL refused)
    qint64 memory = -1; // MEMORY USAGE in bytes; -1 when not asked for, or refused
    KeyKind kind;
    QString problem; // the server's refusal of TYPE or of the format sample, if any
};

// Guesses a key's type from the keys of the same shape read before, so that a large, regular
// keyspace needs no TYPE per key: the sample command of the guessed type goes out at once and
// its reply proves the guess (a WRONGTYPE error sends the key back to be typed). A shape is
// the key with every segment (between : / { } | . , ; = @ - _ and space) that holds a digit
// made one placeholder, so "svc:log:42" and "svc:log:7" are alike; a shape is guessed once
// its last two keys had the same type. At most kShapes shapes are remembered (the keys of
// other shapes are then typed).
class TypeGuesser {
public:
    static constexpr size_t kShapes = 10000;
    using Shape = quint64; // a hash of the shape: two shapes alike by chance cost a wrong guess, no more
    static Shape shapeOf(const QByteArray &key);
    // The type to guess for a key of this shape; empty for none.
    QByteArray guess(Shape shape);
    // A key of this shape has this type (read with TYPE, or a guess its sample proved).
    void learn(Shape shape, const QByteArray &type);

private:
    struct Seen {
        int type = 0; // index into the guessable types; -1: one that is not
        int streak = 0;
    };
    Seen *find(Shape shape);
    std::unordered_map<Shape, Seen> m_shapes;
    Shape m_lastShape = 0; // a page's keys mostly share a shape: the last one looked up
    Seen *m_last = nullptr;
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
    // Types guessed by key shape (only for rounds without alsoRead, alsoSample): a guessed key
    // gets no TYPE, its sample going in the first round instead (with its PTTL, MEMORY USAGE);
    // one whose guess was wrong is left out of the records and named in KeyRoundResult::retry,
    // to be read again with TYPE. A key gone meanwhile reads as "none" from its PTTL (-2) or
    // an empty sample; without PTTL, one guessed a string reads as an empty string.
    TypeGuesser *guesser = nullptr;
};
struct KeyRoundResult {
    std::vector<KeyRecord> records;
    qint64 nowUs = 0;
    std::vector<std::vector<Reply>> alsoRead;    // per key
    std::vector<std::vector<Reply>> alsoSampled; // per key
    std::vector<QByteArray> retry;               // guessed wrong (see KeyRound::guesser)
    size_t typed = 0;                            // keys read with TYPE (the others' types guessed)
};
KeyRoundResult readKeyRecords(Connection &connection, const std::vector<QByteArray> &keys, const KeyRound &round);

// readKeyRecords in its steps, for callers that send a round's commands along with others
// (top keeps the next page's first round in flight while it classifies a page): the first
// round's commands, their replies taken (firstCommands().size() of them, in order), then the
// samples' commands and their replies, which give the result. `round` must outlive it.
class KeyRoundReader {
public:
    // The first `typed` keys are never guessed (keys sent back to be typed).
    KeyRoundReader(std::vector<QByteArray> keys, const KeyRound &round, size_t typed = 0);
    std::vector<Command> firstCommands();
    void takeFirst(Reply *replies); // moved from
    std::vector<Command> sampleCommands();
    KeyRoundResult takeSamples(Reply *replies); // moved from; the reader is spent

private:
    std::vector<QByteArray> m_keys;
    const KeyRound &m_round;
    KeyRoundResult m_out;
    std::vector<std::pair<size_t, size_t>> m_extra, m_ranges, m_sampledExtra; // per key: first reply, count
    size_t m_typed = 0;
    std::vector<TypeGuesser::Shape> m_shapes; // per key, when guessing: its shape
    std::vector<char> m_guessed;              // per key: its type was guessed, not asked, and its sample read in round 1
                                              // (1; 2: guessed wrong; 3: asked, every sample read ahead in round 1)
    bool m_ahead = false;                     // the keys not guessed get every sample in round 1
    static constexpr size_t kSamplesAheadUpTo = 2000;
    std::vector<Reply> m_first;               // round 1's replies, kept when samples are among them (at m_extra's ranges)
};

class KeyScanner {
public:
    struct PageReads {
        std::vector<Command> commands;
        std::function<void(Reply *replies)> take; // their replies, in order (moved from)
    };
    struct Options {
        QByteArray match = "*";
        int count = 1000;             // SCAN COUNT hint per page (on a slow link, more: countFor)
        QByteArray type;              // SCAN TYPE filter; empty: every type
        bool memory = false;          // MEMORY USAGE per key (costly on big keyspaces)
        std::optional<qint64> nowUs;  // classify against this clock; default: the server's TIME
        std::vector<Policy> policies; // declared score units for foreign logs
        // More reads per page, sent in the page's first round (a caller's overrides of the
        // page's keys); PageReads::take is given their replies as soon as they are read,
        // before the page is returned (with `overlap`, up to two calls before).
        std::function<PageReads(const std::vector<QByteArray> &keys)> alsoPerPage = {};
        // Keep the server a step ahead (one server: a cluster's SCAN walks its masters behind
        // one cursor, which only whole pipelines do). Each call reads the SCAN reply of the
        // last and sends the next SCAN at once; then it reads what the last call sent behind
        // that SCAN (the caller's reads, samples, a page's first round), sends the first round
        // of the new page with the caller's reads and the samples the pages need, and
        // classifies the pages whose reads are all in. So a call waits only for replies sent
        // a call before, the SCAN calls follow each other at the link's pace, and this side's
        // and the caller's work runs while they are on their way. A page is returned one call
        // after its SCAN reply was read (two when some of its keys need samples); a call may
        // return several pages' keys, or none. Between calls replies are on their way: a
        // request of the caller's own meanwhile first takes them (NodeConnection keeps them),
        // which costs that step its overlap and nothing else. Off: nothing is in flight
        // between calls.
        bool overlap = false;
    };

    KeyScanner(Connection &connection, Options options);
    KeyScanner(const KeyScanner &) = delete; // pages in flight refer to it
    KeyScanner &operator=(const KeyScanner &) = delete;
    // The reads of the first call (the clock and the first SCAN), for a caller to send with the
    // connection's handshake (Connection::prefetch): the first call then costs no round trip.
    static std::vector<Command> firstReads(const Options &options);

    bool atEnd() const
    {
        return m_started && m_cursor == "0" && !m_havePage && !m_scanOut && m_flights.empty() && m_retry.empty() &&
               m_along.empty() && m_batches.empty();
    }
    // One page of keys, classified. The first call reads the clock and the first SCAN in one
    // round trip (none when firstReads() went with the handshake); then each page goes out in
    // one pipelined round with the next SCAN (kept in flight while the page is classified, so
    // the walk never waits for a SCAN alone): TYPE + PTTL (+ MEMORY USAGE), or, where the keys
    // of the same shape before had one type (TypeGuesser), the format sample in place of
    // TYPE. Keys typed in that round get the samples of every guessable type with it (up to
    // KeyRoundReader::kSamplesAheadUpTo a page; more get their samples in a second round);
    // keys guessed wrong are read again. So a page costs one round trip, SCAN included. A page may be empty while the scan goes on. With Options::overlap, see there.
    std::vector<KeyRecord> nextPage();
    qint64 scanned() const { return m_scanned; }
    qint64 nowUs() const { return m_nowUs; }
    // Reads of the caller's (of what the pages before showed) to go with the next call's
    // round; `take` is given their replies once they are read (with overlap, during the call
    // after). The scan is not at its end while some are still to send or to read.
    void sendAlong(PageReads reads);
    // The first round's time, in microseconds (0 before it), and the COUNT it chose.
    qint64 roundTripUs() const { return m_roundTripUs; }
    int count() const { return m_count; }

    // The COUNT for a link of this round trip: `base` per kUsPerBasePage of it, within
    // [base, kMaxCount], so that each call's time on the server stays bounded.
    static constexpr qint64 kUsPerBasePage = 2000;
    static constexpr int kMaxCount = 10000;
    static int countFor(qint64 roundTripUs, int base);

private:
    // A page whose first round went out: its reader, how many replies its first round takes,
    // and the caller's reads sent with it.
    struct Flight {
        std::unique_ptr<KeyRoundReader> reader;
        size_t first = 0;
        PageReads also;
        std::vector<Command> sampleCommands; // once its first round is read: the samples it needs
                                             // (keys asked with TYPE), until they are sent
        size_t samples = 0;
        std::vector<Reply> sampleReplies;
        bool ready = false; // everything read: it can be classified
    };
    void takeScan(const Reply &reply); // the next page's keys and cursor
    void startScan();                  // the first round: the clock and the first SCAN
    std::vector<KeyRecord> nextPageOverlapped();
    Flight flightFor(std::vector<QByteArray> keys, size_t typed, std::vector<Command> &commands);

    Connection &m_connection;
    Options m_options;
    QByteArray m_cursor = "0";
    bool m_started = false;
    bool m_havePage = false;         // m_page holds keys SCAN returned, not yet handed out
    bool m_scanOut = false;          // a SCAN sent, its reply not read yet (overlap)
    std::vector<QByteArray> m_page;
    int m_count = 1000;
    qint64 m_roundTripUs = 0;
    qint64 m_scanned = 0;
    qint64 m_nowUs = 0;
    TypeGuesser m_guesser;
    KeyRound m_round;                // the rounds' settings, once the clock is read (overlap)
    std::deque<Flight> m_flights;    // oldest first (overlap)
    std::vector<QByteArray> m_retry; // keys guessed wrong, to be read again with TYPE (overlap)
    std::vector<PageReads> m_along; // to send with the next call's round
    // What a step sent behind its SCAN, in order: the caller's reads, the samples of these
    // pages, a page's first round (overlap).
    struct Batch {
        std::vector<PageReads> along;
        std::vector<Flight *> sampled;
        Flight *flight = nullptr;
    };
    std::deque<Batch> m_batches;     // sent, not read yet: oldest first
    size_t m_batchesBeforeScan = 0;  // of them, those sent before the SCAN that is out
    void readBatch();
};

// The server's clock (TIME) in microseconds; this machine's clock for a user who may not
// run TIME (it is not in @read).
qint64 serverTimeUs(Connection &connection);
// The same from a TIME reply read with other commands (a NOPERM: this machine's clock).
qint64 timeFromReply(const Reply &time);

} // namespace ratescope
