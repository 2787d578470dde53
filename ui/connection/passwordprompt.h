// The login a server asks for, as a desktop application asks it: the user and the password,
// "Remember in the keychain" for a saved profile, and the server's own words when it refused
// the last try. The prompt stays open while the login is tried and after a refusal; whoever
// opened it closes it once connected. The password typed is handed over once and never shown,
// logged or kept here.
#pragma once

#include <QDialog>

class QCheckBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;

namespace ratescope::ui {

class PasswordPrompt : public QDialog {
    Q_OBJECT
public:
    explicit PasswordPrompt(QWidget *parent = nullptr);

    // what: "127.0.0.1:6379 (profile production)"; user: the ACL user known so far.
    // canRemember: a saved profile (its password may go to the keychain); remember: ticked.
    void setLogin(const QString &what, const QString &user, bool canRemember, bool remember);
    // The sentinels' own login, not the server's.
    void setSentinels(bool sentinels);
    // The server's words: NOAUTH (a password is wanted) or a refusal (WRONGPASS ...), shown
    // above the fields; the password field is emptied and selected for the next try.
    void showRefusal(const QString &serverText);
    // Trying the login: the fields and Connect wait, Cancel stays.
    void setBusy(bool busy);
    bool isBusy() const { return m_busy; }

    QString user() const;
    bool remember() const;
    QLineEdit *userEdit() const { return m_user; }
    QLineEdit *passwordEdit() const { return m_password; }
    QCheckBox *rememberBox() const { return m_remember; }
    QLabel *messageLabel() const { return m_message; }
    QString messageText() const;

signals:
    // Connect pressed (or Enter): the password is in the signal only.
    void submitted(const QString &user, const QString &password, bool remember);

private:
    void submit();

    QLabel *m_title;
    QLabel *m_message;
    QLineEdit *m_user;
    QLineEdit *m_password;
    QCheckBox *m_remember;
    QLabel *m_rememberNote;
    QDialogButtonBox *m_buttons;
    bool m_busy = false;
};

} // namespace ratescope::ui
