// The Audit tab: every change made through Ratescope (console or CLI), newest first, read
// from the <ns>audit stream. Follows the stream while shown (only entries newer than the
// newest row are read, every 1.5 s), pages back as the table scrolls, filters by action,
// actor, target and time, shows a change's before and after, and exports what it shows as CSV.
#pragma once

#include "auditmodel.h"
#include "auditqueries.h"
#include "outcome.h"
#include "redisclient.h"
#include "ticktimer.h"

#include <functional>
#include <QHash>
#include <QPointer>
#include <QWidget>

class QComboBox;
class QDateTimeEdit;
class QLabel;
class QLineEdit;
class QPushButton;
class QStackedWidget;
class QTableView;

namespace ratescope::ui {

class AuditDetails;

class AuditPage : public QWidget {
    Q_OBJECT
public:
    static constexpr int kPollMs = 1500;
    static constexpr int kPageSize = 200;  // rows read per page back
    static constexpr int kFollowMax = 500; // new entries read per poll (more: read again at once)

    enum class TimeRange { Any, LastHour, LastDay, LastWeek, Custom };

    explicit AuditPage(QWidget *parent = nullptr);
    // nullptr: disconnected (keeps what it shows, marked stale).
    void setClient(RedisClient *client, const QByteArray &ns);
    bool isLoaded() const { return m_loaded; }

    // The clock for "last hour/day/week" and "ago"; a frozen one in tests. Default: the system's.
    void setClock(std::function<QDateTime()> now);
    void setPollInterval(int ms) { m_poll.setInterval(ms); }

    // Filters, as the controls set them.
    void setActionFilter(const QString &action); // empty: every action
    void setActorFilter(const QString &text);
    void setTargetFilter(const QString &text);
    void setTimeRange(TimeRange range, const QDateTime &from = {}, const QDateTime &to = {});

    // Writes what the filter shows as CSV (atomically). Returns an empty string, or why not.
    QString exportCsv(const QString &path);

    AuditModel *model() const { return m_model; }
    AuditFilterModel *filtered() const { return m_filtered; }
    QTableView *view() const { return m_view; }
    AuditDetails *details() const { return m_details; }
    QComboBox *actionBox() const { return m_action; }
    QLineEdit *actorEdit() const { return m_actor; }
    QLineEdit *targetEdit() const { return m_target; }
    // What the page says about the trail: "No changes recorded yet", a problem, or staleness.
    QString messageText() const;
    QString statusText() const;
    bool isStale() const { return m_stale; }

signals:
    void loaded();
    void updated(); // rows were read (first page, newer entries or an older page)

protected:
    void showEvent(QShowEvent *event) override;

private:
    struct Read; // what one request brought back
    void load();
    void fitColumns();
    void poll();
    void fetchOlder();
    void continueSearch(); // page back while the filtered rows do not fill the view
    // repeated: the poll's memory (RedisClient::repeat), for a read on the shared tick.
    void read(const AuditSlice &slice, std::function<void(Read &)> done, const RedisClient::RepeatMemory &repeated = {});
    void failed(const Failure &failure);
    void showProblem(const QString &problem);
    void applyFilter();
    void refreshActions();
    void updateStatus();
    void markStale(bool stale);
    void selectionChanged();
    // After the filter changed: the entry selected before is selected again and scrolled into
    // view when the filter shows it (also after a filter that hid it for a while).
    void keepSelection();
    void chooseExportFile();

    QPointer<RedisClient> m_client;
    QPointer<RedisClient> m_lastClient; // kept while disconnected
    QByteArray m_ns;
    QObject m_requests; // owner of this page's requests
    AuditModel *m_model;
    AuditFilterModel *m_filtered;
    std::function<QDateTime()> m_now;
    bool m_loaded = false;
    bool m_loading = false;
    bool m_polling = false;
    bool m_stale = false;
    QString m_problem;
    QDateTime m_readAt; // when the trail was last read
    TimeRange m_range = TimeRange::Any;
    AuditFilter m_filter;
    TickTimer m_poll; // on the client's shared tick
    RedisClient::RepeatMemory m_pollMemory = RedisClient::newRepeatMemory();
    int m_scrolledBy = 0;      // the table's scroll position before rows were inserted
    bool m_prepending = false; // the rows being inserted are new entries, not a filter's change
    QString m_selectedId;      // the entry the operator selected last, kept while a filter hides it
    bool m_filtering = false;  // the filter is being applied: a selection it clears is not the operator's
    bool m_fitting = false;
    QHash<int, int> m_preferredWidth; // column widths dragged by hand

    QComboBox *m_action;
    QLineEdit *m_actor;
    QLineEdit *m_target;
    QComboBox *m_time;
    QDateTimeEdit *m_from;
    QDateTimeEdit *m_to;
    QPushButton *m_export;
    QLabel *m_status;
    QLabel *m_message;
    QStackedWidget *m_stack;
    QTableView *m_view;
    AuditDetails *m_details;
};

} // namespace ratescope::ui
