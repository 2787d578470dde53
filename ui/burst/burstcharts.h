// The Burst tab's charts: what a running burst admits per 100 ms (with the key's remaining
// quota), the latency distribution of a finished one, and the boundary test's two limiters.
#pragma once

#include "load/boundaryscenario.h"
#include "load/burst.h"

#include "themedchartview.h"

#include <vector>

class QAreaSeries;
class QLineSeries;
class QLogValueAxis;
class QValueAxis;

namespace ratescope::ui {

// A latency as an operator reads it: "850 µs", "1.25 ms", "12.5 ms", "1.20 s".
QString formatLatency(qint64 us);

// Allowed, denied and errors per 100 ms slice as stacked areas, and the key's remaining
// quota (peeked on the side) as a line on a second axis.
class TimelineChart : public ThemedChartView {
    Q_OBJECT
public:
    explicit TimelineChart(QWidget *parent = nullptr);

    // A new burst: empty chart; the remaining-quota axis runs to `limit`; the time axis to
    // at least plannedUs (0: unknown).
    void reset(const QString &title, qint64 limit, qint64 plannedUs);
    // The whole timeline so far and the quota samples (µs since the start, remaining): one
    // replace() per series.
    void show(const std::vector<BurstSlice> &timeline, const std::vector<QPointF> &remaining);
    void setTitle(const QString &title);

    // What the chart draws, summed (for the tests: the chart agrees with the summary).
    struct Totals {
        qint64 allowed = 0, denied = 0, errors = 0;
    };
    Totals drawnTotals() const;

protected:
    void legendChanged() override;

private:
    static constexpr size_t kMaxSteps = 1000; // more than the chart is wide in pixels
    bool m_anyErrors = false;
    size_t m_groupSize = 1;  // slices per drawn step
    size_t m_sliceCount = 0; // slices drawn
    QLineSeries *m_allowed = nullptr, *m_deniedLow = nullptr, *m_denied = nullptr, *m_errorsLow = nullptr, *m_errors = nullptr,
                *m_remaining = nullptr;
    QAreaSeries *m_allowedArea = nullptr, *m_deniedArea = nullptr, *m_errorsArea = nullptr;
    QValueAxis *m_x = nullptr, *m_y = nullptr, *m_quota = nullptr;
    qint64 m_plannedUs = 0;
};

// The latency histogram of a finished burst: LatencyHistogram's log-spaced bars on a
// logarithmic time axis, with p50 and p99 marked.
class LatencyChart : public ThemedChartView {
    Q_OBJECT
public:
    explicit LatencyChart(QWidget *parent = nullptr);
    void show(const LatencyHistogram &latency);
    void clear();

protected:
    void legendChanged() override;

private:
    QLineSeries *m_bars = nullptr, *m_p50 = nullptr, *m_p99 = nullptr;
    QAreaSeries *m_area = nullptr;
    QLogValueAxis *m_x = nullptr;
    QValueAxis *m_y = nullptr;
};

// The boundary test: admitted requests over time around the window boundary, one line per
// algorithm, with the limit and the boundary drawn.
class BoundaryChart : public ThemedChartView {
    Q_OBJECT
public:
    explicit BoundaryChart(QWidget *parent = nullptr);
    // results: (name, result) per algorithm that produced one.
    void show(qint64 limit, const std::vector<std::pair<QString, BoundaryResult>> &results);
    void clear();

private:
    std::vector<QLineSeries *> m_lines;
    QLineSeries *m_limit = nullptr, *m_boundary = nullptr;
    QValueAxis *m_x = nullptr, *m_y = nullptr;
};

} // namespace ratescope::ui
