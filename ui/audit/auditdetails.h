// The Audit tab's details pane: who did what to which target, when and from where, the fields
// the change touched (before → after), and the whole before and after states as indented JSON.
#pragma once

#include "admin/audit.h"

#include <functional>
#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QTableWidget;

namespace ratescope::ui {

class AuditDetails : public QWidget {
    Q_OBJECT
public:
    explicit AuditDetails(QWidget *parent = nullptr);
    void setClock(std::function<QDateTime()> now) { m_now = std::move(now); }
    void showEntry(const AuditEntry &entry);
    void clear();

    // For tests and screenshots: what the pane shows.
    QString headline() const;
    QString facts() const;
    QString beforeText() const;
    QString afterText() const;
    QTableWidget *changes() const { return m_changes; }

private:
    QLabel *m_headline;
    QLabel *m_facts;
    QLabel *m_changesTitle;
    QWidget *m_states; // changed fields, before, after: hidden while nothing is selected
    QTableWidget *m_changes;
    QPlainTextEdit *m_before;
    QLabel *m_beforeTitle; // "Before", or a burst's "Parameters"
    QLabel *m_afterTitle;
    QPlainTextEdit *m_after;
    std::function<QDateTime()> m_now;
};

} // namespace ratescope::ui
