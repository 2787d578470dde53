// A sliding log's window on a time axis inside a key's tab: admitted entries, the rolling count,
// the limit and where capacity returns, the expired part shaded, with the entries listed below
// (paged, filtered by a time range dragged on the chart). Big logs are drawn from per-bucket
// counts read on the server. Read-only: plain reads and peeks, one read in flight at most.
#pragma once

#include "logqueries.h"
#include "redisclient.h"

#include <QByteArray>
#include <QDateTime>
#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <optional>

class QAbstractItemModel;
class QAreaSeries;
class QCheckBox;
class QChart;
class QChartView;
class QGraphicsSimpleTextItem;
class QLabel;
class QLineSeries;
class QPushButton;
class QTableView;
class QValueAxis;

namespace ratescope::ui {

class LogEntriesModel;

class LogView : public QWidget {
    Q_OBJECT
public:
    static constexpr qint64 kEntryCap = LogReadRequest::kEntryCap;
    static constexpr int kBucketsPerWindow = LogReadRequest::kBucketsPerWindow;

    LogView(RedisClient *client, const QByteArray &key, QWidget *parent = nullptr);
    ~LogView() override;

    // What the key view learned in its last refresh: the limits in force (nullopt: no policy or
    // override gives any), the log's score unit (as classified), and the clock to draw against;
    // `kind`, what the key view read the key as, lets the first read take one round.
    // Triggers a read of the window for that now.
    void setContext(const std::optional<ratescope::LimitSpec> &spec, ratescope::ScoreUnit unit, qint64 nowUs,
                    const std::optional<ratescope::KeyKind> &kind = std::nullopt);
    bool isLoaded() const { return m_loaded; }
    // What the key view's read needs to read the log along with the key (history, time filter,
    // page, what the last read found); its key, limits and now are the key view's.
    ratescope::ui::LogReadRequest readSettings() const;
    // A read the key view made for this view (readKey with readSettings()): shown as this
    // view's own, with the context it was read in; no read of its own.
    void showRead(const std::optional<ratescope::LimitSpec> &spec, ratescope::ScoreUnit unit, const ratescope::KeyKind &kind,
                  const ratescope::ui::LogRead &read);

    // One more window of history before the current one (expired entries shaded).
    void setHistoryShown(bool shown);
    bool isHistoryShown() const { return m_history; }
    // The entries table's range; what dragging across the chart sets. Reads again.
    void setTimeFilter(qint64 fromUs, qint64 toUs);
    void clearTimeFilter();
    std::optional<std::pair<qint64, qint64>> timeFilter() const { return m_filter; }
    QString filterText() const; // what the line above the entries says of the range shown
    QString pageText() const;   // where the page shown is in the entries ("1–100 of 250")
    void setPageSize(int rows);
    int pageSize() const { return m_pageSize; }
    void nextPage();
    void previousPage();

    // For tests and the benchmark: what is drawn, in chart coordinates (x from xOf()).
    double xOf(qint64 timeUs) const;
    qint64 axisUnitUs() const { return m_axisUnitUs; }
    QLineSeries *usedSeries() const { return m_used; }
    QLineSeries *entrySeries() const { return m_entries; } // points only
    QLineSeries *limitSeries() const { return m_limit; }
    QLineSeries *capacityForOneSeries() const { return m_capacityOne; }
    QLineSeries *capacityForCostSeries() const { return m_capacityCost; }
    QLineSeries *bucketSeries() const { return m_buckets; } // the top of bucketArea()
    QAreaSeries *bucketArea() const { return m_bucketArea; }
    QAreaSeries *expiredSeries() const { return m_expired; }
    QAreaSeries *pickedRangeSeries() const { return m_picked; }
    QValueAxis *timeAxis() const { return m_axisX; }
    QChart *chart() const { return m_chart; }
    QChartView *chartView() const { return m_chartView; }
    QAbstractItemModel *entriesModel() const;
    QTableView *entriesTable() const { return m_table; }
    QString titleText() const;
    QString statusText() const;
    bool isBucketed() const { return m_read && m_read->window.bucketed; }
    qint64 entriesRead() const { return m_read ? m_read->window.entriesRead + qint64(m_read->page.entries.size()) : 0; }
    const LogRead *lastRead() const { return m_read ? &*m_read : nullptr; }
    bool isShownLive() const { return m_live; }
    // Inside a page that says the connection is lost and since when (a key view), this view
    // does not say it again: while not connected, its line describes what it still shows.
    void setConnectionLossShownAbove(bool shown) { m_lossShownAbove = shown; }
    int readsStarted() const { return m_reads; }
    int readsFinished() const { return m_readsDone; }
    bool isReading() const { return m_inFlight || m_pending; }

signals:
    void loaded();
    void refreshed(); // after every read, whether it came back or failed

protected:
    void changeEvent(QEvent *event) override;

private:
    struct Context {
        std::optional<LimitSpec> spec;
        ScoreUnit unit = ScoreUnit::Auto;
        qint64 nowUs = 0;
        std::optional<KeyKind> kind;
    };
    void startRead();
    void apply(const LogRead &read);
    void drawChart(const LogRead &read);
    void placeCostLabels();
    void showFailure(const QString &why);
    void updateLiveness();
    void dimWhileNotLive();
    void applyPalette();
    void updatePager();

    QPointer<RedisClient> m_client;
    QByteArray m_key;
    std::optional<Context> m_context;
    bool m_inFlight = false;
    bool m_pending = false; // a context or setting arrived while a read was in flight
    bool m_loaded = false;
    bool m_history = false;
    bool m_live = false;
    bool m_lossShownAbove = false;
    int m_reads = 0;
    int m_readsDone = 0;
    int m_pageSize = 100;
    qint64 m_pageOffset = 0;
    std::optional<std::pair<qint64, qint64>> m_filter;
    bool m_filterLeft = false; // a range picked has left the chart's axis, and was let go
    std::optional<LogRead> m_read;
    QString m_failure; // why the last read failed; empty after one that came back
    QDateTime m_lastGoodAt;
    QTimer m_staleTick; // local wall clock of the last read that came back
    qint64 m_axisUnitUs = 1000000;
    qint64 m_axisNowUs = 0;
    std::vector<std::pair<QPointF, QString>> m_costLabelPoints;
    std::vector<QGraphicsSimpleTextItem *> m_costLabels;

    QLabel *m_title;
    QLabel *m_status;
    QCheckBox *m_historyBox;
    QLabel *m_filterLabel;
    QPushButton *m_clearFilter;
    QChart *m_chart;
    QChartView *m_chartView;
    QValueAxis *m_axisX;
    QValueAxis *m_axisY;
    QValueAxis *m_axisBuckets;
    QLineSeries *m_used;
    QLineSeries *m_entries;
    QLineSeries *m_weighted;
    QLineSeries *m_limit;
    QLineSeries *m_capacityOne;
    QLineSeries *m_capacityCost;
    QLineSeries *m_buckets;
    QAreaSeries *m_bucketArea;
    QLineSeries *m_expiredUpper;
    QAreaSeries *m_expired;
    QLineSeries *m_pickedUpper;
    QAreaSeries *m_picked;
    LogEntriesModel *m_model;
    QTableView *m_table;
    QLabel *m_pageLabel;
    QPushButton *m_prev;
    QPushButton *m_next;
};

} // namespace ratescope::ui
