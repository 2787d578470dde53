// A key's tab: what the key is, the policy and override in force, how full it is and when
// capacity returns, and its state drawn on a time axis in the way of its algorithm (a sliding
// log through LogView). Read-only; refreshed while shown, one read in flight at most.
#pragma once

#include "keyactions.h"

#include "base/keytext.h" // displayKey: how the view and its tab name the key
#include "keyviewqueries.h"
#include "redisclient.h"
#include "ticktimer.h"

#include <QJsonObject>
#include <QPointer>
#include <QWidget>

#include <optional>

class QComboBox;
class QGridLayout;
class QLabel;
class QProgressBar;
class QPushButton;
class QStackedWidget;

namespace ratescope::ui {

class LogView;
class ShardChart;
class StateChart;

class KeyView : public QWidget {
    Q_OBJECT
public:
    KeyView(RedisClient *client, const QByteArray &key, const QByteArray &ns, QWidget *parent = nullptr);
    ~KeyView() override;

    QByteArray key() const { return m_key; }
    void refresh(); // read again now
    bool isLoaded() const;
    // A header value by its label ("Node", "Used", ...): for tests.
    QString fieldText(const QString &name) const;
    // Shows the state as of this time (tests); nullopt: the server's clock.
    void setFrozenNow(std::optional<qint64> nowUs);

    // Auto-refresh period in ms (0: off). Runs only while the view is visible.
    void setRefreshInterval(int ms);
    int refreshInterval() const { return m_interval; }
    // The period the view is read at: the interval chosen, paced on a slow link
    // (RedisClient::pacedMs); 0 while not refreshing.
    int effectiveRefreshMs() const { return m_timer.isActive() ? m_timer.interval() : 0; }
    bool isAutoRefreshActive() const { return m_timer.isActive(); }
    int readsStarted() const { return m_reads; }

    // What was drawn last: the decision the core's peek gave for that now (nullopt: none).
    std::optional<Decision> decision() const { return m_decision; }
    qint64 usedNow() const { return m_usedNow; }
    const KeyRead &lastRead() const { return m_last; }
    StateChart *stateChart() const { return m_chart; }
    ShardChart *shardChart() const { return m_shardChart; } // nullptr until a sharded group is shown
    LogView *logView() const { return m_log; }
    QString titleText() const;
    QString messageText() const; // what stands in place of a chart ("not a limiter", ...)
    bool isStale() const { return m_stale; }
    QString staleText() const;

signals:
    void loaded();
    void refreshed(); // every good read, once drawn
    void pinRequested(const QByteArray &key);
    // The "Actions" menu: burst, change limit, edit policy, reset (see keyactions.h).
    void keyActionRequested(ratescope::ui::KeyAction action, const QList<QByteArray> &keys);

protected:
    void showEvent(QShowEvent *event) override;
    void hideEvent(QHideEvent *event) override;

private:
    QLabel *addField(const QString &name, int row, int column);
    void draw(const KeyRead &read);
    void showHeader(const KeyRead &read);
    void showState(const KeyRead &read);
    void showShards(const KeyRead &read);
    void showLibrary(const KeyRead &read, const QJsonObject &state);
    void colourBar(double fraction);
    void setBarText(const QString &text); // beside the bar, and the bar's accessible text
    void showMessage(const QString &text);
    void setStale(bool stale);
    void checkLoaded();
    void updateTimer();

    QPointer<RedisClient> m_client;
    QByteArray m_key;
    QByteArray m_ns;
    std::optional<qint64> m_frozenNow;
    int m_interval = 1000;
    int m_reads = 0;
    bool m_pending = false;
    bool m_again = false;
    bool m_drawn = false;
    bool m_loaded = false;
    bool m_stale = false;
    bool m_hasData = false;
    KeyRead m_last;
    std::optional<Decision> m_decision;
    qint64 m_usedNow = -1;

    QLabel *m_title;
    QWidget *m_fieldsBox;
    QGridLayout *m_grid;
    QHash<QString, QLabel *> m_fields;
    QHash<QString, QLabel *> m_fieldLabels;
    QWidget *m_barRow;
    QProgressBar *m_bar;
    QLabel *m_barText;
    QComboBox *m_intervalBox;
    QPushButton *m_pin;
    QLabel *m_status;
    QStackedWidget *m_stack;
    StateChart *m_chart;
    QLabel *m_message;
    LogView *m_log = nullptr;
    ShardChart *m_shardChart = nullptr;
    TickTimer m_timer; // on the client's shared tick
    RedisClient::RepeatMemory m_readMemory = RedisClient::newRepeatMemory();
};

} // namespace ratescope::ui
