#include "logview.h"
#include "chartscale.h"
#include "chartpalette.h"

#include "displayformat.h"
#include "base/duration.h"
#include "base/errors.h"
#include "keys/inspector.h"
#include "logentriesmodel.h"

#include <QtCharts/QAreaSeries>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <QCheckBox>
#include <QEvent>
#include <QGraphicsSimpleTextItem>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QImage>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QRubberBand>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <map>

namespace ratescope::ui {

namespace {

// A chart on which dragging across picks a time range (instead of zooming).
class RangeChartView : public QChartView {
public:
    RangeChartView(QChart *chart, QWidget *parent, std::function<void(double, double)> picked)
        : QChartView(chart, parent)
        , m_picked(std::move(picked))
    {
        setRenderHint(QPainter::Antialiasing);
        setCursor(Qt::CrossCursor);
        setToolTip(tr("Drag across the chart to list only the entries of that time range"));
    }

protected:
    void mousePressEvent(QMouseEvent *e) override
    {
        if (e->button() != Qt::LeftButton || !chart()->plotArea().contains(e->position())) {
            QChartView::mousePressEvent(e);
            return;
        }
        m_origin = e->position().toPoint();
        if (!m_band)
            m_band = new QRubberBand(QRubberBand::Rectangle, viewport());
        m_band->setGeometry(bandFor(m_origin.x()));
        m_band->show();
        e->accept();
    }
    void mouseMoveEvent(QMouseEvent *e) override
    {
        if (m_band && m_band->isVisible())
            m_band->setGeometry(bandFor(e->position().toPoint().x()));
        else
            QChartView::mouseMoveEvent(e);
    }
    void mouseReleaseEvent(QMouseEvent *e) override
    {
        if (!m_band || !m_band->isVisible()) {
            QChartView::mouseReleaseEvent(e);
            return;
        }
        m_band->hide();
        const double a = chart()->mapToValue(QPointF(m_origin.x(), 0)).x();
        const double b = chart()->mapToValue(QPointF(e->position().x(), 0)).x();
        if (std::abs(e->position().x() - m_origin.x()) >= 3) // a click is no range
            m_picked(std::min(a, b), std::max(a, b));
        e->accept();
    }

private:
    QRect bandFor(int x) const
    {
        const QRectF plot = chart()->plotArea();
        const int left = std::clamp(std::min(x, m_origin.x()), int(plot.left()), int(plot.right()));
        const int right = std::clamp(std::max(x, m_origin.x()), int(plot.left()), int(plot.right()));
        return QRect(QPoint(left, int(plot.top())), QPoint(right, int(plot.bottom())));
    }

    std::function<void(double, double)> m_picked;
    QRubberBand *m_band = nullptr;
    QPoint m_origin;
};

struct AxisUnit {
    qint64 us;
    const char *name;
};

// The time axis counts in the unit that keeps its labels short for the span shown.
AxisUnit axisUnitFor(qint64 spanUs)
{
    if (spanUs <= 2000000)
        return {1000, "ms"};
    if (spanUs <= 180LL * 1000000)
        return {1000000, "s"};
    if (spanUs <= 3LL * 3600 * 1000000)
        return {60LL * 1000000, "min"};
    if (spanUs <= 3LL * 86400 * 1000000)
        return {3600LL * 1000000, "h"};
    return {86400LL * 1000000, "d"};
}

// How high the tallest bucket of a big log is drawn, as a fraction of the plot's height, when
// the limit line is drawn at `limitHeight` of it: in the lower part of the plot and at least
// 0.15 of the height away from the limit line, so that neither hides the other (with the same
// headroom on both axes, a full bucket used to sit exactly on the limit).
double bucketPeakHeight(double limitHeight)
{
    if (limitHeight >= 0.75)
        return 0.6;
    if (limitHeight >= 0.45)
        return limitHeight - 0.15;
    return std::min(0.6, limitHeight + 0.2);
}

// 1, 2 or 5 times a power of ten: at most about `ticks` labels over the range.
// Ticks on round values, anchored at `anchor` (now, on the time axis), labelled without
// needless decimals.
void setNiceTicks(QValueAxis *axis, double anchor, int ticks, double minStep = 0)
{
    const double step = std::max(minStep, niceStep(axis->max() - axis->min(), ticks));
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setTickAnchor(anchor);
    axis->setTickInterval(step);
    const int decimals = step >= 1 ? 0 : int(std::ceil(-std::log10(step) - 1e-9));
    axis->setLabelFormat(QStringLiteral("%.%1f").arg(decimals));
}

// A marker painted from one image per series (Qt Charts' light marker) rather than one graphics
// item per point: thousands of entries draw in milliseconds instead of seconds.
QImage markerImage(const QColor &fill, int size, bool square)
{
    QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QPainter p(&image);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(QPen(fill.darker(140), 1));
    p.setBrush(fill);
    const QRectF r(0.5, 0.5, size - 1, size - 1);
    if (square)
        p.drawRect(r);
    else
        p.drawEllipse(r);
    return image;
}

QPen pen(const QColor &c, qreal width, Qt::PenStyle style = Qt::SolidLine)
{
    QPen p(c, width, style);
    p.setCosmetic(true);
    return p;
}

} // namespace

LogView::LogView(RedisClient *client, const QByteArray &key, QWidget *parent)
    : QWidget(parent)
    , m_client(client)
    , m_key(key)
{
    m_title = new QLabel(tr("Sliding log: reading…"), this);
    QFont big = m_title->font();
    big.setBold(true);
    big.setPointSizeF(big.pointSizeF() * 1.15);
    m_title->setFont(big);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_historyBox = new QCheckBox(tr("Show one more window of history"), this);
    connect(m_historyBox, &QCheckBox::toggled, this, &LogView::setHistoryShown);

    m_chart = new QChart;
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_axisX = new QValueAxis(m_chart);
    m_axisY = new QValueAxis(m_chart);
    m_axisBuckets = new QValueAxis(m_chart);
    m_axisX->setTitleText(tr("time relative to now (s)"));
    m_axisY->setTitleText(tr("used (cost units)"));
    m_axisBuckets->setTitleText(tr("entries per bucket"));
    m_axisY->setLabelFormat(QStringLiteral("%.0f"));
    m_axisBuckets->setLabelFormat(QStringLiteral("%.0f"));
    m_chart->addAxis(m_axisX, Qt::AlignBottom);
    m_chart->addAxis(m_axisY, Qt::AlignLeft);
    m_chart->addAxis(m_axisBuckets, Qt::AlignRight);

    m_expiredUpper = new QLineSeries(this);
    m_expired = new QAreaSeries(m_expiredUpper);
    m_expired->setName(tr("expired (older than one window)"));
    m_pickedUpper = new QLineSeries(this);
    m_picked = new QAreaSeries(m_pickedUpper);
    m_picked->setName(tr("range listed below"));
    // Per-bucket counts as a faint histogram on an axis of their own, under the lines.
    m_buckets = new QLineSeries(this);
    m_bucketArea = new QAreaSeries(m_buckets);
    m_bucketArea->setName(tr("entries per bucket")); // counted on the server, as the status line says
    m_used = new QLineSeries;
    m_used->setName(tr("rolling count used(t)"));
    m_limit = new QLineSeries;
    m_limit->setName(tr("limit"));
    m_capacityOne = new QLineSeries;
    m_capacityCost = new QLineSeries;
    // Points only: line series with an invisible line and one marker image, since a scatter
    // series makes a graphics item per point and takes most of a second for 10,000 of them.
    m_entries = new QLineSeries;
    m_entries->setName(tr("admitted entries"));
    m_entries->setMarkerSize(9);
    m_weighted = new QLineSeries;
    m_weighted->setName(tr("weighted entries (×cost)"));
    m_weighted->setMarkerSize(12);
    for (QAbstractSeries *s : std::initializer_list<QAbstractSeries *>{m_expired, m_picked, m_bucketArea, m_used, m_limit, m_capacityOne,
                                                                       m_capacityCost, m_entries, m_weighted}) {
        m_chart->addSeries(s);
        s->attachAxis(m_axisX);
        s->attachAxis(s == m_bucketArea ? m_axisBuckets : m_axisY);
    }
    m_chartView = new RangeChartView(m_chart, this, [this](double a, double b) {
        if (!m_read)
            return;
        const qint64 from = m_axisNowUs + qint64(std::floor(a * double(m_axisUnitUs)));
        const qint64 to = m_axisNowUs + qint64(std::ceil(b * double(m_axisUnitUs))) + 1;
        setTimeFilter(from, to);
    });
    m_chartView->setMinimumHeight(200); // a key view fits a 700 px window with the keys panel beside it
    connect(m_chart, &QChart::plotAreaChanged, this, &LogView::placeCostLabels);

    m_model = new LogEntriesModel(this);
    m_table = new QTableView(this);
    m_table->setModel(m_model);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 8);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_table->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->setColumnWidth(LogEntriesModel::Time,
                            m_table->fontMetrics().horizontalAdvance(QStringLiteral("0000-00-00 00:00:00.000")) + 24);
    m_table->setColumnWidth(LogEntriesModel::Age, m_table->fontMetrics().horizontalAdvance(QStringLiteral("00.000 s ago")) + 16);
    // The member takes what the time, the age and the cost leave, so that the table never
    // scrolls sideways (beside the keys panel at 1024 px it has about 270 px); a member cut is
    // elided, whole in its tooltip.
    const int digit = m_table->fontMetrics().horizontalAdvance(QLatin1Char('0'));
    m_table->horizontalHeader()->setStretchLastSection(false);
    m_table->horizontalHeader()->setSectionResizeMode(LogEntriesModel::Member, QHeaderView::Stretch);
    m_table->setColumnWidth(LogEntriesModel::Cost,
                            std::max(digit * 7, m_table->horizontalHeader()->sectionSizeHint(LogEntriesModel::Cost)));

    m_filterLabel = new QLabel(this);
    m_filterLabel->setWordWrap(true); // a long sentence must not set the page's width
    m_clearFilter = new QPushButton(tr("Clear time range"), this);
    m_clearFilter->setEnabled(false);
    connect(m_clearFilter, &QPushButton::clicked, this, &LogView::clearTimeFilter);
    // Oldest first, the server's order; the buttons page through it.
    m_prev = new QPushButton(tr("◀ Previous"), this);
    m_next = new QPushButton(tr("Next ▶"), this);
    connect(m_prev, &QPushButton::clicked, this, &LogView::previousPage);
    connect(m_next, &QPushButton::clicked, this, &LogView::nextPage);
    m_pageLabel = new QLabel(this);

    auto *top = new QHBoxLayout;
    top->addWidget(m_title, 1);
    top->addWidget(m_historyBox);
    auto *tableBar = new QHBoxLayout;
    tableBar->addWidget(m_filterLabel, 1);
    tableBar->addWidget(m_clearFilter);
    tableBar->addSpacing(12);
    tableBar->addWidget(m_pageLabel);
    tableBar->addWidget(m_prev);
    tableBar->addWidget(m_next);
    auto *lower = new QWidget(this);
    auto *lowerLayout = new QVBoxLayout(lower);
    lowerLayout->setContentsMargins(0, 0, 0, 0);
    lowerLayout->addLayout(tableBar);
    lowerLayout->addWidget(m_table);
    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_chartView);
    split->addWidget(lower);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setSizes({480, 240});
    m_table->setMinimumHeight(m_table->verticalHeader()->defaultSectionSize() * 3 + m_table->horizontalHeader()->sizeHint().height() + 4);
    split->setChildrenCollapsible(false);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(top);
    layout->addWidget(m_status);
    layout->addWidget(split, 1);

    if (m_client)
        connect(m_client, &RedisClient::stateChanged, this, &LogView::updateLiveness);
    // While not live, the "values from … ago" line keeps counting.
    m_staleTick.setInterval(1000);
    connect(&m_staleTick, &QTimer::timeout, this, &LogView::updateLiveness);
    applyPalette();
    updatePager();
    updateLiveness();
}

LogView::~LogView()
{
    if (m_client)
        m_client->cancel(this);
}

QAbstractItemModel *LogView::entriesModel() const
{
    return m_model;
}

void LogView::setContext(const std::optional<LimitSpec> &spec, ScoreUnit unit, qint64 nowUs, const std::optional<KeyKind> &kind)
{
    const bool specChanged = !m_context || m_context->spec != spec;
    m_context = Context{spec, unit, nowUs, kind};
    if (specChanged)
        m_historyBox->setEnabled(spec.has_value());
    startRead();
}

void LogView::setHistoryShown(bool shown)
{
    if (m_history == shown)
        return;
    m_history = shown;
    if (m_historyBox->isChecked() != shown)
        m_historyBox->setChecked(shown);
    startRead();
}

void LogView::setTimeFilter(qint64 fromUs, qint64 toUs)
{
    if (toUs <= fromUs)
        return;
    m_filter = std::make_pair(fromUs, toUs);
    m_filterLeft = false;
    m_pageOffset = 0;
    startRead();
}

void LogView::clearTimeFilter()
{
    if (!m_filter)
        return;
    m_filter.reset();
    m_filterLeft = false;
    m_pageOffset = 0;
    startRead();
}

QString LogView::filterText() const
{
    return m_filterLabel->text();
}

QString LogView::pageText() const
{
    return m_pageLabel->text();
}

void LogView::setPageSize(int rows)
{
    m_pageSize = std::clamp(rows, 1, 1000);
    m_pageOffset = 0;
    startRead();
}

void LogView::nextPage()
{
    if (m_pageOffset + m_pageSize >= m_model->total())
        return;
    m_pageOffset += m_pageSize;
    startRead();
}

void LogView::previousPage()
{
    if (m_pageOffset == 0)
        return;
    m_pageOffset = std::max<qint64>(0, m_pageOffset - m_pageSize);
    startRead();
}

QString LogView::titleText() const
{
    return m_title->text();
}

QString LogView::statusText() const
{
    return m_status->text();
}

double LogView::xOf(qint64 timeUs) const
{
    return double(timeUs - m_axisNowUs) / double(m_axisUnitUs);
}

LogReadRequest LogView::readSettings() const
{
    LogReadRequest request;
    request.history = m_history;
    request.filter = m_filter;
    request.pageOffset = m_pageOffset;
    request.pageSize = m_pageSize;
    request.expectBucketed = m_read && m_read->window.bucketed;
    return request;
}

void LogView::showRead(const std::optional<LimitSpec> &spec, ScoreUnit unit, const KeyKind &kind, const LogRead &read)
{
    const bool specChanged = !m_context || m_context->spec != spec;
    m_context = Context{spec, unit, read.nowUs, kind};
    if (specChanged)
        m_historyBox->setEnabled(spec.has_value());
    ++m_reads;
    ++m_readsDone;
    apply(read);
    emit refreshed();
}

void LogView::startRead()
{
    if (!m_context || !m_client)
        return;
    if (m_inFlight) {
        m_pending = true; // the newest context and settings are read when this one is back
        return;
    }
    m_inFlight = true;
    ++m_reads;
    LogReadRequest request = readSettings();
    request.key = m_key;
    request.spec = m_context->spec;
    request.unit = m_context->unit;
    request.nowUs = m_context->nowUs;
    // One round when the key is as the last read (or the key view) found it.
    request.expected = m_read ? std::optional(m_read->kind) : m_context->kind;
    m_client->request(
        this, [request](Connection &c) { return readLog(c, request); },
        [this](const Outcome<LogRead> &o) {
            m_inFlight = false;
            ++m_readsDone;
            if (o.ok())
                apply(o.value());
            else
                showFailure(o.failure().message);
            emit refreshed();
            if (m_pending) {
                m_pending = false;
                startRead();
            }
        });
}

void LogView::apply(const LogRead &read)
{
    m_read = read;
    m_failure.clear();
    m_lastGoodAt = QDateTime::currentDateTime();
    if (read.page.offset >= read.page.total && read.page.offset > 0) // the range shrank under the page
        m_pageOffset = 0;
    // A range picked on the chart that the window has moved past: let go of it and show every
    // entry again, saying why, rather than "0–0 of 0" under a range that is off the chart. The
    // page read for that range (empty) is not shown: the rows stay until the whole window's come.
    const bool rangeLeft = m_filter && m_filter->second <= read.axisFromUs;
    if (rangeLeft) {
        m_filter.reset();
        m_filterLeft = true;
        m_pageOffset = 0;
    } else {
        m_model->setPage(read.page.entries, read.page.offset, read.page.total, read.nowUs);
    }
    drawChart(read);
    updatePager();
    updateLiveness();
    if (!m_loaded) {
        m_loaded = true;
        emit loaded();
    }
    if (rangeLeft)
        startRead(); // the entries of the whole window, now
}

void LogView::drawChart(const LogRead &read)
{
    const qint64 now = read.nowUs;
    const std::optional<LimitSpec> &spec = read.spec;
    const LogWindow &w = read.window;
    m_axisNowUs = now;

    // Where capacity returns, for cost 1 and the policy's cost: now + retry_after.
    std::optional<qint64> backOne, backCost;
    if (read.forOne)
        backOne = now + read.forOne->decision.retryAfterUs;
    if (read.forCost)
        backCost = now + read.forCost->decision.retryAfterUs;
    qint64 axisTo = now;
    for (const auto &b : {backOne, backCost})
        if (b)
            axisTo = std::max(axisTo, *b);
    if (spec)
        axisTo = std::min(axisTo, now + spec->windowUs);
    const AxisUnit unit = axisUnitFor(std::max<qint64>(1, axisTo - read.axisFromUs));
    m_axisUnitUs = unit.us;
    const double pad = double(axisTo - read.axisFromUs) * 0.03 / double(unit.us);
    const double x0 = xOf(read.axisFromUs), x1 = xOf(axisTo) + pad;
    // Without limits the axis starts at the oldest entry: a little room so it is not cut in half.
    m_axisX->setRange(spec ? x0 : x0 - pad, x1);
    m_axisX->setTitleText(tr("time relative to now (%1)").arg(QLatin1String(unit.name)));

    QList<QPointF> used, entries, weighted, buckets;
    m_costLabelPoints.clear();
    double yMax = 1;
    double bucketPeak = 1;
    if (spec) {
        const qint64 W = spec->windowUs;
        if (!w.bucketed) {
            // The rolling count steps up at each admission and down one window later.
            std::map<qint64, qint64> steps;
            qint64 level = 0;
            for (const LogEntry &e : w.entries) {
                if (e.timeUs <= read.axisFromUs) {
                    if (e.timeUs > read.axisFromUs - W)
                        level += e.cost;
                } else if (e.timeUs <= now) {
                    steps[e.timeUs] += e.cost;
                }
                if (e.timeUs + W > read.axisFromUs && e.timeUs + W <= now)
                    steps[e.timeUs + W] -= e.cost;
            }
            used.reserve(qsizetype(steps.size()) * 2 + 2);
            used.append(QPointF(x0, double(level)));
            std::map<qint64, qint64> levelAt;
            for (const auto &[t, delta] : steps) {
                used.append(QPointF(xOf(t), double(level)));
                level += delta;
                used.append(QPointF(xOf(t), double(level)));
                levelAt[t] = level;
                yMax = std::max(yMax, double(level));
            }
            used.append(QPointF(xOf(now), double(level)));
            for (const LogEntry &e : w.entries) {
                if (e.timeUs <= read.axisFromUs || e.timeUs > now)
                    continue;
                const QPointF p(xOf(e.timeUs), double(levelAt[e.timeUs]));
                entries.append(p);
                if (e.cost > 1) {
                    weighted.append(p);
                    m_costLabelPoints.emplace_back(p, QStringLiteral("×%1").arg(e.cost));
                }
            }
        } else {
            // Counts only: the rolling count of entries from the buckets that make up a window.
            const size_t perWindow = kBucketsPerWindow;
            qint64 sum = 0;
            for (size_t k = 0; k < w.buckets.size(); ++k) {
                const LogBucket &b = w.buckets[k];
                sum += b.count;
                if (k >= perWindow)
                    sum -= w.buckets[k - perWindow].count;
                if (b.toUs <= read.axisFromUs + 1) // all before the axis: (axis start, now] is drawn
                    continue;
                const double bx0 = xOf(std::max(b.fromUs, read.axisFromUs)), bx1 = xOf(std::min(b.toUs - 1, now));
                used.append(QPointF(bx0, double(sum)));
                used.append(QPointF(bx1, double(sum)));
                buckets.append(QPointF(bx0, double(b.count)));
                buckets.append(QPointF(bx1, double(b.count)));
                yMax = std::max(yMax, double(sum));
                bucketPeak = std::max(bucketPeak, double(b.count));
            }
            m_axisBuckets->setTitleText(tr("entries / %1").arg(formatSpan(w.buckets.front().toUs - w.buckets.front().fromUs)));
        }
        yMax = std::max(yMax, double(spec->limit));
        if (read.forOne)
            yMax = std::max(yMax, double(read.forOne->usedNow));
        m_axisY->setTitleText(w.bucketed ? tr("used (entries)") : tr("used (cost units)"));
    } else {
        // No limits: the entries by cost; nothing to judge them against.
        double costMax = 1;
        if (!w.bucketed) {
            for (const LogEntry &e : w.entries) {
                const QPointF p(xOf(e.timeUs), double(e.cost));
                entries.append(p);
                if (e.cost > 1)
                    weighted.append(p);
                costMax = std::max(costMax, double(e.cost));
            }
        } else {
            double bucketMax = 1;
            for (const LogBucket &b : w.buckets) {
                buckets.append(QPointF(xOf(b.fromUs), double(b.count)));
                buckets.append(QPointF(xOf(b.toUs - 1), double(b.count)));
                bucketMax = std::max(bucketMax, double(b.count));
            }
            m_axisBuckets->setRange(0, bucketMax * 1.15);
            m_axisBuckets->setTitleText(tr("entries / %1").arg(formatSpan(w.buckets.front().toUs - w.buckets.front().fromUs)));
        }
        yMax = costMax;
        m_axisY->setTitleText(tr("entry cost"));
    }
    m_axisY->setRange(0, std::ceil(yMax * 1.15));
    // The tallest bucket clear of the limit line: the two axes never draw them at one height.
    if (spec && w.bucketed)
        m_axisBuckets->setRange(0, bucketPeak / bucketPeakHeight(double(spec->limit) / m_axisY->max()));
    setNiceTicks(m_axisX, 0, 10);
    setNiceTicks(m_axisY, 0, 6, 1); // cost units and entries come whole
    if (w.bucketed)
        setNiceTicks(m_axisBuckets, 0, 6, 1);
    m_axisBuckets->setVisible(w.bucketed);

    m_used->replace(used);
    m_used->setVisible(spec.has_value());
    m_entries->replace(entries);
    m_weighted->replace(weighted);
    m_buckets->replace(buckets);
    m_bucketArea->setVisible(w.bucketed);
    if (spec) {
        m_limit->replace({QPointF(x0, double(spec->limit)), QPointF(x1, double(spec->limit))});
        m_limit->setName(tr("limit %1").arg(formatLimit(*spec)));
    } else {
        m_limit->replace(QList<QPointF>());
    }
    m_limit->setVisible(spec.has_value());
    if (m_costLabelPoints.size() > 200) // too many to read: the marker shape says it
        m_costLabelPoints.clear();
    if (spec)
        m_costLabelPoints.emplace_back(QPointF(x0, double(spec->limit)), tr("limit %1").arg(formatCount(spec->limit)));
    auto marker = [&](QLineSeries *s, std::optional<qint64> at, qint64 cost) {
        s->setVisible(at.has_value());
        if (!at) {
            s->replace(QList<QPointF>());
            return;
        }
        const double x = xOf(*at);
        s->replace({QPointF(x, 0), QPointF(x, double(spec->limit))});
        m_costLabelPoints.emplace_back(QPointF(x, double(spec->limit) * (s == m_capacityOne ? 0.5 : 0.3)),
                                       *at <= now ? tr("cost %1: now").arg(cost) : tr("cost %1: +%2").arg(cost).arg(formatSpan(*at - now)));
        s->setName(*at <= now ? tr("room for cost %1 now").arg(cost) : tr("cost %1 fits again in %2").arg(cost).arg(formatSpan(*at - now)));
    };
    marker(m_capacityOne, backOne, 1);
    marker(m_capacityCost, backCost, spec ? spec->cost : 1);
    // The expired part: older than one window, still stored until the next write prunes it.
    const bool shade = spec && read.axisFromUs < now - spec->windowUs;
    m_expired->setVisible(shade);
    if (shade)
        m_expiredUpper->replace({QPointF(x0, m_axisY->max()), QPointF(xOf(now - spec->windowUs), m_axisY->max())});
    // The range picked for the table, while it is set.
    m_picked->setVisible(m_filter.has_value());
    if (m_filter)
        m_pickedUpper->replace({QPointF(xOf(m_filter->first), m_axisY->max()), QPointF(xOf(m_filter->second - 1), m_axisY->max())});
    for (QLegendMarker *lm : m_chart->legend()->markers())
        lm->setVisible(lm->series()->isVisible() && !(lm->series() == m_weighted && weighted.isEmpty()) &&
                       !(lm->series() == m_entries && w.bucketed));

    // Title and the line under it.
    QString title;
    if (spec) {
        const qint64 usedNow = read.forOne ? read.forOne->usedNow : -1;
        title = usedNow >= 0 ? tr("Sliding log: %1 of %2 used in the last %3")
                                   .arg(formatCount(usedNow), formatCount(spec->limit), formatSpan(spec->windowUs))
                             : tr("Sliding log: limit %1").arg(formatLimit(*spec));
    } else {
        title =
            tr("Sliding log: %1 entries in the last %2; limits unknown").arg(formatCount(w.total), formatSpan(now + 1 - read.axisFromUs));
    }
    m_title->setText(title);
    placeCostLabels();
}

void LogView::placeCostLabels()
{
    // Labels for the limit line and for weighted entries (when few enough to read).
    const size_t wanted = m_costLabelPoints.size();
    while (m_costLabels.size() > wanted) {
        delete m_costLabels.back();
        m_costLabels.pop_back();
    }
    while (m_costLabels.size() < wanted) {
        auto *item = new QGraphicsSimpleTextItem(m_chart);
        item->setZValue(20);
        m_costLabels.push_back(item);
    }
    const QColor ink = palette().color(QPalette::Text);
    for (size_t i = 0; i < wanted; ++i) {
        QGraphicsSimpleTextItem *item = m_costLabels[i];
        item->setText(m_costLabelPoints[i].second);
        item->setBrush(ink);
        const QPointF at = m_chart->mapToPosition(m_costLabelPoints[i].first, m_weighted);
        // Right of its point, or left of it where the plot ends.
        const QRectF box = item->boundingRect();
        const double dx = at.x() + 6 + box.width() > m_chart->plotArea().right() ? -6 - box.width() : 6;
        item->setPos(at + QPointF(dx, -box.height() - 2));
        item->setVisible(m_chart->plotArea().adjusted(-1, -1, 1, 1).contains(at));
    }
}

void LogView::showFailure(const QString &why)
{
    m_failure = why;
    if (!m_read)
        m_title->setText(tr("Sliding log: not read (%1)").arg(why));
    updateLiveness();
}

void LogView::updateLiveness()
{
    const QString &failure = m_failure;
    const bool connected = m_client && m_client->state() == RedisClient::State::Connected;
    m_live = connected && m_read.has_value() && failure.isEmpty();
    // Not live, and why, in the warning colour; but for a lost connection that the page above
    // already tells (a key view): then the line describes what is still shown, dimmed with it.
    const bool warn = connected ? !failure.isEmpty() && m_read : !m_lossShownAbove;
    QString text;
    if (warn) {
        const QString since = m_lastGoodAt.isValid() ? tr("values from %1 (%2)")
                                                           .arg(m_lastGoodAt.toString(QStringLiteral("HH:mm:ss")),
                                                                formatAgo(m_lastGoodAt.msecsTo(QDateTime::currentDateTime())))
                                                     : tr("nothing read yet");
        text = tr("⚠ Not live: %1; %2").arg(connected ? failure : tr("connection lost"), since);
    } else if (m_read) {
        const LogWindow &w = m_read->window;
        // The read reaches a window further back than the chart shows (the rolling count at the
        // chart's left edge counts it): said, so that the count is not read as the chart's.
        QString range = formatSpan(m_read->nowUs + 1 - m_read->readFromUs);
        if (m_read->axisFromUs > m_read->readFromUs)
            range += tr(" (the chart shows the last %1)").arg(formatSpan(m_read->nowUs + 1 - m_read->axisFromUs));
        text = w.bucketed ? tr("%1 entries read from the last %2: drawn from %3 bucket counts read on the server (no entries "
                               "downloaded)")
                                .arg(formatCount(w.total), range)
                                .arg(w.buckets.size())
                          : tr("%1 entries read from the last %2, all drawn").arg(formatCount(w.total), range);
        if (!m_read->spec)
            text += tr(". No policy or override gives limits for this key: no limit line and no rolling count.");
        else if (!m_read->peekProblem.isEmpty())
            text += tr(". Capacity not known: %1").arg(m_read->peekProblem);
        else if (w.bucketed && m_read->kind.format == KeyFormat::SlidingLog)
            text += tr(". The rolling count counts entries; costs come from the limiter's own peek.");
    }
    m_status->setText(text);
    m_status->setStyleSheet(warn ? QStringLiteral("QLabel { color: #c2410c; font-weight: bold; }") : QString());
    m_status->setEnabled(m_live || warn); // greyed with the chart and the entries
    dimWhileNotLive();
    if (m_live)
        m_staleTick.stop();
    else if (!m_staleTick.isActive())
        m_staleTick.start();
}

void LogView::dimWhileNotLive()
{
    // The chart faint and the entries' text grey, as the key's header is, while the values are
    // not live; each by itself (an opacity effect over the view would leave a ghost copy of it).
    setChartStale(m_chart, !m_live);
    QPalette entries; // nothing set: the table takes the view's palette
    if (!m_live) {
        const QColor grey = palette().color(QPalette::Disabled, QPalette::Text);
        for (const QPalette::ColorGroup group : {QPalette::Active, QPalette::Inactive})
            entries.setColor(group, QPalette::Text, grey);
    }
    m_table->setPalette(entries);
}

void LogView::updatePager()
{
    const qint64 total = m_model->total();
    const qint64 first = total ? m_model->offset() + 1 : 0;
    const qint64 last = m_model->offset() + m_model->rowCount();
    if (total)
        m_pageLabel->setText(tr("%1–%2 of %3").arg(formatCount(first), formatCount(last), formatCount(total)));
    else
        m_pageLabel->setText(m_filter ? tr("no entries in this range") : tr("no entries"));
    m_prev->setEnabled(m_model->offset() > 0);
    m_next->setEnabled(last < total);
    m_clearFilter->setEnabled(m_filter.has_value());
    if (m_filter && m_read) {
        m_filterLabel->setText(tr("Entries from %1 to %2 %3 (picked on the chart)")
                                   .arg(xOf(m_filter->first), 0, 'f', 2)
                                   .arg(xOf(m_filter->second - 1), 0, 'f', 2)
                                   .arg(QString(m_axisX->titleText()).section(QLatin1Char('('), 1).chopped(1)));
    } else {
        m_filterLabel->setText(m_filterLeft ? tr("The range picked has left the chart: every entry again, oldest first (drag across the "
                                                 "chart to pick another)")
                                            : tr("Entries on the time axis, oldest first (drag across the chart to pick a range)"));
    }
}

void LogView::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange) {
        applyPalette();
        dimWhileNotLive();
    }
    QWidget::changeEvent(event);
}

void LogView::applyPalette()
{
    const QPalette pal = palette();
    const bool dark = isDarkPalette(pal);
    applyChartPalette(m_chart, pal, QPalette::Base);
    const QColor text = pal.color(QPalette::Text);
    // Colours that read on white and on near-black alike.
    const QColor usedColor(dark ? 0x60a5fa : 0x1d4ed8), entryColor(dark ? 0xfbbf24 : 0xb45309), limitColor(dark ? 0xf87171 : 0xdc2626),
        oneColor(dark ? 0x4ade80 : 0x15803d), costColor(dark ? 0x2dd4bf : 0x0f766e), bucketColor(dark ? 0xa78bfa : 0x7c3aed);
    m_used->setPen(pen(usedColor, 2));
    m_limit->setPen(pen(limitColor, 2, Qt::DashLine));
    m_capacityOne->setPen(pen(oneColor, 2, Qt::DashDotLine));
    m_capacityCost->setPen(pen(costColor, 2, Qt::DotLine));
    m_bucketArea->setPen(pen(bucketColor, 1.5));
    QColor bucketFill = bucketColor;
    bucketFill.setAlphaF(dark ? 0.30f : 0.20f);
    m_bucketArea->setBrush(bucketFill);
    for (QLineSeries *s : {m_entries, m_weighted}) {
        s->setPen(QPen(Qt::transparent));
        s->setLightMarker(markerImage(entryColor, int(s->markerSize()), s == m_weighted));
        for (QLegendMarker *lm : m_chart->legend()->markers(s)) {
            lm->setShape(s == m_weighted ? QLegend::MarkerShapeRectangle : QLegend::MarkerShapeCircle);
            lm->setBrush(entryColor);
            lm->setPen(QPen(entryColor.darker(140)));
        }
    }
    QColor shade = text;
    shade.setAlphaF(dark ? 0.14f : 0.08f);
    m_expired->setBrush(shade);
    m_expired->setPen(Qt::NoPen);
    QColor picked = pal.color(QPalette::Highlight);
    picked.setAlphaF(dark ? 0.30f : 0.18f);
    m_picked->setBrush(picked);
    m_picked->setPen(Qt::NoPen);
    placeCostLabels();
}

} // namespace ratescope::ui
