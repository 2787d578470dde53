#include "passwordprompt.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace ratescope::ui {

PasswordPrompt::PasswordPrompt(QWidget *parent)
    : QDialog(parent)
{
    setObjectName(QStringLiteral("passwordPrompt"));
    setWindowTitle(QStringLiteral("Password required"));
    m_title = new QLabel(this);
    m_title->setTextFormat(Qt::PlainText);
    m_title->setWordWrap(true);
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("passwordPromptMessage"));
    m_message->setTextFormat(Qt::PlainText);
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_message->hide();
    m_user = new QLineEdit(this);
    m_user->setPlaceholderText(QStringLiteral("default"));
    m_user->setToolTip(QStringLiteral("The ACL user (Redis 6 and later); empty for the default user"));
    m_password = new QLineEdit(this);
    m_password->setEchoMode(QLineEdit::Password);
    m_remember = new QCheckBox(QStringLiteral("Remember in the keychain"), this);
    m_rememberNote = new QLabel(this);
    m_rememberNote->setWordWrap(true);
    m_rememberNote->setTextFormat(Qt::PlainText);
    m_rememberNote->setForegroundRole(QPalette::PlaceholderText);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
    auto *connectButton = m_buttons->addButton(QStringLiteral("Connect"), QDialogButtonBox::AcceptRole);
    connectButton->setDefault(true);

    auto *form = new QFormLayout;
    form->addRow(QStringLiteral("&User"), m_user);
    form->addRow(QStringLiteral("&Password"), m_password);
    form->addRow(QString(), m_remember);
    form->addRow(QString(), m_rememberNote);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_title);
    layout->addWidget(m_message);
    layout->addLayout(form);
    layout->addWidget(m_buttons);
    setMinimumWidth(460);

    // Accepting is the caller's, once the server took the login: Connect only submits.
    connect(m_buttons, &QDialogButtonBox::accepted, this, &PasswordPrompt::submit);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    m_password->setFocus();
}

void PasswordPrompt::setLogin(const QString &what, const QString &user, bool canRemember, bool remember)
{
    m_title->setText(QStringLiteral("%1 needs a password.").arg(what));
    m_user->setText(user);
    m_remember->setEnabled(canRemember);
    m_remember->setChecked(canRemember && remember);
    m_rememberNote->setText(canRemember ? QStringLiteral("Otherwise it is kept in memory until Ratescope exits.")
                                        : QStringLiteral("Kept in memory until Ratescope exits. A profile can keep it in "
                                                         "the keychain: Connection › New profile…"));
    m_password->setFocus();
}

void PasswordPrompt::setSentinels(bool sentinels)
{
    setWindowTitle(sentinels ? QStringLiteral("Sentinel password required") : QStringLiteral("Password required"));
    if (sentinels)
        m_title->setText(m_title->text().replace(QLatin1String(" needs a password."), QLatin1String(": the sentinels need a password.")));
}

void PasswordPrompt::showRefusal(const QString &serverText)
{
    const bool missing = serverText.startsWith(QLatin1String("NOAUTH"));
    // The server's own words ("WRONGPASS invalid username-password pair ..."), without the
    // "authentication as ... at ... failed:" the title says already.
    const qsizetype at = serverText.indexOf(QLatin1String("failed: "));
    const QString words = at >= 0 ? serverText.mid(at + 8) : serverText;
    m_message->setText(missing ? QStringLiteral("The server answered: %1").arg(words)
                               : QStringLiteral("The server refused the login: %1").arg(words));
    m_message->setStyleSheet(missing ? QString()
                                     : QStringLiteral("QLabel { background: #f8d7d3; border: 1px solid #d9a39c; "
                                                      "border-radius: 3px; padding: 4px; color: #5f1d16; }"));
    m_message->show();
    adjustSize(); // room for the message, and the note under the box
    setBusy(false);
    m_password->clear();
    m_password->setFocus();
}

void PasswordPrompt::setBusy(bool busy)
{
    m_busy = busy;
    m_user->setEnabled(!busy);
    m_password->setEnabled(!busy);
    for (QAbstractButton *b : m_buttons->buttons())
        if (m_buttons->buttonRole(b) == QDialogButtonBox::AcceptRole) {
            b->setEnabled(!busy);
            b->setText(busy ? QStringLiteral("Connecting…") : QStringLiteral("Connect"));
        }
}

QString PasswordPrompt::user() const
{
    return m_user->text().trimmed();
}

bool PasswordPrompt::remember() const
{
    return m_remember->isEnabled() && m_remember->isChecked();
}

QString PasswordPrompt::messageText() const
{
    return m_message->isHidden() ? QString() : m_message->text();
}

void PasswordPrompt::submit()
{
    if (m_busy)
        return;
    setBusy(true);
    emit submitted(user(), m_password->text(), remember());
}

} // namespace ratescope::ui
