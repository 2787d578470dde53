#include "load/simulator.h"

#include "redis/connection.h"
#include "base/duration.h"
#include "base/errors.h"
#include "keys/keyscanner.h"
#include "base/keytext.h"
#include "limiters/limiterscript.h"
#include "redis/sandboxserver.h"

#include <QDataStream>
#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QTemporaryFile>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <queue>
#include <set>

namespace ratescope {

namespace {

constexpr qsizetype kRunRows = 200000; // rows sorted in memory before a run is spilled
constexpr char kUtf8Bom[] = "\xEF\xBB\xBF";

QString grouped(qint64 n)
{
    QString digits = QString::number(n < 0 ? -n : n);
    for (qsizetype i = digits.size() - 3; i > 0; i -= 3)
        digits.insert(i, QLatin1Char(','));
    return n < 0 ? QLatin1Char('-') + digits : digits;
}

// ---- sorted runs -------------------------------------------------------------------------

struct Row {
    QByteArray key;
    qint64 timeUs = 0;
    qint64 cost = 0;
    qint64 seq = 0; // order in the trace: equal times keep it
};

bool rowLess(const Row &a, const Row &b)
{
    if (a.key != b.key)
        return a.key < b.key;
    if (a.timeUs != b.timeUs)
        return a.timeUs < b.timeUs;
    return a.seq < b.seq;
}

// Collects rows, sorts them by (key, time, order) in runs of kRunRows, spills full runs to
// temporary files, then hands them out merged: memory stays at one run plus one row per run.
class RowSorter {
public:
    void add(Row row)
    {
        m_rows.push_back(std::move(row));
        if (qsizetype(m_rows.size()) >= kRunRows)
            spill();
    }

    void finish()
    {
        std::stable_sort(m_rows.begin(), m_rows.end(), rowLess);
        if (!m_files.empty() && !m_rows.empty())
            spill();
        if (m_files.empty()) {
            m_memory = true;
            return;
        }
        for (auto &f : m_files) {
            f->seek(0);
            m_streams.push_back(std::make_unique<QDataStream>(f.get()));
        }
        m_heads.resize(m_files.size());
        for (size_t i = 0; i < m_files.size(); ++i)
            if (readRow(i))
                m_queue.push(i);
    }

    bool next(Row &row)
    {
        if (m_memory) {
            if (m_at >= m_rows.size())
                return false;
            row = std::move(m_rows[m_at++]);
            return true;
        }
        if (m_queue.empty())
            return false;
        const size_t i = m_queue.top();
        m_queue.pop();
        row = std::move(m_heads[i]);
        if (readRow(i))
            m_queue.push(i);
        return true;
    }

private:
    void spill()
    {
        std::stable_sort(m_rows.begin(), m_rows.end(), rowLess);
        auto file = std::make_unique<QTemporaryFile>();
        if (!file->open())
            throw IoError(QStringLiteral("cannot create a temporary file to sort the trace: %1").arg(file->errorString()));
        QDataStream out(file.get());
        for (const Row &r : m_rows)
            out << r.key << r.timeUs << r.cost << r.seq;
        if (out.status() != QDataStream::Ok || !file->flush())
            throw IoError(QStringLiteral("cannot write a temporary file to sort the trace (disk full?)"));
        m_rows.clear();
        m_rows.shrink_to_fit();
        m_files.push_back(std::move(file));
    }

    bool readRow(size_t i)
    {
        QDataStream &in = *m_streams[i];
        if (in.atEnd())
            return false;
        Row &r = m_heads[i];
        in >> r.key >> r.timeUs >> r.cost >> r.seq;
        if (in.status() != QDataStream::Ok)
            throw IoError(QStringLiteral("cannot read back a temporary file of the sorted trace"));
        return true;
    }

    struct HeadGreater {
        const RowSorter *sorter;
        bool operator()(size_t a, size_t b) const { return rowLess(sorter->m_heads[b], sorter->m_heads[a]); }
    };

    std::vector<Row> m_rows;
    size_t m_at = 0;
    bool m_memory = false;
    std::vector<std::unique_ptr<QTemporaryFile>> m_files;
    std::vector<std::unique_ptr<QDataStream>> m_streams;
    std::vector<Row> m_heads;
    std::priority_queue<size_t, std::vector<size_t>, HeadGreater> m_queue{HeadGreater{this}};
};

// ---- CSV traces --------------------------------------------------------------------------

// One CSV record (RFC 4180: fields in double quotes may hold commas, newlines and doubled
// quotes), read a line at a time. The state of the field being read is kept between the lines of
// a record, so each byte is looked at once: an unclosed quote near the top of a huge file costs
// one pass over it, not a pass over the growing record for every line after it.
class CsvRecord {
public:
    enum class Step { Complete, Open };

    // Takes one more line (without its '\n'). Complete: the record is in fields(), or a problem
    // was set; Open: a quoted field goes on on the next line.
    Step feed(const QByteArray &line, QString *problem)
    {
        if (!m_open) {
            m_fields.clear();
            m_field.clear();
            m_quoted = m_wasQuoted = false;
            m_open = true;
        } else {
            m_field += '\n'; // the line break inside the quoted field
        }
        const qsizetype n = line.size();
        for (qsizetype i = 0; i < n; ++i) {
            const char c = line[i];
            if (m_quoted) {
                // The quoted run up to the next quote, in one append.
                const qsizetype quote = line.indexOf('"', i);
                if (quote < 0) {
                    m_field.append(line.constData() + i, n - i);
                    break;
                }
                m_field.append(line.constData() + i, quote - i);
                i = quote;
                if (i + 1 < n && line[i + 1] == '"') {
                    m_field += '"';
                    ++i;
                } else {
                    m_quoted = false;
                }
            } else if (c == '"') {
                if (!m_field.isEmpty() || m_wasQuoted)
                    return fail(problem, QStringLiteral("a quote inside an unquoted field"));
                m_quoted = m_wasQuoted = true;
            } else if (c == ',') {
                m_fields.append(m_field);
                m_field.clear();
                m_wasQuoted = false;
            } else if (m_wasQuoted) {
                if (c != '\r' || i + 1 != n) // a closing quote ends the field, but for the line's CR
                    return fail(problem, QStringLiteral("text after a closing quote"));
            } else {
                m_field += c;
            }
        }
        if (m_quoted)
            return Step::Open;
        if (m_field.endsWith('\r') && !m_wasQuoted)
            m_field.chop(1);
        m_fields.append(m_field);
        m_open = false;
        return Step::Complete;
    }

    bool open() const { return m_open; }
    const QList<QByteArray> &fields() const { return m_fields; }

private:
    Step fail(QString *problem, const QString &why)
    {
        *problem = why;
        m_open = false;
        return Step::Complete;
    }

    QList<QByteArray> m_fields;
    QByteArray m_field;
    bool m_quoted = false, m_wasQuoted = false, m_open = false;
};

bool digitsOnly(const QByteArray &s)
{
    return !s.isEmpty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

class CsvTraceReader : public TraceReader {
public:
    // file: open for reading; name: what messages call it.
    CsvTraceReader(QFile &file, const QString &name, TraceTimeUnit unit, qint64 maxCost)
        : m_name(name)
    {
        qint64 line = 0, recordLine = 0;
        CsvRecord record;
        while (!file.atEnd()) {
            QByteArray text = file.readLine();
            if (text.isEmpty() && file.error() != QFileDevice::NoError)
                throw IoError(QStringLiteral("cannot read the trace %1: %2").arg(name, file.errorString()));
            ++line;
            if (text.endsWith('\n'))
                text.chop(1);
            if (line == 1 && text.startsWith(kUtf8Bom))
                text.remove(0, 3); // a byte order mark (spreadsheets write one): not part of the header
            if (!record.open())
                recordLine = line;
            QString problem;
            if (record.feed(text, &problem) == CsvRecord::Step::Open)
                continue; // a quoted field goes on on the next line
            if (!problem.isEmpty())
                fail(recordLine, problem);
            takeRecord(recordLine, record.fields(), unit, maxCost);
        }
        if (record.open())
            fail(recordLine, QStringLiteral("a quoted field is not closed"));
        m_sorter.finish();
    }

    bool next(std::vector<TraceRequest> &out, int max) override
    {
        Row row;
        int n = 0;
        while (n < max && m_sorter.next(row)) {
            out.push_back({row.timeUs, std::move(row.key), row.cost});
            ++n;
            ++m_emitted;
        }
        return n > 0;
    }

    QString description() const override { return QStringLiteral("%1 (%2 requests)").arg(m_name, grouped(m_total)); }
    bool admittedOnly() const override { return false; }
    QStringList warnings() const override
    {
        if (m_subMicrosecondTimes == 0)
            return {};
        return {QStringLiteral("%1: times are read to the microsecond, the digits past the 6th are dropped (%2 %3 in all)")
                    .arg(m_firstSubMicrosecond, grouped(m_subMicrosecondTimes),
                         m_subMicrosecondTimes == 1 ? QStringLiteral("time") : QStringLiteral("times"))};
    }
    double progress() const override { return m_total == 0 ? 1.0 : double(m_emitted) / double(m_total); }

private:
    [[noreturn]] void fail(qint64 line, const QString &why) const
    {
        throw UsageError(QStringLiteral("%1 line %2: %3").arg(m_name).arg(line).arg(why));
    }

    void takeRecord(qint64 line, const QList<QByteArray> &fields, TraceTimeUnit unit, qint64 maxCost)
    {
        if (fields.size() == 1 && fields[0].trimmed().isEmpty())
            return; // a blank line
        const QByteArray first = fields[0];
        if (m_total == 0 && !m_sawHeader && first.trimmed().toLower().startsWith("time")) {
            m_sawHeader = true; // time,key[,cost]
            return;
        }
        if (fields.size() < 2)
            fail(line, QStringLiteral("expected time,key[,cost], found %1 field").arg(fields.size()));
        if (fields.size() > 3)
            fail(line, QStringLiteral("expected time,key[,cost], found %1 fields").arg(fields.size()));
        if (first != first.trimmed())
            fail(line, QStringLiteral("the time field '%1' has spaces around it (write the time alone)")
                           .arg(escapeControls(QString::fromUtf8(first.left(64)))));
        Row row;
        row.timeUs = parseTime(line, first, unit);
        row.key = fields[1];
        if (row.key.isEmpty())
            fail(line, QStringLiteral("the key is empty"));
        if (fields.size() == 3 && fields[2].isEmpty())
            fail(line, QStringLiteral("the cost field is empty (give a cost, or leave out the field and its comma)"));
        if (fields.size() == 3) {
            const QByteArray c = fields[2];
            bool ok = digitsOnly(c) && c.size() <= 13;
            row.cost = ok ? c.toLongLong(&ok) : 0;
            if (!ok || row.cost < 1 || row.cost > kMaxLimit)
                fail(
                    line,
                    QStringLiteral("the cost must be an integer in 1..10^12, not '%1'").arg(escapeControls(QString::fromUtf8(c.left(64)))));
            if (maxCost > 0 && row.cost > maxCost)
                fail(line,
                     QStringLiteral("cost %1 is above the limit %2: such a request could never be admitted").arg(row.cost).arg(maxCost));
        }
        row.seq = m_total++;
        m_sorter.add(std::move(row));
    }

    qint64 parseTime(qint64 line, const QByteArray &raw, TraceTimeUnit unit)
    {
        const QByteArray t = raw.trimmed();
        const auto shown = [&] { return escapeControls(QString::fromUtf8(t.left(64))); };
        if (t.isEmpty())
            fail(line, QStringLiteral("the time is missing"));
        if (t.startsWith('-') && digitsOnly(t.mid(1)))
            fail(line, QStringLiteral("negative time '%1'").arg(shown()));
        const bool iso = unit == TraceTimeUnit::Iso8601 || (unit == TraceTimeUnit::Auto && !digitsOnly(t));
        qint64 us = 0;
        if (iso) {
            // The fraction of a second is read here, to the µs (Qt keeps ms and rounds).
            static const QRegularExpression fraction(QStringLiteral("(?<=[T ]\\d\\d:\\d\\d:\\d\\d)[.,](\\d+)"));
            QString text = QString::fromLatin1(t);
            qint64 fractionUs = 0;
            const auto m = fraction.match(text);
            if (m.hasMatch() && m.capturedLength(1) > 6 && m_subMicrosecondTimes++ == 0)
                m_firstSubMicrosecond = QStringLiteral("%1 line %2: time '%3' has %4 digits after the second")
                                            .arg(m_name)
                                            .arg(line)
                                            .arg(shown())
                                            .arg(m.capturedLength(1));
            if (m.hasMatch()) {
                fractionUs = m.captured(1).leftJustified(6, QLatin1Char('0')).left(6).toLongLong();
                text.remove(m.capturedStart(), m.capturedLength());
            }
            QDateTime dt = QDateTime::fromString(text, Qt::ISODate);
            if (!dt.isValid())
                fail(line, QStringLiteral("'%1' is not a time (integer microseconds%2, or ISO 8601 such as 2026-11-23T10:15:00.250Z)")
                               .arg(shown(), unit == TraceTimeUnit::Milliseconds ? QStringLiteral(" or milliseconds") : QString()));
            if (dt.timeSpec() == Qt::LocalTime)
                dt.setTimeSpec(Qt::UTC); // no offset given: UTC, never this machine's zone
            us = dt.toMSecsSinceEpoch() * 1000 + fractionUs;
        } else {
            bool ok = digitsOnly(t) && t.size() <= 16;
            const qint64 n = ok ? t.toLongLong(&ok) : 0;
            if (!ok)
                fail(line, QStringLiteral("'%1' is not a time in %2")
                               .arg(shown(),
                                    unit == TraceTimeUnit::Milliseconds ? QStringLiteral("milliseconds") : QStringLiteral("microseconds")));
            if (unit == TraceTimeUnit::Milliseconds && n > kMaxNowUs / 1000) // n * 1000 could overflow
                fail(line, QStringLiteral("time '%1' is beyond 2^52 µs (the year 2112)").arg(shown()));
            us = unit == TraceTimeUnit::Milliseconds ? n * 1000 : n;
        }
        if (us < 0)
            fail(line, QStringLiteral("negative time '%1'").arg(shown()));
        if (us > kMaxNowUs)
            fail(line, QStringLiteral("time '%1' is beyond 2^52 µs (the year 2112)").arg(shown()));
        return us;
    }

    QString m_name;
    RowSorter m_sorter;
    qint64 m_total = 0;
    qint64 m_emitted = 0;
    bool m_sawHeader = false;
    qint64 m_subMicrosecondTimes = 0; // ISO times with digits past the µs, which are dropped
    QString m_firstSubMicrosecond;    // the first of them, for the warning
};

// ---- live logs ---------------------------------------------------------------------------

qint64 scoreToUs(double score, ScoreUnit unit)
{
    switch (unit) {
    case ScoreUnit::Seconds:
        return std::llround(score * 1e6);
    case ScoreUnit::Milliseconds:
        return std::llround(score * 1e3);
    default:
        return std::llround(score);
    }
}

// The cost a Ratescope ticket member carries ("245:4" -> 4; "17" -> 1).
qint64 ticketCost(const QByteArray &member)
{
    const qsizetype colon = member.indexOf(':');
    if (colon < 0)
        return 1;
    bool ok = false;
    const qint64 c = member.mid(colon + 1).toLongLong(&ok);
    return ok && c > 0 ? c : 1;
}

class LogKeysTraceReader : public TraceReader {
public:
    LogKeysTraceReader(Connection &connection, const QByteArray &glob, ScoreUnit unit)
        : m_connection(connection)
        , m_glob(glob)
        , m_unit(unit)
        , m_scanner(connection, KeyScanner::Options{glob, 1000, QByteArrayLiteral("zset"), false, {}, {}})
        , m_listScanner(connection, KeyScanner::Options{glob, 1000, QByteArrayLiteral("list"), false, {}, {}})
    {
        // The keyspace's size, for progress only.
        qint64 total = 0;
        for (const auto &replies : connection.onEachMaster({{"DBSIZE"}}))
            if (!replies.empty() && replies[0].isInteger())
                total += replies[0].integer();
        m_dbsize = total;
    }

    bool next(std::vector<TraceRequest> &out, int max) override
    {
        int n = 0;
        while (n < max) {
            if (m_key.isNull() && !nextKey())
                break;
            if (m_listKey) {
                // A list log (Python limits' moving window): read whole when the key is taken,
                // handed out oldest first.
                while (n < max && m_listAt < m_listTimes.size()) {
                    out.push_back({m_listTimes[m_listAt++], m_key, 0});
                    ++n;
                    ++m_requests;
                }
                if (m_listAt >= m_listTimes.size()) {
                    m_key = QByteArray();
                    ++m_keysDone;
                }
                continue;
            }
            // Entries by score from the last one read: a live log may lose old entries and
            // gain new ones meanwhile; members already read at the boundary score come first
            // (same score: by member) and are skipped, so the page asks for that many more.
            const qsizetype want = std::max(1, std::min(max - n, 5000));
            const qsizetype limit = want + qsizetype(m_atLastScore.size());
            const Reply page = m_connection.command(
                {"ZRANGEBYSCORE", m_key, m_fromScore, "+inf", "WITHSCORES", "LIMIT", "0", QByteArray::number(limit)});
            const qsizetype entries = page.size() / 2;
            int taken = 0;
            for (qsizetype i = 0; i < entries; ++i) {
                const QByteArray member = page[2 * i].bytes();
                const QByteArray scoreText = page[2 * i + 1].bytes();
                bool ok = false;
                const double score = scoreText.toDouble(&ok);
                if (scoreText != m_lastScoreText) {
                    m_atLastScore.clear();
                    m_lastScoreText = scoreText;
                }
                if (!m_atLastScore.insert(member).second)
                    continue; // read with the previous page
                ++taken;
                const qint64 us = ok ? scoreToUs(score, m_keyUnit) : -1;
                if (us < 0 || us > kMaxNowUs) {
                    ++m_skipped;
                    continue;
                }
                out.push_back({us, m_key, m_ownFormat ? ticketCost(member) : 0});
                ++n;
                ++m_requests;
            }
            if (entries > 0)
                m_fromScore = m_lastScoreText;
            if (entries < limit || taken == 0) { // the page reached the end: this key is done
                m_key = QByteArray();
                ++m_keysDone;
            }
        }
        return n > 0;
    }

    QString description() const override
    {
        QString d = QStringLiteral("logs of %1: %2 requests of %3 keys").arg(displayKey(m_glob), grouped(m_requests), grouped(m_keysDone));
        if (m_skipped > 0)
            d += QStringLiteral(" (%1 entries with scores that are no time skipped)").arg(grouped(m_skipped));
        return d;
    }
    bool admittedOnly() const override { return true; }
    double progress() const override
    {
        if (m_done)
            return 1.0;
        return m_dbsize <= 0 ? 0.0 : std::min(0.99, double(m_scanner.scanned() + m_listScanner.scanned()) / double(2 * m_dbsize));
    }

private:
    bool nextKey()
    {
        while (m_pending.empty()) {
            const bool logsDone = m_scanner.atEnd();
            if (logsDone && m_listScanner.atEnd()) {
                m_done = true;
                return false;
            }
            for (KeyRecord &r : logsDone ? m_listScanner.nextPage() : m_scanner.nextPage()) {
                if (r.type == "list") {
                    if (r.kind.format == KeyFormat::Library && r.kind.algorithm() == Algorithm::SlidingLog)
                        m_pending.push_back(std::move(r)); // a list that is a log of times
                    continue;
                }
                const bool libraryLog =
                    r.kind.format == KeyFormat::Library && r.kind.algorithm() == Algorithm::SlidingLog && r.type == "zset";
                if (r.kind.format != KeyFormat::SlidingLog && r.kind.format != KeyFormat::ForeignSlidingLog && !libraryLog)
                    continue; // a sorted set that is not a limiter log (rolling-rate-limiter's is one)
                m_pending.push_back(std::move(r));
            }
            std::sort(m_pending.begin(), m_pending.end(), [](const KeyRecord &a, const KeyRecord &b) { return a.key > b.key; });
        }
        KeyRecord r = std::move(m_pending.back());
        m_pending.pop_back();
        m_key = r.key;
        m_listKey = r.type == "list";
        if (m_listKey) {
            // Newest first, float Unix seconds; at most the limit's worth of entries (the
            // library trims the list to it).
            m_listTimes.clear();
            m_listAt = 0;
            const Reply all = m_connection.command({"LRANGE", m_key, "0", "-1"});
            for (qsizetype i = qsizetype(all.size()) - 1; i >= 0; --i) {
                bool ok = false;
                const double seconds = all[size_t(i)].bytes().toDouble(&ok);
                const qint64 us = ok ? scoreToUs(seconds, ScoreUnit::Seconds) : -1;
                if (us < 0 || us > kMaxNowUs)
                    ++m_skipped;
                else
                    m_listTimes.push_back(us);
            }
            std::sort(m_listTimes.begin(), m_listTimes.end());
            return true;
        }
        m_ownFormat = r.kind.format == KeyFormat::SlidingLog;
        m_keyUnit = m_unit != ScoreUnit::Auto ? m_unit : (m_ownFormat ? ScoreUnit::Microseconds : r.kind.unit);
        if (m_keyUnit == ScoreUnit::Auto)
            m_keyUnit = ScoreUnit::Microseconds;
        m_fromScore = "-inf";
        m_lastScoreText.clear();
        m_atLastScore.clear();
        return true;
    }

    Connection &m_connection;
    QByteArray m_glob;
    ScoreUnit m_unit;
    KeyScanner m_scanner;
    KeyScanner m_listScanner;         // after the sorted sets: lists that are logs
    std::vector<KeyRecord> m_pending; // sorted, the next key last
    bool m_listKey = false;
    std::vector<qint64> m_listTimes;
    size_t m_listAt = 0;
    QByteArray m_key;
    bool m_ownFormat = false;
    ScoreUnit m_keyUnit = ScoreUnit::Microseconds;
    QByteArray m_fromScore;
    QByteArray m_lastScoreText;
    std::set<QByteArray> m_atLastScore;
    qint64 m_dbsize = 0;
    qint64 m_requests = 0;
    qint64 m_keysDone = 0;
    qint64 m_skipped = 0;
    bool m_done = false;
};

// ---- burst timelines ---------------------------------------------------------------------

class BurstTimelineTraceReader : public TraceReader {
public:
    // file: open for reading; name: what messages call it.
    BurstTimelineTraceReader(QFile &file, const QString &name, const QByteArray &key, qint64 startUs)
        : m_name(name)
        , m_key(key)
        , m_startUs(startUs)
    {
        if (key.isEmpty())
            throw UsageError(QStringLiteral("a burst timeline needs the key to replay it on"));
        if (startUs < 0 || startUs > kMaxNowUs)
            throw UsageError(QStringLiteral("the burst's start must be in 0..2^52 µs"));
        qint64 line = 0;
        qint64 previousEndUs = 0;
        while (!file.atEnd()) {
            QByteArray text = file.readLine().trimmed();
            ++line;
            if (line == 1 && text.startsWith(kUtf8Bom))
                text.remove(0, 3);
            if (text.isEmpty())
                continue;
            if (line == 1 && text.startsWith("elapsed_ms"))
                continue;
            const QList<QByteArray> f = text.split(',');
            const auto fail = [&](const QString &why) {
                throw UsageError(QStringLiteral("%1 line %2: %3 (a burst timeline has elapsed_ms,allowed,denied,errors,unknown)")
                                     .arg(m_name)
                                     .arg(line)
                                     .arg(why));
            };
            if (f.size() != 5)
                fail(QStringLiteral("expected 5 fields, found %1").arg(f.size()));
            bool ok = false;
            const double elapsedMs = f[0].toDouble(&ok);
            if (!ok || !(elapsedMs >= 0) || elapsedMs > 1e12)
                fail(QStringLiteral("'%1' is not a time in ms").arg(escapeControls(QString::fromUtf8(f[0].left(32)))));
            Slice s;
            s.fromUs = previousEndUs;
            s.toUs = std::llround(elapsedMs * 1000);
            if (s.toUs < s.fromUs)
                fail(QStringLiteral("the slices go back in time"));
            // A count of at most 10^9 (far more than a slice of any burst): their sums cannot
            // overflow, nor can next()'s spreading of a slice's requests.
            qint64 n[4] = {};
            for (int i = 0; i < 4; ++i) {
                if (!digitsOnly(f[i + 1]) || f[i + 1].size() > 10 || (n[i] = f[i + 1].toLongLong(&ok), !ok))
                    fail(QStringLiteral("'%1' is not a count").arg(escapeControls(QString::fromUtf8(f[i + 1].left(32)))));
                if (n[i] > kMaxSliceCount)
                    fail(QStringLiteral("count %1 is above 10^9").arg(n[i]));
            }
            s.requests = n[0] + n[1] + n[3]; // errors never reached the limiter; unknown may have
            // The total is bounded before anything is expanded: a few bytes of counts would
            // otherwise stand for hours of replay.
            if (m_total + s.requests > kMaxTimelineRequests)
                fail(QStringLiteral("the slices up to here hold %1 requests, more than a replay takes (%2 at most)")
                         .arg(grouped(m_total + s.requests), grouped(kMaxTimelineRequests)));
            if (m_startUs + s.toUs > kMaxNowUs)
                fail(QStringLiteral("the burst runs beyond 2^52 µs"));
            previousEndUs = s.toUs;
            m_total += s.requests;
            if (s.requests > 0)
                m_slices.push_back(s);
        }
    }

    bool next(std::vector<TraceRequest> &out, int max) override
    {
        int n = 0;
        while (n < max && m_slice < m_slices.size()) {
            const Slice &s = m_slices[m_slice];
            // Evenly over (fromUs, toUs]: the i-th of k at from + (i + 1) * span / k.
            // span * k / requests without the product: (span / requests) * k plus the remainder's
            // share, below requests^2 <= (3 * 10^9)^2.
            const qint64 span = s.toUs - s.fromUs, k = m_inSlice + 1;
            const qint64 t = m_startUs + s.fromUs + (span / s.requests) * k + (span % s.requests) * k / s.requests;
            out.push_back({t, m_key, 0});
            ++n;
            ++m_emitted;
            if (++m_inSlice == s.requests) {
                m_inSlice = 0;
                ++m_slice;
            }
        }
        return n > 0;
    }

    QString description() const override
    {
        return QStringLiteral("burst timeline %1 (%2 requests on %3, spread evenly within each slice)")
            .arg(m_name, grouped(m_total), displayKey(m_key));
    }
    bool admittedOnly() const override { return false; }
    double progress() const override { return m_total == 0 ? 1.0 : double(m_emitted) / double(m_total); }

private:
    static constexpr qint64 kMaxSliceCount = 1000000000;
    struct Slice {
        qint64 fromUs = 0, toUs = 0, requests = 0;
    };
    QString m_name;
    QByteArray m_key;
    qint64 m_startUs;
    std::vector<Slice> m_slices;
    size_t m_slice = 0;
    qint64 m_inSlice = 0;
    qint64 m_total = 0;
    qint64 m_emitted = 0;
};

// ---- the timeline ------------------------------------------------------------------------

// Bin widths, each a multiple of the one before, so bins merge exactly when the trace grows.
constexpr qint64 kBinWidthsUs[] = {
    1000LL,          2000LL,          10000LL,          20000LL,           100000LL,          200000LL,           1000000LL,
    2000000LL,       10000000LL,      20000000LL,       60000000LL,        120000000LL,       600000000LL,        1200000000LL,
    3600000000LL,    7200000000LL,    21600000000LL,    43200000000LL,     86400000000LL,     172800000000LL,     604800000000LL,
    2419200000000LL, 9676800000000LL, 38707200000000LL, 154828800000000LL, 619315200000000LL, 2477260800000000LL, 9909043200000000LL};

qint64 floorDiv(qint64 a, qint64 b)
{
    qint64 q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        --q;
    return q;
}

class Timeline {
public:
    void add(qint64 timeUs, bool allowed)
    {
        qint64 i = floorDiv(timeUs, width());
        while (!m_bins.empty() && (std::max(i, m_bins.rbegin()->first) - std::min(i, m_bins.begin()->first)) >= kMaxSimBins) {
            widen();
            i = floorDiv(timeUs, width());
        }
        auto &b = m_bins[i];
        (allowed ? b.first : b.second) += 1;
    }
    void widenTo(size_t level)
    {
        while (m_level < level)
            widen();
    }
    size_t level() const { return m_level; }
    qint64 width() const { return kBinWidthsUs[m_level]; }
    std::vector<SimBin> bins(qint64 fromIndex, qint64 toIndex) const
    {
        std::vector<SimBin> out;
        for (qint64 i = fromIndex; i <= toIndex; ++i) {
            const auto it = m_bins.find(i);
            out.push_back({i * width(), it == m_bins.end() ? 0 : it->second.first, it == m_bins.end() ? 0 : it->second.second});
        }
        return out;
    }

private:
    void widen()
    {
        if (m_level + 1 >= std::size(kBinWidthsUs))
            return;
        const qint64 from = width();
        ++m_level;
        std::map<qint64, std::pair<qint64, qint64>> merged;
        for (const auto &[i, b] : m_bins) {
            auto &m = merged[floorDiv(i * from, width())];
            m.first += b.first;
            m.second += b.second;
        }
        m_bins = std::move(merged);
    }
    size_t m_level = 0;
    std::map<qint64, std::pair<qint64, qint64>> m_bins;
};

// ---- the replay --------------------------------------------------------------------------

struct SpecState {
    SimSpecResult result;
    Timeline timeline;
    SimKeyResult key; // the key being replayed
    qint64 runStartUs = 0, runLength = 0;
    QByteArray prefix; // the spec's keys in the sandbox
};

void closeKey(SpecState &s, int index, const SimOptions &options)
{
    if (s.key.requests == 0)
        return;
    s.result.keys += 1;
    if (s.key.denied > 0)
        s.result.keysDenied += 1;
    if (options.onKey)
        options.onKey(index, s.key);
    s.key = SimKeyResult();
    s.runLength = 0;
}

void record(SpecState &s, const TraceRequest &r, bool allowed)
{
    SimKeyResult &k = s.key;
    if (k.requests == 0)
        k.key = r.key;
    ++k.requests;
    ++s.result.requests;
    if (allowed) {
        ++k.allowed;
        ++s.result.allowed;
        s.runLength = 0;
    } else {
        ++k.denied;
        ++s.result.denied;
        if (!k.firstDenialUs)
            k.firstDenialUs = r.timeUs;
        if (s.runLength == 0)
            s.runStartUs = r.timeUs;
        ++s.runLength;
        if (s.runLength > k.longestDeniedRun || (s.runLength == k.longestDeniedRun && r.timeUs - s.runStartUs > k.longestDeniedUs)) {
            k.longestDeniedRun = s.runLength;
            k.longestDeniedUs = r.timeUs - s.runStartUs;
        }
    }
    s.timeline.add(r.timeUs, allowed);
}

} // namespace

QString traceTimeUnitName(TraceTimeUnit unit)
{
    switch (unit) {
    case TraceTimeUnit::Microseconds:
        return QStringLiteral("us");
    case TraceTimeUnit::Milliseconds:
        return QStringLiteral("ms");
    case TraceTimeUnit::Iso8601:
        return QStringLiteral("iso");
    case TraceTimeUnit::Auto:
        break;
    }
    return QStringLiteral("auto");
}

TraceTimeUnit parseTraceTimeUnit(const QString &name)
{
    for (TraceTimeUnit u : {TraceTimeUnit::Auto, TraceTimeUnit::Microseconds, TraceTimeUnit::Milliseconds, TraceTimeUnit::Iso8601})
        if (name == traceTimeUnitName(u))
            return u;
    throw UsageError(QStringLiteral("unknown time unit '%1' (choose us, ms, iso or auto)").arg(escapeControls(name.left(64))));
}

std::unique_ptr<TraceReader> openCsvTrace(const QString &path, TraceTimeUnit unit, qint64 maxCost)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw UsageError(QStringLiteral("cannot read the trace %1: %2").arg(path, file.errorString()));
    return openCsvTrace(file, QFileInfo(path).fileName(), unit, maxCost);
}

std::unique_ptr<TraceReader> openCsvTrace(QFile &file, const QString &name, TraceTimeUnit unit, qint64 maxCost)
{
    return std::make_unique<CsvTraceReader>(file, name, unit, maxCost);
}

std::unique_ptr<TraceReader> openLogKeysTrace(Connection &inspected, const QByteArray &glob, ScoreUnit unit)
{
    return std::make_unique<LogKeysTraceReader>(inspected, glob, unit);
}

std::unique_ptr<TraceReader> openBurstTimelineTrace(const QString &path, const QByteArray &key, qint64 startUs)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw UsageError(QStringLiteral("cannot read the burst timeline %1: %2").arg(path, file.errorString()));
    return openBurstTimelineTrace(file, QFileInfo(path).fileName(), key, startUs);
}

std::unique_ptr<TraceReader> openBurstTimelineTrace(QFile &file, const QString &name, const QByteArray &key, qint64 startUs)
{
    return std::make_unique<BurstTimelineTraceReader>(file, name, key, startUs);
}

SimResult simulate(TraceReader &trace, const SimOptions &options)
{
    if (options.specs.empty())
        throw UsageError(QStringLiteral("nothing to simulate: no limits given"));
    for (const LimitSpec &spec : options.specs)
        spec.validate();
    const int depth = std::clamp(options.pipeline, 1, 100000);

    SandboxServer::Config config;
    if (!options.serverExecutable.isEmpty())
        config.executable = options.serverExecutable;
    config.configLines = {QStringLiteral("save \"\""), QStringLiteral("appendonly no")};
    SandboxServer sandbox(config);
    sandbox.start();
    Connection connection(sandbox.options());
    connection.connect();

    std::vector<SpecState> specs(options.specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
        specs[i].result.spec = options.specs[i];
        specs[i].prefix = "s" + QByteArray::number(qulonglong(i)) + ':';
        LimiterScript::forAlgorithm(options.specs[i].algorithm).load(connection);
    }

    SimResult result;
    bool any = false;
    const int batchSize = std::max(1, depth / int(specs.size()));

    // Two batches in flight: the next one is sent before the replies of the one before are
    // read, so the sandbox never waits for this side. A batch keeps its requests alive until
    // its replies are in; per command, the spec and the request (null: a finished key's UNLINK).
    struct Batch {
        std::vector<TraceRequest> requests;
        std::vector<std::pair<int, int>> sent; // spec, index in requests (-1: cleanup)
    };
    std::deque<Batch> inFlight;
    QByteArray sendKey, readKey; // the key being sent, and the key whose replies are being read
    bool sending = false, reading = false;

    const auto collect = [&] {
        Batch &b = inFlight.front();
        for (const auto &[spec, index] : b.sent) {
            const Reply reply = connection.receive();
            if (index < 0) {
                if (reply.isError())
                    throw ReplyError(reply.text());
                continue;
            }
            const TraceRequest &request = b.requests[size_t(index)];
            if (!reading || request.key != readKey) { // the previous key is done under every spec
                if (reading)
                    for (size_t s = 0; s < specs.size(); ++s)
                        closeKey(specs[s], int(s), options);
                readKey = request.key;
                reading = true;
            }
            // The sandbox is private and the scripts were loaded: any error is a real one.
            const Decision d = Decision::fromReply(reply);
            record(specs[size_t(spec)], request, d.allowed);
            if (options.onDecision)
                options.onDecision(spec, request, d);
        }
        inFlight.pop_front();
    };

    for (;;) {
        if (options.onProgress && !options.onProgress(trace.progress())) {
            result.cancelled = true;
            break;
        }
        Batch batch;
        if (!trace.next(batch.requests, batchSize))
            break;
        std::vector<Command> commands;
        commands.reserve(batch.requests.size() * specs.size() + specs.size());
        for (int i = 0; i < int(batch.requests.size()); ++i) {
            const TraceRequest &r = batch.requests[size_t(i)];
            if (r.timeUs < 0 || r.timeUs > kMaxNowUs)
                throw UsageError(QStringLiteral("a request of %1 is at %2 µs, outside 0..2^52").arg(displayKey(r.key)).arg(r.timeUs));
            if (!any) {
                result.firstUs = result.lastUs = r.timeUs;
                any = true;
            }
            result.firstUs = std::min(result.firstUs, r.timeUs);
            result.lastUs = std::max(result.lastUs, r.timeUs);
            if (!sending || r.key != sendKey) {
                if (sending) // the sandbox runs commands in order: the previous key's state is done
                    for (size_t s = 0; s < specs.size(); ++s) {
                        commands.push_back({"UNLINK", specs[s].prefix + sendKey});
                        batch.sent.push_back({int(s), -1});
                    }
                sendKey = r.key;
                sending = true;
            }
            for (size_t s = 0; s < specs.size(); ++s) {
                LimitSpec spec = options.specs[s];
                if (r.cost > 0)
                    spec.cost = r.cost;
                if (spec.cost > spec.limit)
                    throw UsageError(QStringLiteral("a request of %1 costs %2, above the limit %3 of %4: it could never be admitted")
                                         .arg(displayKey(r.key))
                                         .arg(spec.cost)
                                         .arg(spec.limit)
                                         .arg(describeSpec(options.specs[s])));
                const QByteArray key = specs[s].prefix + r.key;
                commands.push_back(LimiterScript::forAlgorithm(spec.algorithm)
                                       .command(key, Limiter::arguments(key, spec, r.timeUs, false), false, ScriptCalls::Evalsha));
                batch.sent.push_back({int(s), i});
            }
        }
        connection.send(commands);
        inFlight.push_back(std::move(batch));
        if (inFlight.size() > 1)
            collect();
    }
    while (!inFlight.empty())
        collect();
    if (reading && !result.cancelled)
        for (size_t s = 0; s < specs.size(); ++s)
            closeKey(specs[s], int(s), options);

    // One bin width for every spec: the widest any of them needed.
    size_t level = 0;
    for (const SpecState &s : specs)
        level = std::max(level, s.timeline.level());
    for (SpecState &s : specs) {
        s.timeline.widenTo(level);
        if (any)
            s.result.timeline = s.timeline.bins(floorDiv(result.firstUs, s.timeline.width()), floorDiv(result.lastUs, s.timeline.width()));
        result.binUs = s.timeline.width();
        result.specs.push_back(std::move(s.result));
    }
    result.traceDescription = trace.description();
    result.admittedOnly = trace.admittedOnly();
    sandbox.stop();
    return result;
}

QString describeSpec(const LimitSpec &spec)
{
    QString text = QStringLiteral("%1 per %2 %3").arg(grouped(spec.limit), formatDurationUs(spec.windowUs), algorithmLabel(spec));
    if (spec.cost != 1)
        text += QStringLiteral(", cost %1").arg(spec.cost);
    return text;
}

QString simOutcomeText(const SimSpecResult &r)
{
    if (r.denied == 0)
        return QStringLiteral("no key throttled, all %1 requests allowed").arg(grouped(r.requests));
    return QStringLiteral("%1 of %2 keys throttled, %3 of %4 requests denied (%5 %)")
        .arg(grouped(r.keysDenied), grouped(r.keys), grouped(r.denied), grouped(r.requests))
        .arg(100.0 * double(r.denied) / double(std::max<qint64>(1, r.requests)), 0, 'f', 1);
}

LimitSpec parseCompareSpec(const QString &text, qint64 cost)
{
    static const QRegularExpression shape(
        QRegularExpression::anchoredPattern(QStringLiteral("([a-z-]+):([0-9]+)/([^/\\s]+)(?:/([0-9]+))?")));
    const auto m = shape.match(text);
    const QString shown = escapeControls(text.left(64));
    if (!m.hasMatch())
        throw UsageError(
            QStringLiteral("--compare takes ALGO:LIMIT/WINDOW such as token-bucket:40/10s (sliding-buckets:LIMIT/WINDOW/B with its "
                           "sub-buckets), not '%1'")
                .arg(shown));
    LimitSpec spec;
    spec.algorithm = parseAlgorithm(m.captured(1));
    bool ok = m.captured(2).size() <= 13;
    spec.limit = ok ? m.captured(2).toLongLong(&ok) : 0;
    if (!ok || spec.limit < 1 || spec.limit > kMaxLimit)
        throw UsageError(QStringLiteral("--compare %1: the limit must be an integer in 1..10^12").arg(shown));
    spec.windowUs = parseDurationUs(m.captured(3));
    if (m.hasCaptured(4)) {
        if (spec.algorithm != Algorithm::SlidingBuckets)
            throw UsageError(QStringLiteral("--compare %1: only sliding-buckets takes sub-buckets (/B)").arg(shown));
        ok = m.captured(4).size() <= 5;
        spec.buckets = ok ? m.captured(4).toInt(&ok) : 0;
        if (!ok || spec.buckets < kMinBuckets || spec.buckets > kMaxBuckets)
            throw UsageError(
                QStringLiteral("--compare %1: the sub-buckets must be an integer in %2..%3").arg(shown).arg(kMinBuckets).arg(kMaxBuckets));
    }
    spec.cost = cost;
    try {
        spec.validate();
    } catch (const UsageError &e) {
        throw UsageError(QStringLiteral("--compare %1: %2").arg(shown, e.message()));
    }
    return spec;
}

} // namespace ratescope
