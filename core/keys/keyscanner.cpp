#include "keys/keyscanner.h"

#include "redis/connection.h"
#include "redis/scan.h"
#include "base/errors.h"
#include "base/keytext.h"

#include <QDateTime>
#include <QElapsedTimer>

namespace ratescope {

qint64 serverTimeUs(Connection &connection)
{
    return timeFromReply(connection.pipeline({{"TIME"}}).front());
}

qint64 timeFromReply(const Reply &t)
{
    if (t.isError()) {
        // TIME is not in @read: a read-only ACL user may not ask. Windows are then read
        // against this machine's clock, which NTP keeps close to the server's.
        if (!t.bytes().startsWith("NOPERM"))
            t.orThrow();
        return QDateTime::currentMSecsSinceEpoch() * 1000;
    }
    if (t.size() != 2)
        throw UnexpectedReplyError(QStringLiteral("unexpected TIME reply %1").arg(t.debugString()));
    return t[0].toInteger() * 1000000 + t[1].toInteger();
}

namespace {

// Appends `more` to `out`, noting where they start and how many they are.
void appendNoted(std::vector<Command> &out, std::vector<Command> more, std::vector<std::pair<size_t, size_t>> &ranges)
{
    ranges.emplace_back(out.size(), more.size());
    for (Command &c : more)
        out.push_back(std::move(c));
}

} // namespace

namespace {

// The types whose sample proves them (no empty zset, hash or list exists, and a key of any
// other type answers the sample with WRONGTYPE); the others always need TYPE.
const QByteArray kGuessable[] = {QByteArrayLiteral("zset"), QByteArrayLiteral("hash"), QByteArrayLiteral("string"),
                                 QByteArrayLiteral("list")};

} // namespace

TypeGuesser::Shape TypeGuesser::shapeOf(const QByteArray &key)
{
    // FNV-1a over the shape, computed as it is read: no copy of the key.
    Shape h = 14695981039346656037ULL;
    auto add = [&h](unsigned char c) { h = (h ^ c) * 1099511628211ULL; };
    const auto separator = isKeySeparator;
    const char *p = key.constData(), *end = p + key.size();
    while (p < end) {
        if (separator(*p)) {
            add(*p++);
            continue;
        }
        const char *segment = p;
        bool digit = false;
        while (p < end && !separator(*p))
            digit = digit || (*p >= '0' && *p <= '9'), ++p;
        if (digit)
            add(0x01);
        else
            for (const char *c = segment; c < p; ++c)
                add(*c);
    }
    return h;
}

TypeGuesser::Seen *TypeGuesser::find(Shape shape)
{
    if (m_last && m_lastShape == shape)
        return m_last;
    const auto seen = m_shapes.find(shape);
    if (seen == m_shapes.end())
        return nullptr;
    m_lastShape = shape;
    m_last = &seen->second; // elements stay where they are when the map grows
    return m_last;
}

QByteArray TypeGuesser::guess(Shape shape)
{
    const Seen *seen = find(shape);
    return seen && seen->type >= 0 && seen->streak >= 2 ? kGuessable[seen->type] : QByteArray();
}

void TypeGuesser::learn(Shape shape, const QByteArray &type)
{
    if (type == "none" || type == "?")
        return; // gone, or not known: says nothing of the shape
    const auto known = std::find(std::begin(kGuessable), std::end(kGuessable), type);
    // A type no sample proves (a set, a stream, a module's) breaks the shape's streak for good
    // measure: its keys are typed until two in a row have one guessable type again.
    const int index = known == std::end(kGuessable) ? -1 : int(known - std::begin(kGuessable));
    Seen *seen = find(shape);
    if (!seen) {
        if (m_shapes.size() < kShapes)
            m_shapes.emplace(shape, Seen{index, index < 0 ? 0 : 1});
        return;
    }
    if (index < 0) {
        seen->type = index;
        seen->streak = 0;
    } else if (seen->type == index) {
        seen->streak = std::min(seen->streak + 1, 1 << 20);
    } else {
        seen->type = index;
        seen->streak = 1;
    }
}

KeyRoundReader::KeyRoundReader(std::vector<QByteArray> keys, const KeyRound &round, size_t typed)
    : m_keys(std::move(keys))
    , m_round(round)
    , m_typed(typed)
{
    m_out.records.resize(m_keys.size());
    m_out.alsoRead.resize(m_keys.size());
    m_out.alsoSampled.resize(m_keys.size());
    m_out.nowUs = round.nowUs.value_or(0);
    m_guessed.assign(m_keys.size(), 0);
}

std::vector<Command> KeyRoundReader::firstCommands()
{
    // Round 1: what each key is (and the server's clock when none was given).
    std::vector<Command> meta;
    m_extra.clear();
    m_out.typed = 0;
    if (m_keys.empty())
        return meta;
    const size_t perKey = 1 + (m_round.ttl ? 1 : 0) + (m_round.memory ? 1 : 0);
    meta.reserve(1 + m_keys.size() * (perKey + 1));
    if (!m_round.nowUs)
        meta.push_back({"TIME"});
    TypeGuesser *guesser = m_round.guesser && !m_round.alsoRead && !m_round.alsoSample ? m_round.guesser : nullptr;
    m_guessed.assign(m_keys.size(), 0);
    size_t unguessed = m_keys.size();
    if (guesser) {
        m_shapes.resize(m_keys.size());
        unguessed = 0;
        for (size_t i = 0; i < m_keys.size(); ++i) {
            m_shapes[i] = TypeGuesser::shapeOf(m_keys[i]);
            if (i >= m_typed)
                m_out.records[i].type = guesser->guess(m_shapes[i]);
            m_guessed[i] = !m_out.records[i].type.isEmpty();
            unguessed += m_guessed[i] ? 0 : 1;
        }
    }
    // A few keys of shapes not known yet get every guessable type's sample with their TYPE,
    // so that they need no second round; many would cost the server more than a round trip.
    m_ahead = guesser && unguessed <= kSamplesAheadUpTo;
    for (size_t i = 0; i < m_keys.size(); ++i) {
        const QByteArray &key = m_keys[i];
        if (!m_guessed[i]) {
            meta.push_back({QByteArrayLiteral("TYPE"), key});
            ++m_out.typed;
        }
        if (m_round.ttl)
            meta.push_back({QByteArrayLiteral("PTTL"), key});
        if (m_round.memory)
            meta.push_back({"MEMORY", "USAGE", key, "SAMPLES", "0"});
        // A guessed key's sample goes now, in place of TYPE (guessing leaves out alsoRead).
        if (m_guessed[i]) {
            const size_t from = meta.size();
            m_extra.emplace_back(from, appendSampleCommands(meta, key, m_out.records[i].type));
        } else if (m_ahead) {
            const size_t from = meta.size();
            size_t n = 0;
            for (const QByteArray &type : kGuessable)
                n += appendSampleCommands(meta, key, type);
            m_extra.emplace_back(from, n); // until its TYPE tells which of them is its sample
        } else
            appendNoted(meta, m_round.alsoRead ? m_round.alsoRead(key) : std::vector<Command>{}, m_extra);
    }
    return meta;
}

void KeyRoundReader::takeFirst(Reply *metaReplies)
{
    if (m_keys.empty())
        return;
    const size_t first = m_round.nowUs ? 0 : 1;
    if (!m_round.nowUs) {
        // TIME is not in @read: a read-only user's windows are read on this machine's clock.
        const Reply &time = metaReplies[0];
        m_out.nowUs = !time.isError() && time.size() == 2 ? time[0].toInteger() * 1000000 + time[1].toInteger()
                                                          : QDateTime::currentMSecsSinceEpoch() * 1000;
    }
    // PTTL and MEMORY USAGE, from `at` on.
    auto readMeta = [&](KeyRecord &r, size_t at) {
        if (m_round.ttl) {
            const Reply &ttl = metaReplies[at];
            r.pttlMs = ttl.isInteger() ? ttl.integer() : -3;
        }
        if (m_round.memory) {
            const Reply &mem = metaReplies[at + (m_round.ttl ? 1 : 0)];
            r.memory = mem.isInteger() ? mem.integer() : -1;
        }
    };
    size_t at = first;
    for (size_t i = 0; i < m_keys.size(); ++i) {
        KeyRecord &r = m_out.records[i];
        r.key = m_keys[i];
        if (!m_guessed[i]) {
            const Reply &type = metaReplies[at++];
            r.type = type.isError() ? QByteArray("?") : type.bytes();
            if (type.isError())
                r.problem = type.text();
            else if (!m_shapes.empty())
                m_round.guesser->learn(m_shapes[i], r.type);
        }
        readMeta(r, at);
        const auto [from, n] = m_extra[i];
        at = from + n;
        if (!m_guessed[i] && m_ahead) {
            // Its samples were read ahead: the one of its type is its sample (none for a type
            // no sample proves), kept in m_first as a guessed key's.
            size_t offset = 0, count = 0;
            for (const QByteArray &type : kGuessable) {
                const size_t mine = ratescope::sampleCommands(QByteArray(), type).size();
                if (type == r.type) {
                    count = mine;
                    break;
                }
                offset += mine;
            }
            m_extra[i] = {from + (count ? offset : 0), count};
            m_guessed[i] = 3;
            continue;
        }
        // A guessed key's sample replies stay in m_first, for takeSamples.
        if (!m_guessed[i])
            m_out.alsoRead[i].assign(std::make_move_iterator(metaReplies + from), std::make_move_iterator(metaReplies + from + n));
    }
    if (m_out.typed < m_keys.size() || m_ahead) // some were guessed, or sampled ahead
        m_first.assign(std::make_move_iterator(metaReplies), std::make_move_iterator(metaReplies + at));
}

std::vector<Command> KeyRoundReader::sampleCommands()
{
    // Round 2: a sample that tells the formats apart.
    std::vector<Command> samples;
    m_ranges.clear();
    m_sampledExtra.clear();
    for (size_t i = 0; i < m_out.records.size(); ++i) {
        const KeyRecord &r = m_out.records[i];
        if (m_guessed[i]) { // sampled in round 1
            m_ranges.emplace_back(samples.size(), 0);
            m_sampledExtra.emplace_back(samples.size(), 0);
            continue;
        }
        const size_t from = samples.size();
        m_ranges.emplace_back(from, appendSampleCommands(samples, r.key, r.type));
        appendNoted(samples, m_round.alsoSample ? m_round.alsoSample(r) : std::vector<Command>{}, m_sampledExtra);
    }
    return samples;
}

KeyRoundResult KeyRoundReader::takeSamples(Reply *sampleReplies)
{
    static const std::vector<Policy> kNoPolicies;
    const std::vector<Policy> &policies = m_round.policies ? *m_round.policies : kNoPolicies;
    std::vector<Reply> mine;
    bool wrongGuesses = false;
    for (size_t i = 0; i < m_out.records.size(); ++i) {
        KeyRecord &r = m_out.records[i];
        // A guessed key's sample was read in round 1.
        const auto [from, n] = m_guessed[i] ? m_extra[i] : m_ranges[i];
        Reply *replies = m_guessed[i] ? m_first.data() : sampleReplies;
        mine.assign(std::make_move_iterator(replies + from), std::make_move_iterator(replies + from + n));
        if (m_guessed[i] == 1 && n > 0) {
            const Reply &sample = mine[0];
            if (sample.isError() && sample.bytes().startsWith("WRONGTYPE")) {
                m_out.retry.push_back(r.key); // another type now: read again with TYPE
                m_guessed[i] = 2;
                wrongGuesses = true;
                continue;
            }
            if (r.pttlMs == -2 || (sample.isArray() && sample.size() == 0) || sample.isNil())
                r.type = "none"; // gone (no empty zset, hash or list exists)
            else if (!sample.isError())
                m_round.guesser->learn(m_shapes[i], r.type);
        }
        if (n > 0 && mine[0].isError() && r.problem.isEmpty())
            r.problem = mine[0].text();
        const Policy *policy = findPolicy(policies, r.key);
        r.kind = classify(r.key, r.type, mine, m_out.nowUs, policy ? policy->scoreUnit : ScoreUnit::Auto,
                          policy ? policy->format : QString(), policy ? policy->spec.windowUs : 0);
        const auto [efrom, en] = m_sampledExtra[i];
        m_out.alsoSampled[i].assign(std::make_move_iterator(sampleReplies + efrom), std::make_move_iterator(sampleReplies + efrom + en));
    }
    if (wrongGuesses) {
        // Guessed keys have no extras: only their records go.
        size_t kept = 0;
        for (size_t i = 0; i < m_out.records.size(); ++i)
            if (m_guessed[i] != 2) {
                if (kept != i)
                    m_out.records[kept] = std::move(m_out.records[i]);
                ++kept;
            }
        m_out.records.resize(kept);
        m_out.alsoRead.resize(kept);
        m_out.alsoSampled.resize(kept);
    }
    return std::move(m_out);
}

KeyRoundResult readKeyRecords(Connection &connection, const std::vector<QByteArray> &keys, const KeyRound &round)
{
    KeyRoundReader reader(keys, round);
    if (keys.empty())
        return reader.takeSamples(nullptr);
    std::vector<Reply> meta = connection.pipeline(reader.firstCommands());
    reader.takeFirst(meta.data());
    std::vector<Reply> samples = connection.pipeline(reader.sampleCommands());
    return reader.takeSamples(samples.data());
}

KeyScanner::KeyScanner(Connection &connection, Options options)
    : m_connection(connection)
    , m_options(std::move(options))
{
    if (m_options.match.isEmpty())
        m_options.match = "*";
    m_options.count = std::clamp(m_options.count, 10, 100000);
    m_count = m_options.count;
}

int KeyScanner::countFor(qint64 roundTripUs, int base)
{
    // A page's server time grows with COUNT (about a microsecond a key scanned, a few more a
    // key classified): on a link whose round trip is long beside it, bigger pages save round
    // trips for nothing. One base-sized page per kUsPerBasePage of round trip, up to kMaxCount.
    const qint64 scaled = qint64(base) * std::max<qint64>(1, roundTripUs / kUsPerBasePage);
    return int(std::clamp<qint64>(scaled, base, std::max(base, kMaxCount)));
}

void KeyScanner::takeScan(const Reply &reply)
{
    const std::vector<Reply> &names = scanReplyNames(reply, &m_cursor);
    m_page.clear();
    m_page.reserve(names.size());
    for (const Reply &name : names)
        m_page.push_back(name.bytes());
    m_havePage = true;
}

std::vector<Command> KeyScanner::firstReads(const Options &options)
{
    std::vector<Command> first;
    if (!options.nowUs)
        first.push_back({"TIME"});
    first.push_back(scanCommand("0", options.match.isEmpty() ? QByteArray("*") : options.match,
                                std::clamp(options.count, 10, 100000), options.type));
    return first;
}

void KeyScanner::startScan()
{
    // Round 1: the clock (unless given) and the first SCAN. Its time is the link's round trip
    // (both are quick on the server): it sizes the pages from then on. When they went with
    // the handshake (firstReads), that round's time is the connection's last.
    QElapsedTimer timer;
    timer.start();
    const std::vector<Reply> replies = m_connection.pipeline(firstReads(m_options));
    m_roundTripUs = std::max<qint64>(timer.nsecsElapsed() / 1000, m_connection.lastRoundNs() / 1000);
    m_nowUs = m_options.nowUs ? *m_options.nowUs : timeFromReply(replies.front());
    takeScan(replies.back());
    m_started = true;
    m_count = countFor(m_roundTripUs, m_options.count);
    m_round.nowUs = m_nowUs;
    m_round.memory = m_options.memory;
    m_round.policies = &m_options.policies;
    m_round.guesser = &m_guesser;
}

void KeyScanner::sendAlong(PageReads reads)
{
    m_along.push_back(std::move(reads));
}

std::vector<KeyRecord> KeyScanner::nextPage()
{
    if (atEnd())
        return {};
    if (!m_started)
        startScan();
    if (m_options.overlap && !m_connection.isCluster())
        return nextPageOverlapped();
    // The page in hand (from the SCAN that came back last); the next SCAN goes out with its
    // first round, so the walk never waits for a SCAN of its own. The caller's reads first.
    const std::vector<PageReads> alongReads = std::exchange(m_along, {});
    std::vector<Command> commands;
    for (const PageReads &r : alongReads)
        commands.insert(commands.end(), r.commands.begin(), r.commands.end());
    const size_t along = commands.size();
    std::vector<QByteArray> keys = std::move(m_page);
    m_page.clear();
    m_havePage = false;
    m_scanned += qint64(keys.size());
    const bool more = m_cursor != "0";
    if (more)
        commands.push_back(scanCommand(m_cursor, m_options.match, m_count, m_options.type));
    std::optional<KeyRoundReader> reader;
    PageReads also;
    const size_t firstAt = commands.size();
    if (!keys.empty()) {
        if (m_options.alsoPerPage)
            also = m_options.alsoPerPage(keys);
        reader.emplace(keys, m_round);
        for (Command &c : reader->firstCommands())
            commands.push_back(std::move(c));
    }
    const size_t alsoAt = commands.size();
    for (const Command &c : also.commands)
        commands.push_back(c);
    if (commands.empty())
        return {};
    std::vector<Reply> replies = m_connection.pipeline(commands);
    size_t at = 0;
    for (const PageReads &r : alongReads) {
        if (r.take)
            r.take(replies.data() + at);
        at += r.commands.size();
    }
    if (more)
        takeScan(replies[along]);
    if (!reader)
        return {};
    reader->takeFirst(replies.data() + firstAt);
    if (also.take)
        also.take(replies.data() + alsoAt);
    std::vector<Command> sampleCommands = reader->sampleCommands();
    std::vector<Reply> samples = sampleCommands.empty() ? std::vector<Reply>{} : m_connection.pipeline(sampleCommands);
    KeyRoundResult read = reader->takeSamples(samples.data());
    if (!read.retry.empty()) {
        // Guessed wrong: typed now.
        KeyRound round = m_round;
        round.guesser = nullptr;
        for (KeyRecord &r : readKeyRecords(m_connection, read.retry, round).records)
            read.records.push_back(std::move(r));
    }
    return std::move(read.records);
}

KeyScanner::Flight KeyScanner::flightFor(std::vector<QByteArray> keys, size_t typed, std::vector<Command> &commands)
{
    Flight f;
    if (m_options.alsoPerPage)
        f.also = m_options.alsoPerPage(keys);
    f.reader = std::make_unique<KeyRoundReader>(std::move(keys), m_round, typed);
    std::vector<Command> first = f.reader->firstCommands();
    f.first = first.size();
    std::move(first.begin(), first.end(), std::back_inserter(commands));
    commands.insert(commands.end(), f.also.commands.begin(), f.also.commands.end());
    return f;
}

std::vector<KeyRecord> KeyScanner::nextPageOverlapped()
{
    // One step, as top's HotScanner takes them, with the SCAN chain first: the walk waits for
    // the link, never for this side, and the server always has the next pages to work on. In
    // the order of the replies on the wire:
    // 1. What went out before the last step's SCAN (the step before the last sent it behind
    //    its own SCAN), in the order sent: the caller's reads (sendAlong: handed to their
    //    `take`), the samples of pages that needed them, and the first round of the page sent
    //    then (with its alsoPerPage reads). Sent two steps ago, they are in by now. Once the
    //    scan is over, every write still unread.
    // 2. The SCAN reply of the last step, if one is out; the next SCAN goes out at once, in a
    //    write of its own.
    // 3. In one write: the caller's reads given since, the samples the pages read in 1 need
    //    (keys asked with TYPE), and the first round of the page from the SCAN reply of 2.
    // The pages whose reads are all in are classified and returned, oldest first. Once the
    // scan and its pages are over, keys guessed wrong go as a page of their own, typed.
    const size_t before = m_scanOut ? m_batchesBeforeScan : m_batches.size();
    for (size_t i = 0; i < before; ++i)
        readBatch();
    if (m_scanOut) {
        takeScan(m_connection.receive());
        m_scanOut = false;
    }
    std::vector<QByteArray> keys;
    size_t typed = 0;
    if (m_havePage) {
        keys = std::move(m_page);
        m_page.clear();
        m_havePage = false;
        m_scanned += qint64(keys.size());
        if (m_cursor != "0") {
            m_connection.send(scanCommand(m_cursor, m_options.match, m_count, m_options.type));
            m_scanOut = true;
            m_batchesBeforeScan = m_batches.size();
        }
    } else if (m_cursor == "0" && !m_retry.empty() && m_flights.empty()) {
        keys = std::exchange(m_retry, {});
        typed = keys.size();
    }
    Batch batch;
    std::vector<Command> commands;
    for (PageReads &r : m_along) {
        commands.insert(commands.end(), r.commands.begin(), r.commands.end());
        batch.along.push_back(std::move(r));
    }
    m_along.clear();
    for (Flight &f : m_flights)
        if (!f.sampleCommands.empty()) {
            std::move(f.sampleCommands.begin(), f.sampleCommands.end(), std::back_inserter(commands));
            f.sampleCommands.clear();
            batch.sampled.push_back(&f);
        }
    if (!keys.empty()) {
        m_flights.push_back(flightFor(std::move(keys), typed, commands));
        batch.flight = &m_flights.back();
    }
    if (!commands.empty()) {
        m_connection.send(commands);
        m_batches.push_back(std::move(batch));
    }
    std::vector<KeyRecord> records;
    while (!m_flights.empty() && m_flights.front().ready) {
        Flight &f = m_flights.front();
        KeyRoundResult read = f.reader->takeSamples(f.sampleReplies.data());
        for (QByteArray &k : read.retry)
            m_retry.push_back(std::move(k));
        if (records.empty())
            records = std::move(read.records);
        else
            std::move(read.records.begin(), read.records.end(), std::back_inserter(records));
        m_flights.pop_front();
    }
    return records;
}

void KeyScanner::readBatch()
{
    Batch batch = std::move(m_batches.front());
    m_batches.pop_front();
    for (const PageReads &r : batch.along) {
        std::vector<Reply> replies = m_connection.receive(r.commands.size());
        if (r.take)
            r.take(replies.data());
    }
    for (Flight *f : batch.sampled) {
        f->sampleReplies = m_connection.receive(f->samples);
        f->ready = true;
    }
    if (Flight *f = batch.flight) {
        std::vector<Reply> first = m_connection.receive(f->first);
        f->reader->takeFirst(first.data());
        std::vector<Reply> also = m_connection.receive(f->also.commands.size());
        if (f->also.take)
            f->also.take(also.data());
        f->sampleCommands = f->reader->sampleCommands(); // sent with this step's write
        f->samples = f->sampleCommands.size();
        f->ready = f->samples == 0;
    }
}

} // namespace ratescope
