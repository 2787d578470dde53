// The Policies tab: the policies and the overrides in force, edited in place. Every change is
// one versioned write and one audit entry (the same the CLI writes); the keys a pattern
// matches and what the proposed limits would do to them are read (never written) before
// saving; the read-only lock disables every change before anything is sent.
#pragma once

#include "policyqueries.h"
#include "redisclient.h"

#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <atomic>
#include <functional>
#include <memory>

class QLabel;
class QPushButton;
class QSplitter;
class QStackedWidget;
class QTableView;

namespace ratescope::ui {

class OverrideEditor;
class OverrideTableModel;
class PolicyEditor;
class PolicyTableModel;

class PoliciesPage : public QWidget {
    Q_OBJECT
public:
    static constexpr int kPreviewKeys = 100;             // keys listed (and read for the effect line)
    static constexpr qint64 kPreviewScanBudget = 200000; // keys a preview's SCAN walks at most
    static constexpr int kDebounceMs = 250;

    explicit PoliciesPage(QWidget *parent = nullptr);
    ~PoliciesPage() override;
    void setClient(RedisClient *client, const QByteArray &ns); // nullptr: disconnected
    bool isLoaded() const { return m_loaded; }
    // From a key's context menu / key view: "Change this key's limit…" opens an override editor prefilled
    // with the limits in force for that key; "Edit its policy…" opens the editor of the policy that matches it.
    void changeKeyLimit(const QByteArray &key);
    void editPolicyOf(const QByteArray &key);
    // The policies read afresh, then `name`'s in the editor (or, when there is none, why not).
    void editPolicyNamed(const QString &name);

    // The name audit entries and versions carry (default: the OS user).
    void setOperatorName(const QString &name) { m_operator = name; }
    // Tests: a frozen clock (µs since the epoch) for the effect line and the countdowns.
    void setNowUs(std::optional<qint64> nowUs);
    // Tests: a smaller bound for the preview's SCAN walk.
    void setPreviewScanBudget(qint64 keys) { m_scanBudget = keys; }
    void reload();
    void newPolicy();
    void newOverride();
    void editPolicy(const QString &name);

    PolicyTableModel *policyModel() const { return m_policies; }
    OverrideTableModel *overrideModel() const { return m_overrides; }
    QTableView *policyView() const { return m_policyView; }
    QTableView *overrideView() const { return m_overrideView; }
    PolicyEditor *policyEditor() const { return m_policyEditor; }
    OverrideEditor *overrideEditor() const { return m_overrideEditor; }
    QLabel *messageLabel() const { return m_message; }
    QPushButton *newPolicyButton() const { return m_newPolicy; }
    QPushButton *newOverrideButton() const { return m_newOverride; }
    QPushButton *clearOverrideButton() const { return m_clearOverride; }
    // The strip that asks before Save, Grant and Delete, with what the change would do:
    // confirmButton() (Enter) makes the change, cancelButton() (Escape) leaves it.
    QPushButton *confirmButton() const { return m_confirmDelete; }
    QPushButton *confirmDeleteButton() const { return m_confirmDelete; }
    QPushButton *cancelButton() const { return m_keepPolicy; }
    QString confirmText() const;
    bool isAsking() const;
    bool previewPending() const { return m_previewRunning || m_previewTimer.isActive(); }
    bool effectPending() const { return m_effectRunning || m_effectTimer.isActive(); }
    bool busy() const { return m_busy; }

    // A failure in words an operator can act on: NOPERM says who may not run what and what to
    // ask for; a connection lost during a change says it may or may not have been made.
    // user: the ACL user of the connection, for servers whose NOPERM says "this user".
    static QString explainFailure(const Failure &failure, bool duringChange, const QString &user = {});

protected:
    void resizeEvent(QResizeEvent *event) override;
    void showEvent(QShowEvent *event) override; // read once first shown: hidden, it reads nothing

signals:
    void loaded();
    void changed(); // a change was saved (and audited)
    // "Preview on recent traffic" in the policy editor: the policy as stored (none for a new
    // one) and as edited, for the What-if view.
    void previewRequested(const std::optional<ratescope::Policy> &stored, const ratescope::Policy &edited);

private:

    bool writable() const;
    QString whyNotWritable() const;
    void updateWritable();
    void showMessage(const QString &text, bool problem);
    QString actor() const;
    QString explain(const Failure &failure, bool duringChange) const;
    QDateTime now() const;
    void stopPreview();
    void schedulePreview();
    void runPreview();
    void previewStep(PolicyPreview soFar);
    void showPreview(const PolicyPreview &r);
    void scheduleEffect();
    void runEffect();
    // Shows the strip: text (rebuilt by textNow while it shows, as the effect arrives), the
    // confirm button's words, and what confirming does.
    void ask(std::function<QString()> textNow, const QString &confirmWords, std::function<void()> confirmed);
    void stopAsking();
    QString effectWords() const; // the effect line, or why there is none yet
    // The policy editor's form may be sent: writable, nothing under way, no field marked (else
    // the editor says why and nothing is sent).
    bool policyReadyToSend();
    void askSavePolicy(bool onTopOfTheirs);
    void askGrant();
    void savePolicy(bool onTopOfTheirs);
    void askDeletePolicy();
    void deletePolicy();
    void saveOverride();
    void clearOverride(const QByteArray &key);
    void showEditor(QWidget *editor);
    // The policies read afresh into the table, then `then` with them (a refusal is said instead).
    void withFreshPolicies(std::function<void(const std::vector<Policy> &)> then);
    void fitEditor();
    void refreshInForce(const QByteArray &key);

    QPointer<RedisClient> m_client;
    QByteArray m_ns;
    QString m_operator;
    std::optional<qint64> m_frozenNowUs;
    bool m_loaded = false;
    qint64 m_scanBudget = kPreviewScanBudget;
    bool m_busy = false;               // a change is on its way: no second one until it answers
    QObject *m_requests;               // owner of loads and changes; replaced with the client, dropping the old one's answers
    QObject *m_previewOwner = nullptr; // one per preview: cancelled when the pattern changes
    std::shared_ptr<std::atomic<bool>> m_previewCancel;
    QObject *m_effectOwner = nullptr;
    QObject *m_inForceOwner = nullptr;
    bool m_previewRunning = false;
    bool m_effectRunning = false;
    QByteArray m_previewGlob;
    std::vector<QByteArray> m_previewKeys; // the listed keys, for the effect line
    qint64 m_previewMatched = 0;
    bool m_previewComplete = false;

    QLabel *m_message;
    QPushButton *m_reload;
    PolicyTableModel *m_policies;
    OverrideTableModel *m_overrides;
    QTableView *m_policyView;
    QTableView *m_overrideView;
    QPushButton *m_newPolicy;
    QPushButton *m_editPolicy;
    QPushButton *m_newOverride;
    QPushButton *m_clearOverride;
    QStackedWidget *m_editors;
    QSplitter *m_splitter = nullptr; // the tables | the editor shown
    QWidget *m_hint;
    PolicyEditor *m_policyEditor;
    OverrideEditor *m_overrideEditor;
    QWidget *m_deleteStrip;
    QLabel *m_deleteText;
    QPushButton *m_confirmDelete;
    QPushButton *m_keepPolicy;
    std::function<QString()> m_askText;
    std::function<void()> m_confirmed;
    QTimer m_previewTimer;
    QTimer m_effectTimer;
    QTimer m_countdown;
};

} // namespace ratescope::ui
