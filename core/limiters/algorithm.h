// The six limiter algorithms, their CLI names, and the limits every policy must respect.
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace ratescope {

enum class Algorithm { SlidingLog, SlidingCounter, FixedWindow, TokenBucket, Gcra, SlidingBuckets };

inline constexpr Algorithm kAllAlgorithms[] = {Algorithm::SlidingLog,  Algorithm::SlidingCounter, Algorithm::FixedWindow,
                                               Algorithm::TokenBucket, Algorithm::Gcra,           Algorithm::SlidingBuckets};

// "sliding-log", "sliding-counter", "fixed-window", "token-bucket", "gcra", "sliding-buckets"
QString algorithmName(Algorithm a);
QStringList algorithmNames();
// The algorithm with what else defines it: "sliding-buckets (60 x 1s)"; the name otherwise.
struct LimitSpec;
QString algorithmLabel(const LimitSpec &spec);
// Throws UsageError naming the valid choices.
Algorithm parseAlgorithm(const QString &name);
// The Redis type the algorithm's script stores: "zset" or "hash".
QString storageType(Algorithm a);

// Bounds shared by the C++ validation and the scripts' own checks.
inline constexpr qint64 kMaxLimit = 1000000000000LL;        // 10^12
inline constexpr qint64 kMinWindowUs = 1000;                // 1 ms
inline constexpr qint64 kMaxWindowUs = 366LL * 86400000000; // 366 days
inline constexpr qint64 kMaxNowUs = 4503599627370496LL;     // 2^52 (year 2112): the scripts' largest now
// sliding-buckets: sub-buckets per window (at most the window in us: a bucket is at least 1 us wide).
inline constexpr int kMinBuckets = 2;
inline constexpr int kMaxBuckets = 3600;
inline constexpr int kDefaultBuckets = 60;

// What a limiter enforces: `limit` units of cost per `windowUs`, each request costing `cost`.
struct LimitSpec {
    Algorithm algorithm = Algorithm::SlidingLog;
    qint64 limit = 0;
    qint64 windowUs = 0;
    qint64 cost = 1;
    int buckets = kDefaultBuckets; // sliding-buckets only: sub-buckets per window

    // Throws UsageError with a message naming the bad value.
    void validate() const;
    bool operator==(const LimitSpec &) const = default;
};

} // namespace ratescope
