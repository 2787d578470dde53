#include "keyscanner.h"

#include "connection.h"
#include "errors.h"

#include <QDateTime>

namespace ratescope {

qint64 serverTimeUs(Connection &connection)
{
    Reply t;
    try {
        t = connection.command({"TIME"});
    } catch (const ReplyError &e) {
        // TIME is not in @read: a read-only ACL user may not ask. Windows are then read
        // against this machine's clock, which NTP keeps close to the server's.
        if (e.prefix() != QLatin1String("NOPERM"))
            throw;
        return QDateTime::currentMSecsSinceEpoch() * 1000;
    }
    if (t.size() != 2)
        throw UnexpectedReplyError(QStringLiteral("unexpected TIME reply %1").arg(t.debugString()));
    return t[0].toInteger() * 1000000 + t[1].toInteger();
}

KeyRoundResult readKeyRecords(Connection &connection, const std::vector<QByteArray> &keys, const KeyRound &round)
{
    KeyRoundResult out;
    out.records.resize(keys.size());
    out.alsoRead.resize(keys.size());
    out.alsoSampled.resize(keys.size());
    if (keys.empty()) {
        out.nowUs = round.nowUs.value_or(0);
        return out;
    }

    // Round 1: what each key is (and the server's clock when none was given).
    const size_t perKey = 1 + (round.ttl ? 1 : 0) + (round.memory ? 1 : 0);
    const size_t first = round.nowUs ? 0 : 1;
    std::vector<Command> meta;
    std::vector<std::pair<size_t, size_t>> extra; // per key: first reply, count
    meta.reserve(first + keys.size() * (perKey + 1));
    if (!round.nowUs)
        meta.push_back({"TIME"});
    for (const QByteArray &key : keys) {
        meta.push_back({QByteArrayLiteral("TYPE"), key});
        if (round.ttl)
            meta.push_back({QByteArrayLiteral("PTTL"), key});
        if (round.memory)
            meta.push_back({"MEMORY", "USAGE", key, "SAMPLES", "0"});
        const std::vector<Command> more = round.alsoRead ? round.alsoRead(key) : std::vector<Command>{};
        extra.emplace_back(meta.size(), more.size());
        meta.insert(meta.end(), more.begin(), more.end());
    }
    std::vector<Reply> metaReplies = connection.pipeline(meta);
    if (round.nowUs) {
        out.nowUs = *round.nowUs;
    } else {
        // TIME is not in @read: a read-only user's windows are read on this machine's clock.
        const Reply &time = metaReplies[0];
        out.nowUs = !time.isError() && time.size() == 2 ? time[0].toInteger() * 1000000 + time[1].toInteger()
                                                        : QDateTime::currentMSecsSinceEpoch() * 1000;
    }
    size_t at = first;
    for (size_t i = 0; i < keys.size(); ++i) {
        KeyRecord &r = out.records[i];
        r.key = keys[i];
        const Reply &type = metaReplies[at];
        r.type = type.isError() ? QByteArray("?") : type.bytes();
        if (type.isError())
            r.problem = type.text();
        if (round.ttl) {
            const Reply &ttl = metaReplies[at + 1];
            r.pttlMs = ttl.isInteger() ? ttl.integer() : -3;
        }
        if (round.memory) {
            const Reply &mem = metaReplies[at + perKey - 1];
            r.memory = mem.isInteger() ? mem.integer() : -1;
        }
        const auto [from, n] = extra[i];
        out.alsoRead[i].assign(std::make_move_iterator(metaReplies.begin() + qsizetype(from)),
                               std::make_move_iterator(metaReplies.begin() + qsizetype(from + n)));
        at = from + n;
    }

    // Round 2: a sample that tells the formats apart.
    std::vector<Command> samples;
    std::vector<std::pair<size_t, size_t>> ranges, sampledExtra; // per key: first reply, count
    for (const KeyRecord &r : out.records) {
        const auto cmds = sampleCommands(r.key, r.type);
        ranges.emplace_back(samples.size(), cmds.size());
        samples.insert(samples.end(), cmds.begin(), cmds.end());
        const std::vector<Command> more = round.alsoSample ? round.alsoSample(r) : std::vector<Command>{};
        sampledExtra.emplace_back(samples.size(), more.size());
        samples.insert(samples.end(), more.begin(), more.end());
    }
    std::vector<Reply> sampleReplies = connection.pipeline(samples);
    static const std::vector<Policy> kNoPolicies;
    const std::vector<Policy> &policies = round.policies ? *round.policies : kNoPolicies;
    std::vector<Reply> mine;
    for (size_t i = 0; i < out.records.size(); ++i) {
        KeyRecord &r = out.records[i];
        const auto [from, n] = ranges[i];
        mine.assign(std::make_move_iterator(sampleReplies.begin() + qsizetype(from)),
                    std::make_move_iterator(sampleReplies.begin() + qsizetype(from + n)));
        if (n > 0 && mine[0].isError() && r.problem.isEmpty())
            r.problem = mine[0].text();
        const Policy *policy = findPolicy(policies, r.key);
        r.kind = classify(r.key, r.type, mine, out.nowUs, policy ? policy->scoreUnit : ScoreUnit::Auto, policy ? policy->format : QString(),
                          policy ? policy->spec.windowUs : 0);
        const auto [efrom, en] = sampledExtra[i];
        out.alsoSampled[i].assign(std::make_move_iterator(sampleReplies.begin() + qsizetype(efrom)),
                                  std::make_move_iterator(sampleReplies.begin() + qsizetype(efrom + en)));
    }
    return out;
}

KeyScanner::KeyScanner(Connection &connection, Options options)
    : m_connection(connection)
    , m_options(std::move(options))
{
    if (m_options.match.isEmpty())
        m_options.match = "*";
    m_options.count = std::clamp(m_options.count, 10, 100000);
}

std::vector<KeyRecord> KeyScanner::nextPage()
{
    if (atEnd())
        return {};
    if (!m_started)
        m_nowUs = m_options.nowUs ? *m_options.nowUs : serverTimeUs(m_connection);
    Command scan{"SCAN", m_cursor, "MATCH", m_options.match, "COUNT", QByteArray::number(m_options.count)};
    if (!m_options.type.isEmpty())
        scan << "TYPE" << m_options.type;
    const Reply page = m_connection.command(scan);
    if (page.size() != 2 || !page[1].isArray())
        throw UnexpectedReplyError(QStringLiteral("unexpected SCAN reply %1").arg(page.debugString()));
    m_started = true;
    m_cursor = page[0].bytes();

    std::vector<QByteArray> keys;
    keys.reserve(page[1].size());
    for (const Reply &k : page[1].elements())
        keys.push_back(k.bytes());
    m_scanned += qint64(keys.size());
    if (keys.empty())
        return {};
    KeyRound round;
    round.nowUs = m_nowUs;
    round.memory = m_options.memory;
    round.policies = &m_options.policies;
    return readKeyRecords(m_connection, keys, round).records;
}

} // namespace ratescope
