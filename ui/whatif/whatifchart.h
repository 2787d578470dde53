// The What-if view's chart: allowed and denied requests over the trace's time, one pair of
// lines per spec in the console's series colours (allowed solid, denied dashed), under a
// legend that draws each line as it is drawn, so that the dashed kind reads as dashed there.
#pragma once

#include "linelegend.h"
#include "themedchartview.h"
#include "load/simulator.h"

#include <vector>

class QLineSeries;
class QValueAxis;

namespace ratescope::ui {

class WhatIfChart : public ThemedChartView {
    Q_OBJECT
public:
    explicit WhatIfChart(QWidget *parent = nullptr);

    // names: one per spec, in the order of result.specs.
    void show(const SimResult &result, const QStringList &names);
    void clear();

    // What the chart draws per spec, summed (tests: the chart agrees with the totals).
    struct Totals {
        qint64 allowed = 0, denied = 0;
    };
    std::vector<Totals> drawnTotals() const;
    int seriesPairs() const { return int(m_allowed.size()); }
    const LineLegend *lineLegend() const { return m_legend; }

protected:
    void legendChanged() override;

private:
    static constexpr size_t kMaxSteps = 50; // steps drawn at most: a trend, not noise

    void removeSeries();
    void placeLegend();

    std::vector<QLineSeries *> m_allowed, m_denied;
    QValueAxis *m_x = nullptr, *m_y = nullptr;
    LineLegend *m_legend = nullptr;
};

} // namespace ratescope::ui
