#include "reset.h"

#include "connection.h"
#include "errors.h"
#include "glob.h"
#include "keyformat.h"

namespace ratescope {

namespace {

void sortUnique(QByteArrayList &keys)
{
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
}

constexpr int kScanCount = 1000;
constexpr qint64 kMaxScanRounds = 100000000; // a bound, not a limit anyone reaches

template<typename Visit>
void scanAll(Connection &c, const QByteArray &pattern, Visit visit)
{
    QByteArray cursor = "0";
    qint64 rounds = 0;
    do {
        const Reply page = c.command({"SCAN", cursor, "MATCH", pattern, "COUNT", QByteArray::number(kScanCount)});
        cursor = page[0].bytes();
        QByteArrayList keys;
        for (const Reply &k : page[1].elements())
            keys << k.bytes();
        visit(keys);
    } while (cursor != "0" && ++rounds < kMaxScanRounds);
}

} // namespace

Resetter::Resetter(Connection &connection, QString ns) : m_connection(connection), m_ns(ns.toUtf8()) {}

QByteArrayList Resetter::counterWindows(const QByteArray &base)
{
    QByteArrayList windows;
    scanAll(m_connection, escapeGlob(base) + ":*", [&](const QByteArrayList &keys) {
        for (const QByteArray &k : keys) {
            QByteArray b;
            qint64 id = 0;
            if (splitCounterWindowKey(k, &b, &id) && b == base)
                windows << k;
        }
    });
    return windows;
}

ResetPlan Resetter::planKeys(const QByteArrayList &keys)
{
    ResetPlan plan;
    plan.requested = keys;
    if (keys.isEmpty())
        throw UsageError(QStringLiteral("name at least one key, or give --match"));
    std::vector<Command> exists;
    for (const QByteArray &k : keys) {
        if (k.isEmpty())
            throw UsageError(QStringLiteral("an empty key name cannot be reset"));
        exists.push_back({"EXISTS", k});
    }
    const auto replies = m_connection.pipeline(exists);
    for (qsizetype i = 0; i < keys.size(); ++i) {
        if (replies[size_t(i)].toInteger() > 0)
            plan.keys << keys[i];
        else
            plan.keys << counterWindows(keys[i]);
    }
    sortUnique(plan.keys);
    return plan;
}

ResetPlan Resetter::planPattern(const QByteArray &pattern, const std::function<void(qint64)> &progress)
{
    if (pattern.isEmpty())
        throw UsageError(QStringLiteral("the pattern must not be empty"));
    ResetPlan plan;
    plan.pattern = pattern;
    const bool metadataNamed = !m_ns.isEmpty() && pattern.startsWith(m_ns);
    qint64 scanned = 0;
    scanAll(m_connection, pattern, [&](const QByteArrayList &keys) {
        for (const QByteArray &k : keys)
            if (metadataNamed || m_ns.isEmpty() || !k.startsWith(m_ns))
                plan.keys << k;
        scanned += keys.size();
        if (progress)
            progress(scanned);
    });
    sortUnique(plan.keys); // SCAN may return a key twice
    return plan;
}

qint64 Resetter::execute(const ResetPlan &plan)
{
    qint64 deleted = 0;
    for (qsizetype first = 0; first < plan.keys.size(); first += 500) {
        Command unlink{"UNLINK"};
        unlink += plan.keys.mid(first, 500);
        deleted += m_connection.command(unlink).toInteger();
    }
    return deleted;
}

} // namespace ratescope
