#include "whatifchart.h"

#include "chartpalette.h"
#include "displayformat.h"

#include <QChart>
#include <QDateTime>
#include <QLineSeries>
#include <QValueAxis>

#include <cmath>

namespace ratescope::ui {

namespace {

// The unit the time axis counts in, for a trace this long: seconds, minutes or hours.
std::pair<double, QString> timeUnit(qint64 spanUs)
{
    if (spanUs > 3LL * 3600 * 1000000)
        return {3600e6, QStringLiteral("h")};
    if (spanUs > 10LL * 60 * 1000000)
        return {60e6, QStringLiteral("min")};
    return {1e6, QStringLiteral("s")};
}

// Wall-clock times (a log's) start after 2001; a file may count from zero.
constexpr qint64 kEpochLikeUs = 1000000000LL * 1000000;

} // namespace

WhatIfChart::WhatIfChart(QWidget *parent)
    : ThemedChartView(parent)
{
    setMinimumHeight(180);
    // No title (the page says what the run was). The legend on top, a group per spec with a
    // stretch of each of its lines as drawn: QtCharts' legend draws a line as a stub too short
    // for a dash, and the allowed and denied lines of a spec looked the same there.
    chart()->legend()->hide();
    m_legend = new LineLegend(chart());
    connect(chart(), &QGraphicsWidget::geometryChanged, this, &WhatIfChart::placeLegend);
    m_x = addValueAxis(Qt::AlignBottom, QStringLiteral("time into the trace (s)"));
    m_y = addValueAxis(Qt::AlignLeft, QStringLiteral("requests"));
    applyPalette();
    clear();
}

void WhatIfChart::removeSeries()
{
    for (auto *list : {&m_allowed, &m_denied}) {
        for (QLineSeries *s : *list) {
            chart()->removeSeries(s);
            delete s;
        }
        list->clear();
    }
}

void WhatIfChart::legendChanged()
{
    // After a theme change: QtCharts' legend stays hidden, ours takes its font and the text colour.
    chart()->legend()->hide();
    if (!m_legend)
        return;
    m_legend->setFont(chart()->legend()->font());
    m_legend->setTextColor(palette().color(QPalette::WindowText));
    placeLegend();
}

void WhatIfChart::placeLegend()
{
    // Across the top of the chart, inside its margins; the plot starts under it.
    const QMargins m = chart()->margins();
    const qreal height = m_legend->layOut(chart()->size().width() - m.left() - m.right());
    m_legend->setPos(m.left(), 4);
    const int top = height > 0 ? 4 + int(std::ceil(height)) + 2 : 4;
    if (m.top() != top)
        chart()->setMargins(QMargins(m.left(), top, m.right(), m.bottom()));
}

void WhatIfChart::clear()
{
    removeSeries();
    m_legend->setGroups({});
    placeLegend();
    m_x->setTitleText(QStringLiteral("time into the trace (s)"));
    m_y->setTitleText(QStringLiteral("requests"));
    setNiceRange(m_x, 0, 10, 5);
    setNiceRange(m_y, 0, 10, 5);
}

void WhatIfChart::show(const SimResult &result, const QStringList &names)
{
    removeSeries();
    // The bins are aligned on the epoch: the axis starts at the first one.
    const qint64 binUs = std::max<qint64>(1, result.binUs);
    qint64 startUs = result.firstUs;
    for (const SimSpecResult &s : result.specs)
        if (!s.timeline.empty())
            startUs = std::min(startUs, s.timeline.front().fromUs);
    qint64 endUs = result.lastUs;
    for (const SimSpecResult &s : result.specs)
        if (!s.timeline.empty())
            endUs = std::max(endUs, s.timeline.back().fromUs + binUs);
    const auto [unitUs, unitName] = timeUnit(endUs - startUs);

    double peak = 1;
    size_t bins = 0;
    for (const SimSpecResult &s : result.specs)
        bins = std::max(bins, s.timeline.size());
    const size_t group = std::max<size_t>(1, (bins + kMaxSteps - 1) / kMaxSteps);
    std::vector<LineLegend::Group> groups;
    for (size_t i = 0; i < result.specs.size(); ++i) {
        const std::vector<SimBin> &bins = result.specs[i].timeline;
        const QColor color = seriesColor(int(i));
        const QString name = names.value(int(i), QStringLiteral("spec %1").arg(i + 1));
        auto *allowed = new QLineSeries(this);
        auto *denied = new QLineSeries(this);
        allowed->setName(QStringLiteral("%1 · allowed").arg(name));
        denied->setName(QStringLiteral("%1 · denied").arg(name));
        // Steps: a step's count over [from, from + step). The simulator's bins (up to 200) are
        // merged k at a time into at most kMaxSteps steps, so the lines read as a trend; a
        // step holds the sum of its bins, and the axis says per how long.
        QList<QPointF> a, d;
        std::vector<qint64> stepBins;
        for (size_t first = 0; first < bins.size(); first += group) {
            const size_t last = std::min(bins.size(), first + group);
            double sa = 0, sd = 0;
            for (size_t b = first; b < last; ++b) {
                sa += double(bins[b].allowed);
                sd += double(bins[b].denied);
            }
            const double from = double(bins[first].fromUs - startUs) / unitUs;
            const double to = double(bins[first].fromUs + qint64(group) * binUs - startUs) / unitUs;
            for (const double x : {from, to}) {
                a.append({x, sa});
                d.append({x, sd});
            }
            peak = std::max({peak, sa, sd});
        }
        allowed->replace(a);
        denied->replace(d);
        chart()->addSeries(allowed);
        chart()->addSeries(denied);
        for (QLineSeries *s : {allowed, denied}) {
            s->attachAxis(m_x);
            s->attachAxis(m_y);
        }
        // Earlier specs drawn wider, so where two specs agree the first still shows around the
        // later one.
        const qreal width = 2 + 1.75 * qreal(result.specs.size() - 1 - i);
        allowed->setPen(QPen(color, width));
        QPen dashed(color, width + 0.5);
        dashed.setStyle(Qt::DashLine);
        denied->setPen(dashed);
        m_allowed.push_back(allowed);
        m_denied.push_back(denied);
        groups.push_back({name, {{allowed->pen(), QStringLiteral("allowed")}, {denied->pen(), QStringLiteral("denied")}}});
    }
    m_legend->setGroups(std::move(groups));
    placeLegend();
    QString from;
    if (startUs >= kEpochLikeUs)
        from = QStringLiteral(", from %1 UTC")
                   .arg(QDateTime::fromMSecsSinceEpoch(startUs / 1000, Qt::UTC).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")));
    // The bin in the time axis's title: the plot is short at 1024x700, and "req / 300 ms" was
    // cut along the requests axis.
    m_x->setTitleText(QStringLiteral("time into the trace (%1%2; requests per %3)").arg(unitName, from, formatSpan(qint64(group) * binUs)));
    m_y->setTitleText(QStringLiteral("requests"));
    setNiceRange(m_x, 0, std::max(double(endUs - startUs) / unitUs, 1e-3), 8);
    setNiceRange(m_y, 0, peak * 1.1, 5);
    applyPalette(); // the new series' axes and legend in the palette's colours
}

std::vector<WhatIfChart::Totals> WhatIfChart::drawnTotals() const
{
    // Every step is two points of equal height, the sum of its bins.
    std::vector<Totals> totals;
    for (size_t i = 0; i < m_allowed.size(); ++i) {
        Totals t;
        const QList<QPointF> a = m_allowed[i]->points(), d = m_denied[i]->points();
        for (qsizetype p = 0; p + 1 < a.size(); p += 2) {
            t.allowed += qint64(std::llround(a[p].y()));
            t.denied += qint64(std::llround(d[p].y()));
        }
        totals.push_back(t);
    }
    return totals;
}

} // namespace ratescope::ui
