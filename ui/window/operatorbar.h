// The strip under the toolbar that asks, once per profile, who is at the console: a name the
// audit trail records with each change beside the OS user. Optional ("Skip" keeps the OS user
// alone) and never in the way: no dialog, the console works while it shows.
#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QPushButton;

namespace ratescope::ui {

class OperatorBar : public QWidget {
    Q_OBJECT
public:
    explicit OperatorBar(QWidget *parent = nullptr);
    // Shows the question for `profile`, the name given so far in the field.
    void ask(const QString &profile, const QString &current);
    QLineEdit *nameEdit() const { return m_name; }
    QPushButton *recordButton() const { return m_record; }
    QPushButton *skipButton() const { return m_skip; }

signals:
    // Record (or Enter): the name typed, trimmed; Skip: empty. The bar hides either way.
    void answered(const QString &name);

private:
    void answer(const QString &name);

    QLabel *m_text;
    QLineEdit *m_name;
    QPushButton *m_record;
    QPushButton *m_skip;
};

} // namespace ratescope::ui
