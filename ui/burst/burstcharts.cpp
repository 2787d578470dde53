#include "burstcharts.h"

#include "chartpalette.h"
#include "chartscale.h"
#include "displayformat.h"

#include <QAreaSeries>
#include <QChart>
#include <QEvent>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QValueAxis>

#include <cmath>

namespace ratescope::ui {

namespace {

// Colours that read on a light and on a dark background alike; the rest comes from the palette.
const QColor kAllowed(0x43, 0xa0, 0x47);
const QColor kDenied(0xfb, 0x8c, 0x00);
const QColor kErrors(0xe5, 0x39, 0x35);
const QColor kQuota(0x42, 0x8b, 0xf5);
const QColor kLimit(0xe5, 0x39, 0x35);
const QColor kFixedWindow(0xfb, 0x8c, 0x00);
const QColor kSlidingLog(0x42, 0x8b, 0xf5);
const QColor kLatency(0x7e, 0x57, 0xc2);

void styleArea(QAreaSeries *area, QColor c)
{
    area->setPen(QPen(c, 1.5));
    c.setAlpha(150);
    area->setBrush(c);
}

QPen linePen(const QColor &c, qreal width, Qt::PenStyle style = Qt::SolidLine)
{
    QPen pen(c, width);
    pen.setStyle(style);
    return pen;
}

} // namespace

// ---- the live timeline ---------------------------------------------------------------------

TimelineChart::TimelineChart(QWidget *parent)
    : ThemedChartView(parent)
{
    setMinimumHeight(230);
    QChart *c = chart();
    m_allowed = new QLineSeries(this);
    m_deniedLow = new QLineSeries(this);
    m_denied = new QLineSeries(this);
    m_errorsLow = new QLineSeries(this);
    m_errors = new QLineSeries(this);
    m_remaining = new QLineSeries(this);
    m_allowedArea = new QAreaSeries(m_allowed);
    m_allowedArea->setName(QStringLiteral("allowed"));
    m_deniedArea = new QAreaSeries(m_denied, m_deniedLow);
    m_deniedArea->setName(QStringLiteral("denied"));
    m_errorsArea = new QAreaSeries(m_errors, m_errorsLow);
    m_errorsArea->setName(QStringLiteral("errors"));
    m_remaining->setName(QStringLiteral("remaining quota (peeked)"));
    styleArea(m_allowedArea, kAllowed);
    styleArea(m_deniedArea, kDenied);
    styleArea(m_errorsArea, kErrors);
    m_remaining->setPen(linePen(kQuota, 2.5));
    for (QAbstractSeries *s : std::initializer_list<QAbstractSeries *>{m_allowedArea, m_deniedArea, m_errorsArea, m_remaining})
        c->addSeries(s);
    m_x = addValueAxis(Qt::AlignBottom, QStringLiteral("time since the start (s)"));
    m_y = addValueAxis(Qt::AlignLeft, QStringLiteral("decisions per 100 ms"));
    m_quota = addValueAxis(Qt::AlignRight, QStringLiteral("remaining quota (requests)"));
    for (QAbstractSeries *s : {static_cast<QAbstractSeries *>(m_allowedArea), static_cast<QAbstractSeries *>(m_deniedArea),
                               static_cast<QAbstractSeries *>(m_errorsArea)}) {
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }
    m_remaining->attachAxis(m_x);
    m_remaining->attachAxis(m_quota);
    applyPalette();
    reset(QStringLiteral("Decisions per 100 ms"), 1, 0);
}

void TimelineChart::setTitle(const QString &title)
{
    chart()->setTitle(title);
}

void TimelineChart::reset(const QString &title, qint64 limit, qint64 plannedUs)
{
    m_plannedUs = plannedUs;
    setTitle(title);
    setNiceRange(m_quota, 0, double(std::max<qint64>(1, limit)), 5);
    show({}, {});
}

void TimelineChart::show(const std::vector<BurstSlice> &timeline, const std::vector<QPointF> &remaining)
{
    // Steps: each slice holds its count over (previous end, end]. A long burst has more slices
    // than the chart has pixels: k consecutive slices then make one step at their average per
    // 100 ms, so the chart stays cheap to draw and its areas still add up.
    const size_t n = timeline.size();
    m_groupSize = std::max<size_t>(1, (n + kMaxSteps - 1) / kMaxSteps);
    m_sliceCount = n;
    QList<QPointF> allowed, deniedLow, denied, errorsLow, errors;
    const qsizetype points = qsizetype((n + m_groupSize - 1) / m_groupSize) * 2;
    for (QList<QPointF> *l : {&allowed, &deniedLow, &denied, &errorsLow, &errors})
        l->reserve(points);
    qint64 start = 0;
    double peak = 1;
    bool anyErrors = false;
    for (size_t first = 0; first < n; first += m_groupSize) {
        const size_t last = std::min(n, first + m_groupSize);
        double sa = 0, sd = 0, se = 0;
        for (size_t i = first; i < last; ++i) {
            sa += double(timeline[i].allowed);
            sd += double(timeline[i].denied);
            se += double(timeline[i].errors);
        }
        const double k = double(last - first);
        const double a = sa / k, d = a + sd / k, e = d + se / k;
        const qint64 end = timeline[last - 1].endUs;
        for (const double x : {double(start) / 1e6, double(end) / 1e6}) {
            allowed.append({x, a});
            deniedLow.append({x, a});
            denied.append({x, d});
            errorsLow.append({x, d});
            errors.append({x, e});
        }
        peak = std::max(peak, e);
        anyErrors = anyErrors || se > 0;
        start = end;
    }
    // The quota samples thinned the same way (every k-th, and always the last).
    QList<QPointF> quota;
    const size_t every = std::max<size_t>(1, (remaining.size() + kMaxSteps - 1) / kMaxSteps);
    quota.reserve(qsizetype(remaining.size() / every + 1));
    for (size_t i = 0; i < remaining.size(); ++i)
        if (i % every == 0 || i + 1 == remaining.size())
            quota.append({remaining[i].x() / 1e6, remaining[i].y()});
    m_allowed->replace(allowed);
    m_deniedLow->replace(deniedLow);
    m_denied->replace(denied);
    m_errorsLow->replace(errorsLow);
    m_errors->replace(errors);
    m_remaining->replace(quota);
    m_anyErrors = anyErrors;
    legendChanged();
    // Before the first slice, a second and ten decisions: an empty chart with sensible axes.
    const qint64 shortest = timeline.empty() ? 1000000 : 100000;
    const qint64 lastUs = std::max({start, m_plannedUs, remaining.empty() ? qint64(0) : qint64(remaining.back().x()), shortest});
    setNiceRange(m_x, 0, double(lastUs) / 1e6, 8);
    setNiceRange(m_y, 0, std::max(peak * 1.1, 10.0), 5);
}

// No errors: no legend entry promising some.
void TimelineChart::legendChanged()
{
    if (!m_errorsArea)
        return;
    m_errorsArea->setVisible(m_anyErrors);
    for (QLegendMarker *m : chart()->legend()->markers(m_errorsArea))
        m->setVisible(m_anyErrors);
}

TimelineChart::Totals TimelineChart::drawnTotals() const
{
    // Every step is two points of equal height, the average of its slices: height times slices.
    Totals t;
    const QList<QPointF> a = m_allowed->points(), d = m_denied->points(), e = m_errors->points();
    for (qsizetype i = 0; i + 1 < a.size(); i += 2) {
        const size_t first = size_t(i / 2) * m_groupSize;
        const double k = double(std::min(m_sliceCount, first + m_groupSize) - first);
        t.allowed += qint64(std::llround(a[i].y() * k));
        t.denied += qint64(std::llround((d[i].y() - a[i].y()) * k));
        t.errors += qint64(std::llround((e[i].y() - d[i].y()) * k));
    }
    return t;
}

// ---- the latency histogram -----------------------------------------------------------------

LatencyChart::LatencyChart(QWidget *parent)
    : ThemedChartView(parent)
{
    setMinimumHeight(200);
    QChart *c = chart();
    c->setTitle(QStringLiteral("Latency distribution"));
    m_bars = new QLineSeries(this);
    m_area = new QAreaSeries(m_bars);
    m_area->setName(QStringLiteral("requests"));
    styleArea(m_area, kLatency);
    m_p50 = new QLineSeries(this);
    m_p99 = new QLineSeries(this);
    m_p50->setPen(linePen(kAllowed, 2, Qt::DashLine));
    m_p99->setPen(linePen(kErrors, 2, Qt::DashLine));
    for (QAbstractSeries *s : std::initializer_list<QAbstractSeries *>{m_area, m_p50, m_p99})
        c->addSeries(s);
    m_x = new QLogValueAxis(this);
    m_x->setBase(10);
    m_x->setLabelFormat(QStringLiteral("%g"));
    m_x->setTitleText(QStringLiteral("ms, log scale")); // the chart's title says latency
    m_x->setMinorTickCount(-1); // 2, 3, ... 9 between the powers of ten
    c->addAxis(m_x, Qt::AlignBottom);
    m_y = addValueAxis(Qt::AlignLeft, QStringLiteral("requests"));
    for (QAbstractSeries *s : std::initializer_list<QAbstractSeries *>{m_area, m_p50, m_p99}) {
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }
    applyPalette();
    clear();
}

// The title says what the area is; the legend names the percentile marks only.
void LatencyChart::legendChanged()
{
    if (!m_area)
        return;
    for (QLegendMarker *m : chart()->legend()->markers(m_area))
        m->setVisible(false);
}

void LatencyChart::clear()
{
    m_area->setVisible(false); // an empty area on a log axis still draws its edge
    m_bars->replace(QList<QPointF>{});
    m_p50->replace(QList<QPointF>{});
    m_p99->replace(QList<QPointF>{});
    m_p50->setName(QStringLiteral("p50"));
    m_p99->setName(QStringLiteral("p99"));
    m_x->setRange(0.01, 10);
    m_y->setRange(0, 1);
    m_y->setTitleText(QStringLiteral("requests"));
}

void LatencyChart::show(const LatencyHistogram &latency)
{
    constexpr int kBars = 24;
    const auto bars = latency.bars(kBars);
    if (bars.empty()) {
        clear();
        return;
    }
    // Each bar is a step over [low, high + 1 µs) on the log axis; a log axis has no 0, so
    // the smallest value drawn is 1 µs.
    QList<QPointF> points;
    qint64 most = 1;
    const double first = double(std::max<qint64>(1, bars.front().lowUs)) / 1e3;
    points.append({first, 0});
    for (const auto &b : bars) {
        const double low = double(std::max<qint64>(1, b.lowUs)) / 1e3, high = double(b.highUs + 1) / 1e3;
        points.append({low, double(b.count)});
        points.append({high, double(b.count)});
        most = std::max(most, b.count);
    }
    points.append({points.back().x(), 0});
    // Big bursts count in thousands, so the axis labels stay short.
    const double scale = most >= 10000 ? 1000.0 : 1.0;
    if (scale != 1.0)
        for (QPointF &p : points)
            p.setY(p.y() / scale);
    m_y->setTitleText(scale != 1.0 ? QStringLiteral("requests (thousands)") : QStringLiteral("requests"));
    m_bars->replace(points);
    m_area->setVisible(true);
    legendChanged();
    const double top = double(most) / scale * 1.1;
    const double p50 = double(std::max<qint64>(1, latency.percentile(50))) / 1e3;
    const double p99 = double(std::max<qint64>(1, latency.percentile(99))) / 1e3;
    m_p50->replace(QList<QPointF>{{p50, 0}, {p50, top}});
    m_p99->replace(QList<QPointF>{{p99, 0}, {p99, top}});
    m_p50->setName(QStringLiteral("p50 %1").arg(formatLatency(latency.percentile(50))));
    m_p99->setName(QStringLiteral("p99 %1").arg(formatLatency(latency.percentile(99))));
    // Whole decades around the data, so the log axis labels powers of ten.
    const double lo = std::pow(10.0, std::floor(std::log10(first)));
    const double hi = std::pow(10.0, std::ceil(std::log10(points.back().x() * 1.0001)));
    m_x->setRange(lo, std::max(hi, lo * 10));
    setNiceRange(m_y, 0, top, 4);
}

QString formatLatency(qint64 us)
{
    if (us < 1000)
        return QStringLiteral("%1 µs").arg(us);
    if (us < 10000)
        return QStringLiteral("%1 ms").arg(double(us) / 1e3, 0, 'f', 2);
    if (us < 1000000)
        return QStringLiteral("%1 ms").arg(double(us) / 1e3, 0, 'f', 1);
    return QStringLiteral("%1 s").arg(double(us) / 1e6, 0, 'f', 2);
}

// ---- the boundary test ---------------------------------------------------------------------

BoundaryChart::BoundaryChart(QWidget *parent)
    : ThemedChartView(parent)
{
    setMinimumHeight(230);
    QChart *c = chart();
    c->setTitle(QStringLiteral("Admitted around the window boundary"));
    m_limit = new QLineSeries(this);
    m_limit->setName(QStringLiteral("limit"));
    m_limit->setPen(linePen(kLimit, 2, Qt::DashLine));
    m_boundary = new QLineSeries(this);
    m_boundary->setName(QStringLiteral("window boundary"));
    m_boundary->setPen(linePen(QColor(0x90, 0x90, 0x90), 1.5, Qt::DotLine));
    for (const auto &[name, colour] :
         {std::pair{QStringLiteral("fixed window"), kFixedWindow}, std::pair{QStringLiteral("sliding log"), kSlidingLog}}) {
        auto *line = new QLineSeries(this);
        line->setName(name);
        line->setPen(linePen(colour, 3));
        m_lines.push_back(line);
    }
    // The limit and the boundary first, so the algorithms' lines are drawn over them.
    c->addSeries(m_limit);
    c->addSeries(m_boundary);
    for (QLineSeries *s : m_lines)
        c->addSeries(s);
    m_x = addValueAxis(Qt::AlignBottom, QStringLiteral("time from the window boundary (ms, server clock)"));
    m_y = addValueAxis(Qt::AlignLeft, QStringLiteral("admitted so far (requests)"));
    for (QAbstractSeries *s : c->series()) {
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }
    applyPalette();
    clear();
}

void BoundaryChart::clear()
{
    for (QLineSeries *s : m_lines)
        s->replace(QList<QPointF>{});
    m_limit->replace(QList<QPointF>{});
    m_boundary->replace(QList<QPointF>{});
    m_x->setRange(-100, 100);
    m_y->setRange(0, 1);
}

void BoundaryChart::show(qint64 limit, const std::vector<std::pair<QString, BoundaryResult>> &results)
{
    double from = -10, to = 10;
    double top = double(limit);
    for (size_t i = 0; i < m_lines.size(); ++i) {
        const BoundaryResult *r = nullptr;
        for (const auto &[name, result] : results)
            if (name == m_lines[i]->name())
                r = &result;
        if (!r) {
            m_lines[i]->replace(QList<QPointF>{});
            continue;
        }
        // Cumulative: flat between the bursts, rising over each.
        auto ms = [r](qint64 us) { return double(us - r->boundaryUs) / 1e3; };
        const double first = double(r->firstAllowed), total = double(r->admitted());
        m_lines[i]->replace(QList<QPointF>{
            {ms(r->firstStartUs), 0}, {ms(r->firstEndUs), first}, {ms(r->secondStartUs), first}, {ms(r->secondEndUs), total}});
        from = std::min(from, ms(r->firstStartUs));
        to = std::max(to, ms(r->secondEndUs));
        top = std::max(top, total);
    }
    const double margin = (to - from) * 0.08;
    from -= margin;
    to += margin;
    top *= 1.15;
    m_limit->replace(QList<QPointF>{{from, double(limit)}, {to, double(limit)}});
    m_boundary->replace(QList<QPointF>{{0, 0}, {0, top}});
    const double step = niceStep(to - from, 8);
    m_x->setTickType(QValueAxis::TicksDynamic);
    m_x->setTickAnchor(0);
    m_x->setTickInterval(step);
    m_x->setRange(std::floor(from / step) * step, std::ceil(to / step) * step);
    setNiceRange(m_y, 0, top, 5);
}

} // namespace ratescope::ui
