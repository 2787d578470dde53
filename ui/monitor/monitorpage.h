// The Monitor tab: remaining quota over time for pinned keys, one line per key (absolute or
// % of its limit), polled in one pipelined round trip per tick on the worker, with the last
// ten minutes kept per key in a ring. Read-only: peeks and plain reads, never a check.
#pragma once

#include "redisclient.h"
#include "ticktimer.h"

#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

class QChart;
class QChartView;
class QComboBox;
class QDateTimeAxis;
class QGraphicsLineItem;
class QLabel;
class QLineSeries;
class QPushButton;
class QScatterSeries;
class QTableView;
class QValueAxis;

namespace ratescope::ui {

class MonitorLegendModel;
struct MonitorPin;

class MonitorPage : public QWidget {
    Q_OBJECT
public:
    static constexpr qint64 kHistoryUs = 10LL * 60 * 1000000; // what each key's ring holds
    static constexpr int kDefaultIntervalMs = 250;
    static const QList<int> &intervalChoicesMs(); // 100 ms .. 10 s

    explicit MonitorPage(QWidget *parent = nullptr);
    ~MonitorPage() override;

    // Polls through `client` (nullptr: disconnected, keeps the pins and the history shown as stale).
    // ns: Ratescope's metadata prefix ("ratescope:") for policies and overrides.
    void setClient(RedisClient *client, const QByteArray &ns);
    void pin(const QByteArray &key);
    void unpin(const QByteArray &key);
    QList<QByteArray> pinnedKeys() const;
    bool isLoaded() const; // every pinned key has at least one sample drawn (true when none pinned)

    // Controls (the toolbar's, also for tests and the command line).
    void setIntervalMs(int ms);
    int intervalMs() const { return m_intervalMs; }
    void setSpanMinutes(int minutes); // 1, 5 or 10: the time axis
    int spanMinutes() const { return m_spanMinutes; }
    void setShowPercent(bool percent); // remaining as % of each key's limit, or in units
    bool showsPercent() const { return m_percent; }
    void setPaused(bool paused);
    bool isPaused() const { return m_paused; }

    // The chart as shown, and one CSV row per tick per key
    // (time_us,key,used,limit,remaining,retry_after_ms; key escaped). False with *error set.
    bool exportPng(const QString &path, QString *error = nullptr);
    bool exportCsv(const QString &path, QString *error = nullptr);

    // For tests and benchmarks: a frozen or explicit clock (µs since the epoch) instead of the
    // server's; ticks driven by tickNow() only; what the page holds and has sent.
    void setClock(std::function<qint64()> nowUs);
    void setAutoTick(bool on);
    void tickNow();
    bool isTickInFlight() const { return m_inFlight; }
    bool isBusy() const; // a tick or a classification under way, or keys waiting for one
    qint64 ticksSent() const { return m_ticksSent; }
    qint64 ticksSkipped() const { return m_ticksSkipped; }
    qint64 roundTrips() const { return m_roundTrips; }
    size_t samplesHeld(const QByteArray &key) const;
    size_t historyBytes() const; // the rings' memory
    QString noteText() const;    // the connection note; empty while live
    QString statusText() const;
    MonitorLegendModel *legend() const { return m_legend; }
    QChart *chart() const { return m_chart; }
    // What the chart says under the mouse at this time (µs since the epoch): each drawn key's
    // reading nearest to it, the emptiest first; empty where no key has one close by.
    QString readingsAt(qint64 timeUs) const;

signals:
    void loaded();
    void ticked(); // a tick's answer has been drawn

protected:
    void changeEvent(QEvent *event) override;
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    MonitorPin *find(const QByteArray &key) const;
    MonitorPin *findId(quint64 id) const;
    qint64 nowUs() const;
    void onStateChanged(RedisClient::State state);
    void markLost(const QString &why);
    void requestClassification();
    void tick();
    void applyRound(const std::vector<quint64> &ids, const struct MonitorRound &round);
    void redraw();
    void refreshLegendRow(MonitorPin &pin);
    void updateNote();
    void updateStatus();
    void applyTheme();
    void styleSeries(MonitorPin &pin);
    void checkLoaded();
    void restartTimer();
    void showReadingsAt(const QPoint &viewPos, const QPoint &globalPos); // the crosshair and its tooltip
    void hideReadings();
    void unpinSelected();

    QPointer<RedisClient> m_client;
    QByteArray m_ns;
    QObject *m_requests; // owner of this page's requests: cancelled when the client changes
    std::vector<std::unique_ptr<MonitorPin>> m_pins;
    quint64 m_nextId = 1;
    int m_nextColor = 0;

    std::function<qint64()> m_clock;
    qint64 m_offsetUs = 0; // server clock - this machine's
    qint64 m_lastNowUs = 0;
    bool m_autoTick = true;
    bool m_inFlight = false;
    bool m_classifying = false;
    bool m_paused = false;
    bool m_percent = true;
    bool m_lost = false;
    bool m_stale = false;
    bool m_wasLoaded = true;
    qint64 m_lostAtUs = 0;
    QString m_lostWhy;
    int m_intervalMs = kDefaultIntervalMs;
    int m_spanMinutes = 5;
    qint64 m_ticksSent = 0;
    qint64 m_ticksSkipped = 0;
    qint64 m_roundTrips = 0;
    std::vector<qint64> m_recentSkips; // local ms of skipped ticks in the last minute
    TickTimer m_timer; // on the client's shared tick
    RedisClient::RepeatMemory m_roundMemory = RedisClient::newRepeatMemory();

    QComboBox *m_intervalBox;
    QComboBox *m_spanBox;
    QComboBox *m_modeBox;
    QPushButton *m_pauseButton;
    QPushButton *m_unpinButton;
    QLabel *m_note;
    QLabel *m_status;
    QChart *m_chart;
    QChartView *m_chartView;
    QDateTimeAxis *m_timeAxis;
    QValueAxis *m_valueAxis;
    QLineSeries *m_limitLine; // % mode: every key's limit is 100 %
    QGraphicsLineItem *m_crosshair = nullptr; // the time under the mouse
    std::optional<QPoint> m_hoverAt;           // where the mouse is over the chart (its readings follow each tick)
    QScatterSeries *m_deniedMarks;
    QTableView *m_legendView;
    MonitorLegendModel *m_legend;
};

} // namespace ratescope::ui
