// The state of a counter, token-bucket or GCRA limiter drawn on a time axis around now: the
// windows and their counts, the tokens and their refill, the theoretical arrival time and the
// burst allowance, each against the limit. Pure drawing: the key view reads, this draws.
#pragma once

#include <QChartView>
#include <QHash>
#include <QPointF>

#include <optional>

class QAbstractSeries;
class QGraphicsSimpleTextItem;
class QValueAxis;
class QXYSeries;

namespace ratescope::ui {

class StateChart : public QChartView {
    Q_OBJECT
public:
    enum class Family { None, SlidingCounter, FixedWindow, TokenBucket, Gcra, SlidingBuckets };

    explicit StateChart(QWidget *parent = nullptr);

    // Two clock-aligned windows: the previous one weighs (window - elapsed) / window of its
    // count until the boundary. No limit: counter windows no policy gives a limit.
    void showSlidingCounter(const QString &title, qint64 windowUs, qint64 elapsedUs, qint64 previous, qint64 current,
                            std::optional<qint64> limit);
    // Clock-aligned sub-buckets of widthUs, counts[0..B] being the buckets from the weighted
    // oldest one to the current one (elapsedUs into it), drawn as bars (right axis, per
    // bucket); and how much of the limit is in use from now on as they leave the window
    // (left axis), if nothing else is admitted.
    void showSlidingBuckets(const QString &title, double widthUs, double elapsedUs, const QList<qint64> &counts, qint64 limit);
    // One clock-aligned window: its count until the boundary resets it.
    void showFixedWindow(const QString &title, qint64 windowUs, qint64 elapsedUs, qint64 count, std::optional<qint64> limit);
    // Tokens now, refilled at limit per window up to the limit, full after resetAfterUs; a
    // request of `cost` passes once the curve reaches it (retryAfterUs).
    void showTokenBucket(const QString &title, qint64 limit, qint64 windowUs, qint64 cost, qint64 tokensNow, qint64 retryAfterUs,
                         qint64 resetAfterUs);
    // How far the theoretical arrival time runs ahead of now, falling back to now by
    // resetAfterUs; a request passes while its TAT stays within the burst allowance (one window).
    void showGcra(const QString &title, qint64 limit, qint64 windowUs, qint64 cost, qint64 tatAheadUs, qint64 retryAfterUs,
                  qint64 resetAfterUs);

    Family family() const { return m_family; }
    QString title() const;
    // The points drawn for a role ("previous", "current", "estimate", "count", "limit",
    // "boundary", "tokens", "tat", "allowance", "buckets"), x in µs from now: what the tests compare.
    QList<QPointF> points(const QString &role) const { return m_points.value(role); }
    QString seriesName(const QString &role) const;

protected:
    void changeEvent(QEvent *event) override;

private:
    struct Unit {
        double us;
        QString name;
    };
    static Unit unitFor(qint64 spanUs);

    void setFamily(Family family, const QStringList &roles, bool secondAxis = false);
    void setPoints(const QString &role, const QList<QPointF> &pointsUs, const QString &name);
    void setRanges(qint64 fromUs, qint64 toUs, double yMax, const QString &yTitle);
    // The right axis (0 .. max, about `ticks` ticks): an own scale, no grid of its own.
    void setSecondAxis(double max, int ticks, const QString &title);
    void applyPalette();
    void styleSeries(const QString &role);
    void setLabel(const QString &role, const QString &text);
    void placeLabel(); // the limit line's own label, at its left end

    Family m_family = Family::None;
    QHash<QString, QXYSeries *> m_series; // per role; an area's upper line for bars
    QHash<QString, QAbstractSeries *> m_shown;
    QHash<QString, QList<QPointF>> m_points;
    QValueAxis *m_x = nullptr;
    QValueAxis *m_y = nullptr;
    QValueAxis *m_y2 = nullptr; // GCRA: the same scale read as requests
    Unit m_unit{1e6, QStringLiteral("s")};
    QGraphicsSimpleTextItem *m_label = nullptr;
    QString m_labelRole; // the series the label names ("limit", "allowance")
};

} // namespace ratescope::ui
