#include "operatorbar.h"

#include "admin/audit.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpressionValidator>
#include <QShortcut>

namespace ratescope::ui {

OperatorBar::OperatorBar(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("operatorBar"));
    setAttribute(Qt::WA_StyledBackground);
    setStyleSheet(QStringLiteral("#operatorBar { background: #e3eefb; border-bottom: 1px solid #a9c4e6; }"));
    m_text = new QLabel(this);
    m_text->setTextFormat(Qt::PlainText);
    m_text->setWordWrap(true);
    m_name = new QLineEdit(this);
    m_name->setPlaceholderText(QStringLiteral("your name (optional)"));
    m_name->setMaxLength(64);
    m_name->setMinimumWidth(180);
    m_name->setMaximumWidth(260);
    // Printable text only: what the CLI's --operator takes.
    m_name->setValidator(new QRegularExpressionValidator(QRegularExpression(QStringLiteral("[^\\x00-\\x1f\\x7f]*")), m_name));
    m_record = new QPushButton(QStringLiteral("Record"), this);
    m_record->setAutoDefault(true);
    m_skip = new QPushButton(QStringLiteral("Skip"), this);
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(10, 5, 10, 5);
    layout->addWidget(m_text, 1);
    layout->addWidget(m_name);
    layout->addWidget(m_record);
    layout->addWidget(m_skip);
    connect(m_record, &QPushButton::clicked, this, [this] { answer(m_name->text().trimmed()); });
    connect(m_name, &QLineEdit::returnPressed, this, [this] { answer(m_name->text().trimmed()); });
    connect(m_skip, &QPushButton::clicked, this, [this] { answer({}); });
    auto *escape = new QShortcut(QKeySequence(Qt::Key_Escape), this, [this] { answer({}); });
    escape->setContext(Qt::WidgetWithChildrenShortcut);
    hide();
}

void OperatorBar::ask(const QString &profile, const QString &current)
{
    m_text->setText(QStringLiteral("Who is at the console? The audit trail records your changes to %1 under this name, "
                                   "beside the OS user %2.")
                        .arg(profile, AuditLog::osUser()));
    m_text->setToolTip(QStringLiteral("Asked once for this profile; Connection › Operator name… changes it. Skip: the OS user alone."));
    m_name->setText(current);
    show();
}

void OperatorBar::answer(const QString &name)
{
    hide();
    emit answered(name);
}

} // namespace ratescope::ui
