// The keys panel: walks the keyspace with SCAN a page at a time (progress, cancel, glob
// filter), shows it as a tree grouped by the separator, and fills the limiter columns of the
// rows in view through the connection's worker, refreshing them while they stay in view.
#pragma once

#include "keyactions.h"
#include "keytreemodel.h"
#include "admin/policy.h"
#include "redisclient.h"
#include "scannednames.h"
#include "ticktimer.h"

#include <QElapsedTimer>
#include <QHash>
#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <deque>
#include <memory>

class QLabel;
class QProgressBar;
class QToolButton;
class QTreeView;

namespace ratescope::ui {

class KeyBrowser : public QWidget {
    Q_OBJECT
public:
    explicit KeyBrowser(QWidget *parent = nullptr);
    ~KeyBrowser() override;

    // Browses through `client` (nullptr: nothing). ns: Ratescope's metadata prefix, for
    // policies and overrides; separator: how key names are grouped.
    void setClient(RedisClient *client, const QByteArray &ns, const QByteArray &separator);
    // A glob (Redis SCAN MATCH); text without glob characters matches keys containing it.
    void setFilter(const QString &text);
    QByteArray matchPattern() const { return m_match; }
    // Reads the keyspace again (policies too).
    void refresh();
    // Keys this console has just changed (a burst): the rows in view are read again now rather
    // than at their next refresh, and a key that was not listed (the burst created it) is
    // looked for and listed when the filter takes it.
    void refreshKeys(const QList<QByteArray> &keys);
    void cancelScan();

    // Where the walk of the keyspace is: one state instead of a flag per fact.
    enum class ScanState {
        Idle,         // nothing asked for: no client yet
        Starting,     // DBSIZE and the policies asked for
        Paging,       // SCAN pages asked for (up to kPagesAhead)
        PageDeferred, // none asked for: the next waits for insertion to catch up
        Draining,     // the last page has arrived; what was found is still being inserted
        Complete,     // the cursor came back to 0 and every key found is listed
        Stopped,      // the user stopped it: what was found stays listed
        Paused,       // the connection was lost: it starts over once back, keeping what it listed
        Failed,       // the server refused the listing (not a lost connection)
    };
    ScanState scanState() const { return m_scan; }
    bool isScanning() const
    {
        return m_scan == ScanState::Starting || m_scan == ScanState::Paging || m_scan == ScanState::PageDeferred ||
               m_scan == ScanState::Draining;
    }
    qint64 scannedCount() const { return m_scanned; }
    // How long the last complete listing took, from its start (with the connection's, for the
    // first) to its last key in the tree; -1 while none has completed.
    qint64 listingMs() const { return m_scan == ScanState::Complete ? m_scanMs : -1; }
    // The scan is over, every group is in natural order and the rows in view have their columns.
    bool isSettled() const;
    // What the panel says above the tree ("Scanned 45,000 of about 1,000,000 keys") and the
    // problem shown in place, if any.
    QString progressText() const;
    QLabel *progressLabel() const { return m_progressLabel; } // on amber while not updating
    QString problemText() const;

    KeyTreeModel *model() const { return m_model; }
    QTreeView *view() const { return m_view; }
    // The keys in view (model ids), top to bottom.
    std::vector<quint32> visibleKeyIds() const;

    // Rows read per pipelined batch when filling columns, and how long they stay fresh.
    static constexpr int kDetailsBatch = 100;
    static constexpr int kLiveRefreshMs = 2000;
    static constexpr int kPolicyCheckMs = 1000; // a policy changed elsewhere shows within this (paced on a slow link)
    static constexpr int kDetailsDelayMs = 40; // after scrolling: where the view comes to rest
    // While listing, the rows in view are read at most once per 20 round trips, within these.
    static constexpr int kDetailsWhileListingMinMs = 100;
    static constexpr int kDetailsWhileListingMaxMs = 1000;

    // The selected keys (groups left out), top to bottom.
    QList<QByteArray> selectedKeys() const;
    // "Look up this customer": the segment of the key at viewportPos under the mouse (pointed),
    // else (the keyboard's menu key) its last segment that is not a number (lookupIdAt).
    QByteArray customerAt(const QPoint &viewportPos, bool pointed) const;

signals:
    void openKeyRequested(const QByteArray &key);
    // "Pin to monitor" from the context menu: once per key, for the row or every selected key.
    void pinKeyRequested(const QByteArray &key);
    // "Show only this group" from the context menu: a SCAN MATCH pattern.
    void filterRequested(const QString &pattern);
    // Burst, change limit, edit policy, reset: on the row's key or every selected key.
    void keyActionRequested(ratescope::ui::KeyAction action, const QList<QByteArray> &keys);
    // "Reset all keys of this group…": the group's SCAN MATCH pattern.
    void resetGroupRequested(const QByteArray &pattern);
    // "Look up this customer": an identifier for the Lookup tab.
    void lookupRequested(const QByteArray &id);
    void scanFinished();
    void settled();

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void startScan();
    void requestPage();
    void onPage(const QByteArray &cursor, const ScannedNames &names);
    void askPages(); // up to kPagesAhead, unless insertion lags
    void flush();
    void finish();
    qsizetype pendingCount() const;
    void interrupted(const QString &why, bool connectionLoss);
    void updateProgress();
    void scheduleDetails();     // soon after scrolling, resizing, expanding
    void scheduleDetailsSoon(); // the next turn of the event loop: rows were added
    void fetchVisibleDetails();
    // The policies and the newest audit entry, read again every kPolicyCheckMs: when anyone
    // changed a policy, set or cleared an override or reset keys (this console, another one,
    // the CLI), the rows in view are read again, under the new policies.
    void checkPolicies();
    // After a details read: gone keys leave, counters' next windows and keys that came back
    // are listed.
    void followKeyspace(const std::vector<quint32> &ids, const std::vector<KeyDetails> &details);
    void autoExpand();
    void checkSettled();
    void showContextMenu(const QPoint &pos);
    void onClientState();
    void paceTimers();

    QPointer<RedisClient> m_client;
    QByteArray m_ns = "ratescope:";
    QByteArray m_separator = ":";
    QByteArray m_match = "*";

    KeyTreeModel *m_model = nullptr;
    QTreeView *m_view = nullptr;
    QProgressBar *m_progress = nullptr;
    QLabel *m_progressLabel = nullptr;
    QToolButton *m_cancel = nullptr;
    QLabel *m_problem = nullptr;

    // Owners of requests: destroying or cancelling one drops its work.
    QObject m_scanOwner;
    QObject m_detailsOwner;

    std::shared_ptr<const std::vector<Policy>> m_policies; // set once the scan has started
    bool m_policyCheckInFlight = false;
    // Columns fitted to the panel's width (fitColumns): widths dragged by hand win.
    void fitColumns();
    bool eventFilter(QObject *watched, QEvent *event) override;
    bool m_fitting = false;
    QHash<int, int> m_preferredWidth;
    static constexpr int kGoneKept = 1000;          // keys remembered after they left the listing...
    static constexpr qint64 kGoneKeptMs = 600000;   // ...for at most this long
    QHash<QByteArray, qint64> m_gone;               // name -> when it left (m_goneClock)
    QElapsedTimer m_goneClock;
    bool m_lookingFor = false;
    QString m_lastChange; // the newest audit entry's id at the last check; null before the first
    ScanState m_scan = ScanState::Idle;
    // Where the pages asked for take the walk, on the worker: each page starts from the cursor
    // the one before it left there, so the next can be asked for before this one comes.
    struct Walk {
        QByteArray cursor;
        bool done = false;
    };
    std::shared_ptr<Walk> m_walk;
    int m_pagesAsked = 0; // asked for, not come yet
    qint64 m_scanned = 0;
    qint64 m_dbSize = -1;
    QElapsedTimer m_scanClock;
    qint64 m_scanMs = 0;
    std::deque<ScannedNames> m_pending; // found, not inserted yet
    size_t m_pendingAt = 0;             // in the first page
    qsizetype m_pendingCount = 0;
    QElapsedTimer m_sinceFlush;
    QTimer m_flushTimer;
    QElapsedTimer m_sinceProgress; // since the progress words and bar were last set
    QTimer m_progressTimer;
    int m_detailsInFlight = 0;
    bool m_userShaped = false; // the user expanded or collapsed something: no more auto-expansion
    bool m_autoExpanding = false;
    bool m_wasSettled = false;
    QTimer m_detailsTimer;
    TickTimer m_liveTimer;   // on the client's shared tick
    TickTimer m_policyTimer; // likewise
    QElapsedTimer m_detailsWhileListing; // since the rows in view were last read during the listing
    QElapsedTimer m_marksRead; // since the listing's start read the change marks (invalid once checked)
    // What each batch of rows read last time (RedisClient::repeat), by its place in the batches.
    std::vector<RedisClient::RepeatMemory> m_detailsMemory;
    RedisClient::RepeatMemory m_changesMemory = RedisClient::newRepeatMemory();
    RedisClient::RepeatMemory m_listingMemory = RedisClient::newRepeatMemory(); // the listing's start: DBSIZE and the policies
};

} // namespace ratescope::ui
