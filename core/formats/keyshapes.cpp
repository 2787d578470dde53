#include "formats/keyshapes.h"

#include <charconv>

namespace ratescope {

qint64 windowOfIndex(qint64 index, qint64 now, std::initializer_list<qint64> lengths)
{
    if (index <= 0)
        return 0;
    for (qint64 w : lengths) {
        const qint64 current = now / w;
        if (index == current || index == current - 1)
            return w;
    }
    return 0;
}

namespace {
// Window lengths people choose; anything else would make every integer look like one. Up
// to 3 hours: the ids of longer windows are numbers of five digits or fewer (a day's is
// about 20,000 now), which application keys end in all the time ("user:20781"); a
// counter of a longer window is recognised when limits name it (a policy, or flags).
constexpr std::initializer_list<qint64> kUsualCounterWindows = {1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800};
} // namespace

std::initializer_list<qint64> usualCounterWindowSeconds()
{
    return kUsualCounterWindows;
}

qint64 inferWindowSeconds(qint64 id, qint64 nowSeconds)
{
    return windowOfIndex(id, nowSeconds, kUsualCounterWindows);
}

QByteArray counterWindowKey(const QByteArray &base, qint64 id)
{
    // Made in place, one allocation: a sweep of `top` makes one or two per counter window.
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, id).ptr;
    QByteArray key;
    key.reserve(base.size() + 1 + (end - digits));
    key.append(base).append(':').append(digits, end - digits);
    return key;
}

std::pair<QByteArray, QByteArray> counterWindowKeys(const QByteArray &base, qint64 windowUs, qint64 nowUs)
{
    const qint64 id = nowUs / windowUs;
    return {counterWindowKey(base, id), counterWindowKey(base, id - 1)};
}

bool splitCounterWindowKey(const QByteArray &key, QByteArray *base, qint64 *id)
{
    const qsizetype colon = key.lastIndexOf(':');
    if (colon <= 0 || colon == key.size() - 1 || key.size() - colon > 19)
        return false;
    for (qsizetype i = colon + 1; i < key.size(); ++i)
        if (key[i] < '0' || key[i] > '9')
            return false;
    *base = key.left(colon);
    *id = key.mid(colon + 1).toLongLong();
    return true;
}

qint64 shardShare(qint64 limit, int shards, int i)
{
    if (shards < 2)
        return limit;
    return limit / shards + (i < limit % shards ? 1 : 0);
}

bool splitShardKey(const QByteArray &key, QByteArray *base, int *n)
{
    const qsizetype colon = key.lastIndexOf(':');
    const qsizetype digits = key.size() - colon - 1;
    if (colon <= 0 || digits < 1 || digits > 4 || (digits > 1 && key[colon + 1] == '0'))
        return false;
    for (qsizetype i = colon + 1; i < key.size(); ++i)
        if (key[i] < '0' || key[i] > '9')
            return false;
    *base = key.left(colon);
    *n = key.mid(colon + 1).toInt();
    return true;
}

} // namespace ratescope
