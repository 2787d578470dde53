#include "load/latencyhistogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace ratescope {

namespace {

constexpr int kBucketCount = int((40 - LatencyHistogram::kSubBucketBits + 1) * LatencyHistogram::kSubBuckets);

} // namespace

LatencyHistogram::LatencyHistogram()
    : m_counts(size_t(kBucketCount), 0)
{
}

// Below 2 * kSubBuckets the index is the value. Above, each power of two [2^k, 2^(k+1)) is
// split into kSubBuckets equal buckets: the top kSubBucketBits + 1 bits of the value.
int LatencyHistogram::bucketIndex(qint64 us)
{
    us = std::clamp<qint64>(us, 0, kMaxTrackableUs);
    if (us < kExactBelowUs)
        return int(us);
    const int shift = int(std::bit_width(quint64(us))) - 1 - kSubBucketBits;
    return int(qint64(shift) * kSubBuckets + (us >> shift));
}

qint64 LatencyHistogram::bucketLow(int index)
{
    if (index < kExactBelowUs)
        return index;
    const int shift = int(index / kSubBuckets) - 1;
    return (index - shift * kSubBuckets) << shift;
}

qint64 LatencyHistogram::bucketHigh(int index)
{
    if (index < kExactBelowUs)
        return index;
    const int shift = int(index / kSubBuckets) - 1;
    return bucketLow(index) + (qint64(1) << shift) - 1;
}

qint64 LatencyHistogram::lowestEquivalent(qint64 us)
{
    return bucketLow(bucketIndex(us));
}

qint64 LatencyHistogram::highestEquivalent(qint64 us)
{
    return bucketHigh(bucketIndex(us));
}

void LatencyHistogram::record(qint64 us, qint64 count)
{
    if (count <= 0)
        return;
    us = std::max<qint64>(us, 0);
    m_counts[size_t(bucketIndex(us))] += count;
    m_min = m_count ? std::min(m_min, us) : us;
    m_max = m_count ? std::max(m_max, us) : us;
    m_count += count;
    m_sum += us * count;
}

void LatencyHistogram::merge(const LatencyHistogram &other)
{
    if (!other.m_count)
        return;
    for (size_t i = 0; i < m_counts.size(); ++i)
        m_counts[i] += other.m_counts[i];
    m_min = m_count ? std::min(m_min, other.m_min) : other.m_min;
    m_max = m_count ? std::max(m_max, other.m_max) : other.m_max;
    m_count += other.m_count;
    m_sum += other.m_sum;
}

void LatencyHistogram::clear()
{
    std::fill(m_counts.begin(), m_counts.end(), 0);
    m_count = m_sum = m_min = m_max = 0;
}

qint64 LatencyHistogram::percentile(double percent) const
{
    if (!m_count)
        return 0;
    percent = std::clamp(percent, 0.0, 100.0);
    // Nearest rank; the small epsilon keeps 99.9% of 1000 at rank 999, not 1000, despite
    // binary fractions.
    const qint64 rank = std::clamp<qint64>(qint64(std::ceil(percent / 100.0 * double(m_count) - 1e-9)), 1, m_count);
    qint64 seen = 0;
    for (size_t i = 0; i < m_counts.size(); ++i) {
        seen += m_counts[i];
        if (seen >= rank)
            return std::clamp(bucketHigh(int(i)), m_min, m_max);
    }
    return m_max;
}

std::vector<LatencyHistogram::Bar> LatencyHistogram::bars(int maxBars) const
{
    std::vector<Bar> result;
    if (!m_count || maxBars < 1)
        return result;
    // Edges from min to max + 1, log-spaced, whole microseconds, strictly increasing.
    const double lo = double(std::max<qint64>(m_min, 1));
    const double hi = double(m_max + 1);
    std::vector<qint64> edges{m_min};
    for (int k = 1; k <= maxBars; ++k) {
        const qint64 edge = k == maxBars ? m_max + 1 : qint64(std::llround(lo * std::pow(hi / lo, double(k) / maxBars)));
        if (edge > edges.back())
            edges.push_back(edge);
    }
    if (edges.back() != m_max + 1)
        edges.push_back(m_max + 1);
    for (size_t j = 0; j + 1 < edges.size(); ++j)
        result.push_back({edges[j], edges[j + 1] - 1, 0});
    for (size_t i = 0; i < m_counts.size(); ++i) {
        if (!m_counts[i])
            continue;
        const qint64 v = std::clamp(bucketLow(int(i)), m_min, m_max);
        const auto bar = std::upper_bound(edges.begin(), edges.end(), v) - edges.begin() - 1;
        result[size_t(bar)].count += m_counts[i];
    }
    return result;
}

} // namespace ratescope
