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
        throw ProtocolError(QStringLiteral("unexpected TIME reply %1").arg(t.debugString()));
    return t[0].toInteger() * 1000000 + t[1].toInteger();
}

KeyScanner::KeyScanner(Connection &connection, Options options) : m_connection(connection), m_options(std::move(options))
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
        throw ProtocolError(QStringLiteral("unexpected SCAN reply %1").arg(page.debugString()));
    m_started = true;
    m_cursor = page[0].bytes();

    std::vector<KeyRecord> records;
    records.reserve(page[1].size());
    for (const Reply &k : page[1].elements())
        records.push_back({k.bytes(), {}, -1, -1, {}});
    m_scanned += qint64(records.size());
    if (records.empty())
        return records;

    // Round 1: what each key is.
    const int perKey = m_options.memory ? 3 : 2;
    std::vector<Command> meta;
    meta.reserve(records.size() * size_t(perKey));
    for (const KeyRecord &r : records) {
        meta.push_back({"TYPE", r.key});
        meta.push_back({"PTTL", r.key});
        if (m_options.memory)
            meta.push_back({"MEMORY", "USAGE", r.key, "SAMPLES", "0"});
    }
    const auto metaReplies = m_connection.pipeline(meta);
    for (size_t i = 0; i < records.size(); ++i) {
        KeyRecord &r = records[i];
        r.type = metaReplies[i * size_t(perKey)].bytes();
        const Reply &ttl = metaReplies[i * size_t(perKey) + 1];
        r.pttlMs = ttl.isInteger() ? ttl.integer() : -1;
        if (m_options.memory) {
            const Reply &mem = metaReplies[i * size_t(perKey) + 2];
            r.memory = mem.isInteger() ? mem.integer() : -1;
        }
    }

    // Round 2: a sample that tells the formats apart.
    std::vector<Command> samples;
    std::vector<std::pair<size_t, size_t>> ranges; // per record: first sample, count
    for (const KeyRecord &r : records) {
        const auto cmds = sampleCommands(r.key, r.type);
        ranges.emplace_back(samples.size(), cmds.size());
        samples.insert(samples.end(), cmds.begin(), cmds.end());
    }
    const auto sampleReplies = m_connection.pipeline(samples);
    for (size_t i = 0; i < records.size(); ++i) {
        KeyRecord &r = records[i];
        const auto [first, n] = ranges[i];
        std::vector<Reply> mine(sampleReplies.begin() + qsizetype(first), sampleReplies.begin() + qsizetype(first + n));
        const auto policy = matchPolicy(m_options.policies, r.key);
        r.kind = classify(r.key, r.type, mine, m_nowUs, policy ? policy->scoreUnit : ScoreUnit::Auto);
    }
    return records;
}

} // namespace ratescope
