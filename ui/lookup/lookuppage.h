// The Lookup page: a support engineer's answer to "customer acme gets 429s". An identifier is
// looked up (core's lookupLimiters, as `ratescope-cli lookup`): every limiter whose key holds it
// as a segment, denying ones first with why in words and when the next request passes, read
// again every second while the page is shown (one pass at a time, on the connection's worker).
// The fix is one click away: Reset (through the reset dialog's preview), Grant a temporary
// limit, Open, Pin to monitor, on the selected limiters or all of them, carrying the reason
// typed on the page into the audit (required when the namespace requires one). "Copy summary
// for the ticket" puts what was found and what was done here on the clipboard as plain text.
#pragma once

#include "keys/lookup.h"
#include "redisclient.h"
#include "ticktimer.h"

#include <QDateTime>
#include <QHash>
#include <QPointer>
#include <QWidget>

#include <optional>

class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;

namespace ratescope::ui {

class LookupModel;

class LookupPage : public QWidget {
    Q_OBJECT
public:
    static constexpr int kLiveMs = 1000; // a new pass every tick while shown (skipped while one is under way)

    explicit LookupPage(QWidget *parent = nullptr);
    ~LookupPage() override;

    // nullptr: disconnected (what was shown stays, marked as of its time).
    void setClient(RedisClient *client, const QByteArray &ns);
    // Who the grants' audit entries name beside the OS user (the window's operator name).
    void setOperatorName(const QString &name) { m_operator = name; }

    // Puts id in the field and looks it up (a new lookup: what was done on the page is forgotten).
    void lookUp(const QString &id);
    // Ctrl+K: the identifier field, its text selected.
    void focusIdentifier();
    // A pass now, or right after the one under way.
    void refresh();
    QByteArray identifier() const { return m_id; }
    // A pass has ended (rows or a problem) for the identifier shown.
    bool isLoaded() const { return m_loaded; }
    bool requiresReason() const { return m_requireReason; }

    // The actions, on the selected rows or every row when none is selected. Each says what it
    // did or why it refused on the page (message()).
    void resetRows();                                           // asks the window for the reset dialog
    void grantRows(qint64 limit, qint64 windowUs, qint64 forUs); // an override per row a policy covers
    void grantWithDialog();                                      // asks for limit, window and duration first
    void openRows();
    void pinRows();
    void copySummary();
    // The window's reset dialog ran the reset this page asked for.
    void resetFinished(qint64 deleted);

    // Plain text for a ticket: the identifier, the time, each limiter's state and what was done.
    QString summaryText() const;
    QString message() const { return m_messageText; }

    LookupModel *model() const { return m_model; }
    QTableView *view() const { return m_view; }
    QLineEdit *identifierEdit() const { return m_idEdit; }
    QLineEdit *reasonEdit() const { return m_reason; }
    QString headline() const;

signals:
    void loaded(); // a pass ended
    void openKeyRequested(const QByteArray &key);
    void pinKeyRequested(const QByteArray &key);
    // Reset exactly these keys (the rows' keys) through the reset dialog, with this reason.
    void resetRequested(const QList<QByteArray> &keys, const QString &reason);
    void changed(); // overrides were granted: the other views read again

protected:
    void showEvent(QShowEvent *event) override;
    void hideEvent(QHideEvent *event) override;

private:
    struct Done {
        QDateTime at;
        QString text;
    };
    std::vector<const LookupRow *> targetRows() const;
    QString targetsText(const std::vector<const LookupRow *> &rows) const;
    // Empty when a change may go ahead; else why not, also shown on the page.
    QString refusal();
    void startPass();
    void showPass();
    void setMessage(const QString &text, bool problem);
    void updateActions();
    void updateReasonField();
    void record(const QString &text);
    QString explain(const QString &message) const;
    // The table's columns fitted to its width (fitwidth.h): the limiter keeps a readable width,
    // then used / limit, remaining, why, override, policy and algorithm while they fit; widths
    // dragged by hand are kept.
    void fitColumns();

    QPointer<RedisClient> m_client;
    QByteArray m_ns;
    QString m_operator;
    QObject *m_requests = nullptr; // owner of this page's requests; replaced to drop them
    QByteArray m_id;              // what is looked up (the field may be being edited)
    bool m_inFlight = false;
    bool m_again = false;
    bool m_loaded = false;
    bool m_busy = false; // a grant under way
    bool m_requireReason = false;
    bool m_complete = true;
    qint64 m_scanned = 0;
    QDateTime m_lookedUpAt; // when the lookup was started (the summary's time)
    QString m_problem;      // the last pass's, if it failed
    std::vector<Done> m_done;
    QString m_pendingReset; // what the reset asked for covers, until the dialog has run it
    QString m_pendingReason;
    QString m_messageText;
    TickTimer m_live; // on the client's shared tick
    bool m_fitting = false;
    QHash<int, int> m_preferredWidth;

    QLineEdit *m_idEdit;
    QPushButton *m_lookUp;
    QLineEdit *m_reason;
    QLabel *m_reasonLabel;
    QLabel *m_icon;
    QLabel *m_headline;
    QLabel *m_answer;
    QLabel *m_status;
    QLabel *m_message;
    LookupModel *m_model;
    QTableView *m_view;
    QPushButton *m_reset;
    QPushButton *m_grant;
    QPushButton *m_open;
    QPushButton *m_pin;
    QPushButton *m_copy;
    QLabel *m_doneLabel;
};

} // namespace ratescope::ui
