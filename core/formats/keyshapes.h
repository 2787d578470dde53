// Key shapes that carry a number: a counter window "<base>:<window id>" (one key per clock
// window) and a shard "<base>:<n>" of a sharded limiter (docs/key-formats.md).
#pragma once

#include <QByteArray>

#include <initializer_list>
#include <utility>

namespace ratescope {

// The window length (s) for which `id` = floor(epoch seconds / window) is the current or
// previous window at `nowSeconds`, among the usual window lengths; 0 when none fits.
qint64 inferWindowSeconds(qint64 id, qint64 nowSeconds);
// Those usual window lengths (s), shortest first.
std::initializer_list<qint64> usualCounterWindowSeconds();

// The first of `lengths` (in any unit) for which `index` = floor(now / length) is the current
// or previous window at `now` (the same unit); 0 when none fits. inferWindowSeconds, and the
// readers of other libraries' window indexes, use it.
qint64 windowOfIndex(qint64 index, qint64 now, std::initializer_list<qint64> lengths);

// Splits "<base>:<digits>" into base and id.
bool splitCounterWindowKey(const QByteArray &key, QByteArray *base, qint64 *id);
// The key of a counter window's window `id`: "<base>:<id>".
QByteArray counterWindowKey(const QByteArray &base, qint64 id);
// The keys of a counter window's current and previous windows at `nowUs`: "<base>:<id>",
// "<base>:<id - 1>", id = nowUs / windowUs.
std::pair<QByteArray, QByteArray> counterWindowKeys(const QByteArray &base, qint64 windowUs, qint64 nowUs);

// Shard i's share of a group limit over n shards: limit / n, the first limit % n one more.
qint64 shardShare(qint64 limit, int shards, int i);

// "<base>:<n>" with n a decimal shard number (at most 4 digits, no leading zero but "0"):
// base and n; false otherwise.
bool splitShardKey(const QByteArray &key, QByteArray *base, int *n);

} // namespace ratescope
