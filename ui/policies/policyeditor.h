// Editing one policy in place: every field says what is wrong with it next to it (the core's
// own validation), the keys its pattern matches are previewed while typing, the effect of the
// proposed limits on them is shown before saving, and a stale-version conflict is shown with
// the server's current version beside the operator's edit.
#pragma once

#include "admin/policy.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QSpinBox;
class QFrame;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;

namespace ratescope::ui {

class PolicyEditor : public QWidget {
    Q_OBJECT
public:
    explicit PolicyEditor(QWidget *parent = nullptr);

    // existing: the stored policy being edited (its version is what a save is based on);
    // nullopt for a new one, prefilled from `initial`.
    void edit(const std::optional<Policy> &existing, const Policy &initial);
    bool isNew() const { return m_basedOn == 0; }
    qint64 basedOnVersion() const { return m_basedOn; }
    QString originalName() const { return m_originalName; }
    // The policy as the fields say now; numbers that do not parse are left 0 so that
    // problems() names them.
    Policy proposed() const;
    std::vector<PolicyProblem> problems() const;
    // The spec when the limit fields are valid (what the effect line is computed for).
    std::optional<LimitSpec> proposedSpec() const;

    // The read-only lock or a lost connection: nothing can be saved; `why` is the tooltip.
    void setWritable(bool writable, const QString &why);
    void setPreview(const QString &summary, const QStringList &shownKeys);
    void setEffect(const QString &text);
    void setStatus(const QString &text, bool problem);
    // A save refused because someone else changed the policy: their version (nullopt when
    // it was deleted) is shown beside the edit, which is kept.
    void showConflict(const QString &message, const std::optional<Policy> &theirs);
    void clearConflict();
    // After "Apply mine on top": the edit is now based on their version.
    void rebase(qint64 version) { m_basedOn = version; }
    bool hasConflict() const;
    std::optional<Policy> theirs() const { return m_theirs; }

    // For tests and the page.
    QLineEdit *nameEdit() const { return m_name; }
    QLineEdit *matchEdit() const { return m_match; }
    QComboBox *algorithmBox() const { return m_algorithm; }
    QLineEdit *limitEdit() const { return m_limit; }
    QLineEdit *windowEdit() const { return m_window; }
    QLineEdit *costEdit() const { return m_cost; }
    QSpinBox *bucketsBox() const { return m_buckets; }
    QSpinBox *shardsBox() const { return m_shardsBox; } // 1: not sharded
    QLineEdit *descriptionEdit() const { return m_description; }
    QCheckBox *enforcedBox() const { return m_enforced; }
    QLabel *problemLabel(PolicyField field) const;
    QLabel *previewSummary() const { return m_previewSummary; }
    QListWidget *previewList() const { return m_previewList; }
    QLabel *effectLabel() const { return m_effect; }
    QLabel *conflictLabel() const { return m_conflictText; }
    QLabel *theirsLabel() const { return m_theirsText; }
    QPushButton *saveButton() const { return m_save; }
    QPushButton *deleteButton() const { return m_delete; }
    QPushButton *applyMineButton() const { return m_applyMine; }
    QPushButton *takeTheirsButton() const { return m_takeTheirs; }
    QPushButton *previewTrafficButton() const { return m_previewTraffic; }

signals:
    void globChanged(const QByteArray &glob);
    void limitsChanged();
    void saveRequested();
    void deleteRequested();
    void applyMineRequested();
    void takeTheirsRequested();
    void closeRequested();
    // "Preview on recent traffic": the What-if view on the matched keys' logs (writes nothing,
    // so it is offered under the read-only lock too).
    void previewTrafficRequested();

private:
    void revalidate();
    void updateButtons();

    qint64 m_basedOn = 0;
    QString m_originalName;
    bool m_writable = false;
    QString m_whyNot;
    std::optional<Policy> m_theirs;

    QLabel *m_title;
    QLineEdit *m_name;
    QLineEdit *m_match;
    QComboBox *m_algorithm;
    QLineEdit *m_limit;
    QLineEdit *m_window;
    QLineEdit *m_cost;
    QSpinBox *m_buckets; // sliding-buckets: sub-buckets per window
    QComboBox *m_scoreUnit;
    QComboBox *m_format;
    QSpinBox *m_shardsBox; // the keys are shards <base>:<n> sharing the limit
    QLineEdit *m_description;
    QCheckBox *m_enforced;
    QLabel *m_nameProblem;
    QLabel *m_matchProblem;
    QLabel *m_limitProblem;
    QLabel *m_windowProblem;
    QLabel *m_costProblem;
    QLabel *m_previewSummary;
    QListWidget *m_previewList;
    QLabel *m_effect;
    QFrame *m_conflict;
    QLabel *m_conflictText;
    QLabel *m_theirsText;
    QLabel *m_mineText;
    QPushButton *m_applyMine;
    QPushButton *m_takeTheirs;
    QPushButton *m_previewTraffic;
    QLabel *m_status;
    QPushButton *m_save;
    QPushButton *m_delete;
    QPushButton *m_close;
};

// "sliding-log, 40 per 10 s (cost 1) on api:* · enforced": one line for a policy.
QString policySummary(const Policy &p);

} // namespace ratescope::ui
