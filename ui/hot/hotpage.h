// The Hot view: which limiters take the most admitted requests right now, which are the
// fullest, and which are denying now, from one bounded pass over the keyspace (core's
// HotScanner, as `ratescope-cli top`), and on a cluster each master's share of the traffic,
// so that a hotspot master shows. The pass runs on the connection's worker in steps (a few
// SCAN pages at a time, so that the console's other reads go between them), then waits one
// interval on this side and reads again. Refreshed on request or every interval while shown.
#pragma once

#include "load/hotlimiters.h"
#include "redisclient.h"

#include <QElapsedTimer>
#include <QTimer>
#include <QWidget>

#include <memory>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;

namespace ratescope::ui {

class HotLimiterModel;
class HotMasterModel;

class HotPage : public QWidget {
    Q_OBJECT
public:
    static constexpr int kPagesPerStep = 20; // SCAN pages per worker request

    explicit HotPage(QWidget *parent = nullptr);
    ~HotPage() override;

    // nullptr: disconnected (what was shown stays, marked as of its time).
    void setClient(RedisClient *client, const QByteArray &ns);

    // The controls, as an operator sets them.
    void setOrder(HotOrder order);
    void setIntervalUs(qint64 us); // one of the interval box's choices, or added to it
    void setMaxRows(int rows);
    void setMatch(const QString &glob);
    void setSampleAbove(qint64 keys);
    void setAutoRefresh(bool on);

    // Starts a pass (one under way is dropped first).
    void refresh();
    void cancel();
    bool isRunning() const { return m_running; }
    // A pass has ended (with rows or a problem) since the page was last asked to refresh.
    bool isLoaded() const { return m_loaded; }

    HotLimiterModel *model() const { return m_model; }
    HotMasterModel *masters() const { return m_masters; }
    QTableView *view() const { return m_view; }
    QTableView *mastersView() const { return m_mastersView; }
    QString statusText() const;
    QPushButton *refreshButton() const { return m_refresh; }

signals:
    void loaded();     // a pass ended (rows or a problem)
    void progressed(); // a step of the scan was read
    void openKeyRequested(const QByteArray &key);

protected:
    void showEvent(QShowEvent *event) override;
    void hideEvent(QHideEvent *event) override;

private:
    void scanStep();
    void readFirst();
    void readSecond();
    void finished(HotPass pass);
    void failed(const QString &why);
    void setStatus(const QString &text, bool problem = false);
    void updateControls();
    HotOptions optionsFromControls(const std::vector<Policy> &policies) const;
    // The table's columns fitted to its width (fitwidth.h): the limiter keeps a readable width,
    // then used / limit, admitted / s, fill, (on a cluster) master and algorithm while they fit.
    void fitColumns();

    QPointer<RedisClient> m_client;
    QByteArray m_ns;
    QObject m_requests;                    // owner of this page's requests
    std::shared_ptr<HotScanner> m_scanner; // used on the worker only, one step at a time
    HotOrder m_runOrder = HotOrder::Rate;
    int m_runMax = 50;
    bool m_running = false;
    bool m_loaded = false;
    bool m_everShown = false;
    bool m_cluster = false; // the last pass read several masters: the master column is wanted
    int m_generation = 0;
    QElapsedTimer m_clock; // since the pass started
    QTimer m_wait;         // the interval between the two reads
    QTimer m_again;        // auto-refresh: the next pass
    QString m_status;

    QComboBox *m_order;
    QComboBox *m_interval;
    QSpinBox *m_max;
    QLineEdit *m_match;
    QSpinBox *m_sample;
    QPushButton *m_refresh;
    QCheckBox *m_auto;
    QLabel *m_statusLabel;
    QProgressBar *m_progress;
    HotLimiterModel *m_model;
    QSortFilterProxyModel *m_sorted;
    QTableView *m_view;
    HotMasterModel *m_masters;
    QTableView *m_mastersView;
    QLabel *m_mastersTitle;
};

} // namespace ratescope::ui
