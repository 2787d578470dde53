// Latency distribution of a burst: a log-linear histogram of whole microseconds.
#pragma once

#include <QtGlobal>

#include <vector>

namespace ratescope {

// Precision, the contract the tests check:
// - values below kExactBelowUs (2048 us) are kept exactly;
// - above, a value v lands in a bucket [low, high] with high - low + 1 <= v / 1024, so a
//   reported percentile p satisfies true <= p <= true * (1 + 1/1024) (about 0.1%);
// - percentiles use the nearest-rank method (the smallest recorded value with at least
//   p% of the values at or below it) and report the bucket's highest value, clamped to the
//   exact maximum: a reported latency is never better than the real one;
// - min, max and the mean are exact; values above kMaxTrackableUs (about 12.7 days) are
//   counted in the top bucket.
// Fixed size (about 250 KB), no allocation when recording: one per thread, merged at the end.
class LatencyHistogram {
public:
    static constexpr int kSubBucketBits = 10;
    static constexpr qint64 kSubBuckets = qint64(1) << kSubBucketBits; // 1024
    static constexpr qint64 kExactBelowUs = 2 * kSubBuckets;           // 2048
    static constexpr qint64 kMaxTrackableUs = (qint64(1) << 40) - 1;

    // A range of the distribution for drawing: values in [lowUs, highUs].
    struct Bar {
        qint64 lowUs = 0;
        qint64 highUs = 0;
        qint64 count = 0;
    };

    LatencyHistogram();

    void record(qint64 us, qint64 count = 1);
    void merge(const LatencyHistogram &other);
    void clear();

    qint64 count() const { return m_count; }
    qint64 min() const { return m_count ? m_min : 0; }
    qint64 max() const { return m_count ? m_max : 0; }
    double mean() const { return m_count ? double(m_sum) / double(m_count) : 0.0; }
    // percent in [0, 100]; 0 when empty.
    qint64 percentile(double percent) const;

    // At most `maxBars` bars between min and max, spaced evenly on a log scale (latency
    // tails are long), each with the number of values in it. Empty when nothing is recorded.
    std::vector<Bar> bars(int maxBars) const;

    // The range of values that share v's bucket.
    static qint64 lowestEquivalent(qint64 us);
    static qint64 highestEquivalent(qint64 us);

private:
    static int bucketIndex(qint64 us);
    static qint64 bucketLow(int index);
    static qint64 bucketHigh(int index);

    std::vector<qint64> m_counts;
    qint64 m_count = 0;
    qint64 m_sum = 0;
    qint64 m_min = 0;
    qint64 m_max = 0;
};

} // namespace ratescope
