// The What-if view: replay recent traffic (the logs of the keys a glob matches, or a trace
// file) against the limits in force and proposed ones, in a private sandbox server, and see
// what each would have denied: a summary line per spec, allowed/denied over time per spec,
// and the keys that would have been denied. Nothing is written to the inspected server, so it
// works under the read-only lock, and a file trace needs no connection at all.
#pragma once

#include "redis/connectionoptions.h"
#include "admin/policy.h"
#include "redisclient.h"
#include "whatifrun.h"

#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <optional>
#include <vector>

class QComboBox;
class QGridLayout;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;
class QVBoxLayout;

namespace ratescope::ui {

class WhatIfChart;
class WhatIfKeyModel;

class WhatIfPage : public QWidget {
    Q_OBJECT
public:
    static constexpr int kMaxSpecs = 6;

    explicit WhatIfPage(QWidget *parent = nullptr);
    ~WhatIfPage() override; // cancels a run and waits for it at most WhatIfRun::kCloseWaitMs

    // client: the console's connection (short reads: a key's limits); options: how a log
    // trace reaches the same server on a connection of its own. nullptr: disconnected (a file
    // trace still works).
    void setClient(RedisClient *client, const ConnectionOptions &options, const QByteArray &ns);

    // A named spec to compare.
    struct Spec {
        QString name;
        LimitSpec spec;
    };
    void setTrace(const WhatIfTrace &trace);
    WhatIfTrace trace() const;
    void setSpecs(const std::vector<Spec> &specs);
    // The specs as the fields say now, or why they cannot run (problem set, nothing returned).
    std::vector<Spec> specs(QString *problem = nullptr) const;

    // From the Policies tab's editor: the logs of the keys the edited policy matches, the
    // policy as stored ("now", when there is one) against the edit ("proposed"); runs at once
    // unless runNow is false (then Run starts it).
    void previewPolicy(const std::optional<Policy> &stored, const Policy &edited, bool runNow = true);
    // From a key ("What if…"): the key's log, its limits in force ("now", read from the
    // server) and a copy to change ("proposed"). Waits for the operator to press Run.
    void previewKey(const QByteArray &key);

    void run();
    // Runs after delayMs (the demo lets its traffic fill the logs first); editing nothing
    // meanwhile is the caller's business.
    void runAfter(int delayMs);
    void cancel();
    bool isRunning() const { return m_run != nullptr; }
    // Nothing to wait for: not running, and no run asked for that has not ended.
    bool isIdle() const { return !m_run && !m_keyPending && !m_runLater.isActive(); }
    QString whyNotRunnable() const; // empty when Run can start

    const std::optional<WhatIfOutcome> &lastOutcome() const { return m_outcome; }
    QStringList lastNames() const { return m_runNames; }
    // One line per spec of the last run, as shown ("proposed (40 per 10 s): 37 of 412 keys, ...").
    QStringList summaryLines() const;
    QString statusText() const;
    QString noteText() const; // the lower-bound note, when shown
    WhatIfKeyModel *keyModel() const { return m_keys; }
    QSortFilterProxyModel *sortedKeys() const { return m_sorted; }
    QTableView *keyView() const { return m_table; }
    WhatIfChart *chart() const { return m_chart; }
    QPushButton *runButton() const { return m_runButton; }
    QPushButton *cancelButton() const { return m_cancelButton; }

    // The summary line of one spec's totals ("now (60 per 10 s): no key throttled, all 98,311
    // requests allowed").
    static QString summaryLine(const QString &name, const SimSpecResult &result);

signals:
    void finished();                              // a run ended (results, cancellation or an error shown)
    void openKeyRequested(const QByteArray &key); // an affected key double-clicked

private:
    struct SpecRow {
        QWidget *swatch = nullptr;
        QLineEdit *name = nullptr;
        QComboBox *algorithm = nullptr;
        QLineEdit *limit = nullptr, *window = nullptr, *cost = nullptr;
        QLabel *per = nullptr;
        QPushButton *remove = nullptr;
        QLabel *problem = nullptr;
    };

    QWidget *buildTraceBox();
    QWidget *buildSpecBox();
    QWidget *buildResults();
    void fitTable(); // the affected keys' columns to the table's width
    void addSpecRow(const Spec &spec);
    void removeSpecRow(int index);
    void relayoutSpecs();
    void sourceChanged();
    void updateRunnable();
    void chooseFile();
    void setStatus(const QString &text, bool problem = false);
    void showProgress();
    void showOutcome(const WhatIfOutcome &outcome);
    void clearResults();

    QPointer<RedisClient> m_client;
    ConnectionOptions m_options;
    QByteArray m_ns;
    QObject *m_requests; // owner of the short reads; replaced with the client
    bool m_keyPending = false;
    QTimer m_runLater;

    // The trace.
    QComboBox *m_source;
    QLineEdit *m_glob;
    QComboBox *m_scoreUnit;
    QLineEdit *m_file;
    QPushButton *m_browse;
    QComboBox *m_timeUnit;
    QPushButton *m_wholeGroup;
    QByteArray m_groupGlob;
    QLabel *m_traceNote;
    QWidget *m_logFields, *m_fileFields;

    // The specs.
    QGridLayout *m_specGrid;
    std::vector<SpecRow> m_rows;
    QPushButton *m_addSpec;

    QPushButton *m_runButton, *m_cancelButton;
    QLabel *m_why;
    QProgressBar *m_progress;
    QLabel *m_status;

    // The results.
    QVBoxLayout *m_summaryBox;
    std::vector<QLabel *> m_summaryLabels;
    QLabel *m_note;
    WhatIfChart *m_chart;
    QLabel *m_keysTitle;
    WhatIfKeyModel *m_keys;
    QSortFilterProxyModel *m_sorted;
    QTableView *m_table;

    WhatIfRun *m_run = nullptr;
    QStringList m_runNames;
    std::optional<WhatIfOutcome> m_outcome;
};

} // namespace ratescope::ui
