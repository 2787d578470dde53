#include "statechart.h"
#include "chartscale.h"
#include "chartpalette.h"

#include <QAreaSeries>
#include <QChart>
#include <QEvent>
#include <QGraphicsSimpleTextItem>
#include <QLegendMarker>
#include <QLineSeries>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace ratescope::ui {

namespace {

// Colours that read on a light and on a dark background alike; the rest comes from the palette.
const QColor kPrevious(0x78, 0x90, 0x9c);
const QColor kCurrent(0x42, 0x8b, 0xf5);
const QColor kEstimate(0xff, 0x98, 0x00);
const QColor kLimit(0xe5, 0x39, 0x35);
const QColor kTokens(0x43, 0xb0, 0x4a);
const QColor kTat(0xab, 0x47, 0xbc);

bool isBar(const QString &role)
{
    return role == QLatin1String("previous") || role == QLatin1String("current") || role == QLatin1String("count") ||
           role == QLatin1String("buckets");
}

// 1, 2 or 5 times a power of ten: tick steps a person reads at a glance.
} // namespace

StateChart::StateChart(QWidget *parent)
    : QChartView(parent)
{
    setRenderHint(QPainter::Antialiasing);
    setMinimumHeight(260);
    chart()->legend()->setAlignment(Qt::AlignBottom);
    chart()->setBackgroundRoundness(0);
    chart()->setMargins(QMargins(6, 6, 6, 6));
    QFont f = chart()->titleFont();
    f.setBold(true);
    f.setPointSizeF(f.pointSizeF() * 1.15);
    chart()->setTitleFont(f);
    m_label = new QGraphicsSimpleTextItem(chart());
    m_label->setZValue(10);
    connect(chart(), &QChart::plotAreaChanged, this, &StateChart::placeLabel);
    applyPalette();
}

void StateChart::placeLabel()
{
    const QList<QPointF> line = m_points.value(m_labelRole);
    const QXYSeries *series = m_series.value(m_labelRole);
    m_label->setVisible(!line.isEmpty() && series);
    if (line.isEmpty() || !series)
        return;
    // Its y in axis units is what the series holds; x at the left edge of the plot.
    const QPointF at = chart()->mapToPosition(QPointF(m_x->min(), series->at(0).y()), const_cast<QXYSeries *>(series));
    m_label->setPos(at + QPointF(6, -m_label->boundingRect().height() - 1));
}

QString StateChart::title() const
{
    return chart()->title();
}

QString StateChart::seriesName(const QString &role) const
{
    const QAbstractSeries *s = m_shown.value(role);
    return s ? s->name() : QString();
}

StateChart::Unit StateChart::unitFor(qint64 spanUs)
{
    if (spanUs <= 3000000)
        return {1e3, QStringLiteral("ms")};
    if (spanUs <= 300000000)
        return {1e6, QStringLiteral("s")};
    if (spanUs <= 3LL * 3600000000)
        return {60e6, QStringLiteral("min")};
    if (spanUs <= 3LL * 86400000000)
        return {3600e6, QStringLiteral("h")};
    return {86400e6, QStringLiteral("d")};
}

void StateChart::setFamily(Family family, const QStringList &roles, bool secondAxis)
{
    if (m_family == family)
        return;
    QChart *c = chart();
    c->removeAllSeries(); // deletes them
    for (QAbstractAxis *axis : c->axes()) {
        c->removeAxis(axis);
        delete axis;
    }
    m_series.clear();
    m_shown.clear();
    m_points.clear();
    m_family = family;
    m_x = new QValueAxis(c);
    m_y = new QValueAxis(c);
    m_y2 = nullptr;
    c->addAxis(m_x, Qt::AlignBottom);
    c->addAxis(m_y, Qt::AlignLeft);
    if (secondAxis) {
        m_y2 = new QValueAxis(c);
        c->addAxis(m_y2, Qt::AlignRight);
    }
    for (const QString &role : roles) {
        auto *line = new QLineSeries(c);
        QAbstractSeries *shown = line;
        if (isBar(role))
            shown = new QAreaSeries(line);
        c->addSeries(shown);
        shown->attachAxis(m_x);
        shown->attachAxis(m_y);
        m_series.insert(role, line);
        m_shown.insert(role, shown);
    }
    applyPalette();
}

void StateChart::setPoints(const QString &role, const QList<QPointF> &pointsUs, const QString &name)
{
    m_points.insert(role, pointsUs);
    QList<QPointF> scaled;
    scaled.reserve(pointsUs.size());
    for (const QPointF &p : pointsUs)
        scaled.append(QPointF(p.x() / m_unit.us, p.y()));
    if (QXYSeries *s = m_series.value(role))
        s->replace(scaled); // one replace per refresh: no clear + append
    if (QAbstractSeries *shown = m_shown.value(role)) {
        shown->setName(name);
        shown->setVisible(!pointsUs.isEmpty());
        for (QLegendMarker *m : chart()->legend()->markers(shown))
            m->setVisible(!pointsUs.isEmpty());
    }
}

void StateChart::setLabel(const QString &role, const QString &text)
{
    m_labelRole = role;
    m_label->setText(text);
    placeLabel();
}

void StateChart::setSecondAxis(double max, int ticks, const QString &title)
{
    m_y2->setRange(0, max);
    m_y2->setTickType(QValueAxis::TicksDynamic);
    m_y2->setTickAnchor(0);
    m_y2->setTickInterval(std::max(1.0, niceStep(m_y2->max(), ticks)));
    m_y2->setLabelFormat(QStringLiteral("%g"));
    m_y2->setGridLineVisible(false);
    m_y2->setTitleText(title);
}

void StateChart::setRanges(qint64 fromUs, qint64 toUs, double yMax, const QString &yTitle)
{
    const double from = double(fromUs) / m_unit.us, to = double(toUs) / m_unit.us;
    m_x->setRange(from, to);
    m_x->setTickType(QValueAxis::TicksDynamic);
    m_x->setTickAnchor(0); // a tick at now
    m_x->setTickInterval(niceStep(to - from, 8));
    m_x->setLabelFormat(QStringLiteral("%g"));
    m_x->setTitleText(QStringLiteral("time from now (%1)").arg(m_unit.name));
    // Exact rather than "nice" bounds: rounding 22 up to 40 would leave half the chart empty.
    m_y->setRange(0, std::max(1.0, yMax));
    m_y->setTickType(QValueAxis::TicksDynamic);
    m_y->setTickAnchor(0);
    m_y->setTickInterval(std::max(1.0, niceStep(m_y->max(), 5)));
    m_y->setLabelFormat(QStringLiteral("%g"));
    m_y->setTitleText(yTitle);
}

void StateChart::showSlidingCounter(const QString &title, qint64 windowUs, qint64 elapsedUs, qint64 previous, qint64 current,
                                    std::optional<qint64> limit)
{
    setFamily(Family::SlidingCounter, {QStringLiteral("previous"), QStringLiteral("current"), QStringLiteral("estimate"),
                                       QStringLiteral("limit"), QStringLiteral("boundary"), QStringLiteral("now")});
    chart()->setTitle(title);
    const qint64 W = windowUs, e = elapsedUs, toBoundary = W - e;
    m_unit = unitFor(2 * W);
    const double top = double(std::max({previous, current, limit.value_or(0)}));
    setRanges(-(W + e), toBoundary, top * 1.12, QStringLiteral("requests (cost units)"));
    setPoints(QStringLiteral("previous"), {QPointF(-(W + e), previous), QPointF(-e, previous)},
              QStringLiteral("Previous: %1").arg(previous));
    setPoints(QStringLiteral("current"), {QPointF(-e, current), QPointF(toBoundary, current)},
              QStringLiteral("Current: %1").arg(current));
    // The previous window's share falls linearly to nothing at the boundary.
    const double weight = double(toBoundary) / double(W);
    setPoints(QStringLiteral("estimate"), {QPointF(0, double(previous) * weight + double(current)), QPointF(toBoundary, current)},
              QStringLiteral("Estimate: %1").arg(double(previous) * weight + double(current), 0, 'f', 1));
    setPoints(QStringLiteral("limit"), limit ? QList<QPointF>{QPointF(-(W + e), *limit), QPointF(toBoundary, *limit)} : QList<QPointF>{},
              QStringLiteral("Limit: %1").arg(limit.value_or(0)));
    setLabel(QStringLiteral("limit"), QStringLiteral("limit %1").arg(limit.value_or(0)));
    const double y = m_y->max();
    setPoints(QStringLiteral("boundary"), {QPointF(toBoundary, 0), QPointF(toBoundary, y)}, QStringLiteral("Next window"));
    setPoints(QStringLiteral("now"), {QPointF(0, 0), QPointF(0, y)}, QStringLiteral("Now"));
}

void StateChart::showSlidingBuckets(const QString &title, double widthUs, double elapsedUs, const QList<qint64> &counts, qint64 limit)
{
    setFamily(Family::SlidingBuckets,
              {QStringLiteral("previous"), QStringLiteral("buckets"), QStringLiteral("estimate"), QStringLiteral("limit"),
               QStringLiteral("boundary"), QStringLiteral("now")},
              true);
    chart()->setTitle(title);
    const qsizetype b = counts.size() - 1;
    const double w = widthUs, e = elapsedUs, window = double(b) * w;
    if (b < 1 || w <= 0)
        return;
    const double from = -(window + e), to = window + w - e;
    m_unit = unitFor(qint64(to - from));
    // From now on: the buckets after the weighted one count whole, that one by its overlap
    // (continuous: a bucket weighs whole when it becomes the weighted one).
    QList<QPointF> ahead;
    qint64 after = 0; // sum of counts[m + 1 .. b]
    for (qsizetype k = 1; k <= b; ++k)
        after += counts[k];
    for (qsizetype m = 0; m <= b; ++m) {
        const double start = m == 0 ? 0 : double(m) * w - e, left = m == 0 ? w - e : w;
        ahead.append(QPointF(start, double(after) + double(counts[m]) * left / w));
        if (m < b)
            after -= counts[m + 1];
    }
    ahead.append(QPointF(to, 0));
    const double peak = std::max(double(limit), ahead.first().y());
    setRanges(qint64(std::floor(from)), qint64(std::ceil(to)), peak * 1.12, QStringLiteral("cost units"));
    // Buckets big next to the limit share its axis; small ones (many buckets, traffic spread
    // out) get one of their own on the right, or they would be slivers.
    const qint64 top = std::max<qint64>(1, *std::max_element(counts.begin(), counts.end()));
    const bool ownAxis = double(top) * 5 < peak;
    for (const QString &bar : {QStringLiteral("previous"), QStringLiteral("buckets")}) {
        QAbstractSeries *shown = m_shown.value(bar);
        QValueAxis *want = ownAxis ? m_y2 : m_y, *other = ownAxis ? m_y : m_y2;
        if (!shown->attachedAxes().contains(want)) {
            shown->detachAxis(other);
            shown->attachAxis(want);
        }
    }
    m_y2->setVisible(ownAxis);
    setSecondAxis(double(top) * 1.12, 5, QStringLiteral("per bucket"));
    // Bars as step lines: the weighted oldest bucket, then the b newer ones.
    setPoints(QStringLiteral("previous"), {QPointF(from, counts[0]), QPointF(from + w, counts[0])},
              QStringLiteral("Oldest (%1 % counted)").arg(100.0 * (w - e) / w, 0, 'f', 0));
    QList<QPointF> bars;
    for (qsizetype k = 1; k <= b; ++k) {
        const double start = from + double(k) * w;
        bars << QPointF(start, counts[k]) << QPointF(start + w, counts[k]);
    }
    setPoints(QStringLiteral("buckets"), bars, ownAxis ? QStringLiteral("Buckets (right axis)") : QStringLiteral("Buckets"));
    setPoints(QStringLiteral("estimate"), ahead, QStringLiteral("In use as they leave"));
    setPoints(QStringLiteral("limit"), {QPointF(from, limit), QPointF(to, limit)}, QStringLiteral("Limit %1").arg(limit));
    setLabel(QStringLiteral("limit"), QStringLiteral("limit %1").arg(limit));
    const double y = m_y->max();
    setPoints(QStringLiteral("boundary"), {QPointF(-window, 0), QPointF(-window, y)}, QStringLiteral("Window start"));
    setPoints(QStringLiteral("now"), {QPointF(0, 0), QPointF(0, y)}, QStringLiteral("Now"));
}

void StateChart::showFixedWindow(const QString &title, qint64 windowUs, qint64 elapsedUs, qint64 count, std::optional<qint64> limit)
{
    setFamily(Family::FixedWindow, {QStringLiteral("count"), QStringLiteral("limit"), QStringLiteral("boundary"), QStringLiteral("now")});
    chart()->setTitle(title);
    const qint64 W = windowUs, e = elapsedUs, toBoundary = W - e;
    const qint64 from = -e, to = toBoundary + W / 4; // a little of the next window: empty again
    m_unit = unitFor(to - from);
    const double top = double(std::max(count, limit.value_or(0)));
    setRanges(from, to, top * 1.12, QStringLiteral("requests (cost units)"));
    setPoints(QStringLiteral("count"), {QPointF(-e, count), QPointF(toBoundary, count)}, QStringLiteral("This window: %1").arg(count));
    setPoints(QStringLiteral("limit"), limit ? QList<QPointF>{QPointF(from, *limit), QPointF(to, *limit)} : QList<QPointF>{},
              QStringLiteral("Limit: %1").arg(limit.value_or(0)));
    setLabel(QStringLiteral("limit"), QStringLiteral("limit %1").arg(limit.value_or(0)));
    const double y = m_y->max();
    setPoints(QStringLiteral("boundary"), {QPointF(toBoundary, 0), QPointF(toBoundary, y)}, QStringLiteral("Reset"));
    setPoints(QStringLiteral("now"), {QPointF(0, 0), QPointF(0, y)}, QStringLiteral("Now"));
}

void StateChart::showTokenBucket(const QString &title, qint64 limit, qint64 windowUs, qint64 cost, qint64 tokensNow, qint64 retryAfterUs,
                                 qint64 resetAfterUs)
{
    setFamily(Family::TokenBucket, {QStringLiteral("tokens"), QStringLiteral("cost"), QStringLiteral("limit"), QStringLiteral("now")});
    chart()->setTitle(title);
    // Show at least a quarter window ahead, so a full bucket still reads as a flat line.
    const qint64 to = std::max(resetAfterUs, windowUs / 4) * 23 / 20;
    m_unit = unitFor(to);
    setRanges(0, to, double(limit) * 1.12, QStringLiteral("tokens"));
    QList<QPointF> curve{QPointF(0, tokensNow)};
    if (resetAfterUs > 0)
        curve.append(QPointF(resetAfterUs, limit));
    curve.append(QPointF(to, limit));
    setPoints(QStringLiteral("tokens"), curve,
              resetAfterUs > 0
                  ? QStringLiteral("Tokens (full in %1 %2)").arg(double(resetAfterUs) / m_unit.us, 0, 'g', 3).arg(m_unit.name)
                  : QStringLiteral("Tokens (full)"));
    // The level a request needs: the curve crosses it when a denied request would pass.
    setPoints(QStringLiteral("cost"), retryAfterUs > 0 ? QList<QPointF>{QPointF(0, cost), QPointF(to, cost)} : QList<QPointF>{},
              QStringLiteral("Cost %1: passes in %2 %3")
                  .arg(cost)
                  .arg(double(retryAfterUs) / m_unit.us, 0, 'g', 3)
                  .arg(m_unit.name));
    setPoints(QStringLiteral("limit"), {QPointF(0, limit), QPointF(to, limit)}, QStringLiteral("Capacity: %1").arg(limit));
    setLabel(QStringLiteral("limit"), QStringLiteral("capacity %1").arg(limit));
    setPoints(QStringLiteral("now"), {QPointF(0, 0), QPointF(0, m_y->max())}, QStringLiteral("Now"));
}

void StateChart::showGcra(const QString &title, qint64 limit, qint64 windowUs, qint64 cost, qint64 tatAheadUs, qint64 retryAfterUs,
                          qint64 resetAfterUs)
{
    setFamily(Family::Gcra, {QStringLiteral("tat"), QStringLiteral("next"), QStringLiteral("allowance"), QStringLiteral("now")}, true);
    chart()->setTitle(title);
    // TAT runs back towards now at one second per second; a request of `cost` pushes it
    // cost * T further, and passes while that stays within one window of now.
    const double costUs = double(cost) * double(windowUs) / double(limit);
    const qint64 nextAhead = tatAheadUs + qint64(std::llround(costUs));
    const qint64 to = std::max({nextAhead, retryAfterUs, windowUs / 4}) * 23 / 20;
    m_unit = unitFor(std::max(to, windowUs));
    // Both vertical axes share one scale: time ahead on the left, the same read as requests.
    const double yTop = 1.2;
    setRanges(0, to, 1, QString());
    m_y->setRange(0, double(windowUs) * yTop / m_unit.us);
    m_y->setTickType(QValueAxis::TicksDynamic);
    m_y->setTickAnchor(0);
    m_y->setTickInterval(niceStep(m_y->max(), 6));
    m_y->setTitleText(QStringLiteral("TAT ahead of now (%1)").arg(m_unit.name));
    setSecondAxis(double(limit) * yTop, 6, QStringLiteral("capacity in use (requests)"));
    // Points are in µs on both axes; y goes through the same unit as x.
    auto scaledY = [this](QList<QPointF> pts) {
        for (QPointF &p : pts)
            p.setY(p.y() / m_unit.us);
        return pts;
    };
    QList<QPointF> tat{QPointF(0, tatAheadUs)};
    if (tatAheadUs > 0)
        tat.append(QPointF(tatAheadUs, 0));
    tat.append(QPointF(to, 0));
    // With the request asked about: allowed, it falls to now at resetAfterUs (the peek's own
    // figure); denied, it starts above the allowance and nothing is stored.
    const qint64 nextEnd = retryAfterUs > 0 ? nextAhead : resetAfterUs;
    const QList<QPointF> next{QPointF(0, nextAhead), QPointF(nextEnd, 0)};
    const QList<QPointF> allowance{QPointF(0, windowUs), QPointF(to, windowUs)};
    setPoints(QStringLiteral("tat"), scaledY(tat), QStringLiteral("TAT − now"));
    setPoints(QStringLiteral("next"), scaledY(next),
              retryAfterUs > 0 ? QStringLiteral("One more (cost %1): passes in %2 %3")
                                     .arg(cost)
                                     .arg(double(retryAfterUs) / m_unit.us, 0, 'g', 3)
                                     .arg(m_unit.name)
                               : QStringLiteral("One more (cost %1)").arg(cost));
    setPoints(QStringLiteral("allowance"), scaledY(allowance), QStringLiteral("Allowance: %1 = one window").arg(limit));
    setLabel(QStringLiteral("allowance"), QStringLiteral("burst allowance (%1 requests)").arg(limit));
    setPoints(QStringLiteral("now"), {QPointF(0, 0), QPointF(0, m_y->max())}, QStringLiteral("Now"));
    // What the tests compare: µs on both axes.
    m_points.insert(QStringLiteral("tat"), tat);
    m_points.insert(QStringLiteral("next"), next);
    m_points.insert(QStringLiteral("allowance"), allowance);
}

void StateChart::changeEvent(QEvent *event)
{
    QChartView::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        applyPalette();
}

void StateChart::styleSeries(const QString &role)
{
    QAbstractSeries *shown = m_shown.value(role);
    QXYSeries *line = m_series.value(role);
    if (!shown || !line)
        return;
    const QColor text = palette().color(QPalette::WindowText);
    if (auto *area = qobject_cast<QAreaSeries *>(shown)) {
        QColor c = role == QLatin1String("previous") ? kPrevious : kCurrent;
        area->setPen(QPen(c, 2));
        c.setAlpha(110);
        area->setBrush(c);
        return;
    }
    QPen pen;
    pen.setWidthF(2.5);
    if (role == QLatin1String("estimate"))
        pen.setColor(kEstimate);
    else if (role == QLatin1String("tokens"))
        pen.setColor(kTokens);
    else if (role == QLatin1String("tat"))
        pen.setColor(kTat);
    else if (role == QLatin1String("limit") || role == QLatin1String("allowance")) {
        pen.setColor(kLimit);
        pen.setWidthF(2);
        pen.setStyle(Qt::DashLine);
    } else if (role == QLatin1String("next")) { // what one more request would do: as the estimate
        pen.setColor(kEstimate);
        pen.setWidthF(1.5);
        pen.setStyle(Qt::DashDotLine);
    } else if (role == QLatin1String("cost")) {
        pen.setColor(kEstimate);
        pen.setWidthF(1.5);
        pen.setStyle(Qt::DotLine);
    } else if (role == QLatin1String("boundary")) {
        QColor c = text;
        c.setAlpha(150);
        pen = QPen(c, 1.5, Qt::DashLine);
    } else { // now
        pen = QPen(text, 1);
    }
    line->setPen(pen);
}

void StateChart::applyPalette()
{
    const QPalette pal = palette();
    applyChartPalette(chart(), pal);
    m_label->setBrush(kLimit.lighter(isDarkPalette(pal) ? 130 : 90));
    setBackgroundBrush(pal.color(QPalette::Window));
    for (auto it = m_shown.cbegin(); it != m_shown.cend(); ++it)
        styleSeries(it.key());
}

} // namespace ratescope::ui
