// Creates or edits a connection profile. Checked as you type; "Test connection" runs on a
// worker thread; Save tests first and keeps the profile (settings) and password (keychain)
// only once the server has accepted them, so a wrong password saves nothing.
#pragma once

#include "connectionprofile.h"
#include "redisclient.h"

#include <QDialog>
#include <QPointer>

#include <functional>

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QWidget;

namespace ratescope::ui {

class PasswordVault;
class ProfileStore;

class ConnectionDialog : public QDialog {
    Q_OBJECT
public:
    ConnectionDialog(ProfileStore &store, PasswordVault &vault, QWidget *parent = nullptr);
    ~ConnectionDialog() override;

    // Edits an existing profile (its name may change) or, with editing = false, starts from
    // a template for a new one.
    void setProfile(const ConnectionProfile &profile, bool editing);
    ConnectionProfile profile() const; // as the form says
    QStringList problems() const;      // the profile's, plus a name clash

    // Starts a test with the form's settings; the answer shows in the dialog.
    void testConnection();
    // Tests, then saves and closes on success (what the Save button does).
    void save();
    bool isBusy() const { return m_busy; }
    QString resultText() const;
    // After saving: why the password is kept for this session only, if it is.
    QString saveNote() const { return m_saveNote; }

    // For tests: the form's widgets.
    QLineEdit *nameEdit() const { return m_name; }
    QLineEdit *hostEdit() const { return m_host; }
    QSpinBox *portEdit() const { return m_port; }
    QLineEdit *userEdit() const { return m_user; }
    QLineEdit *passwordEdit() const { return m_password; }
    QComboBox *transportBox() const { return m_transport; }
    QLineEdit *socketEdit() const { return m_socket; }
    QLineEdit *seedsEdit() const { return m_seeds; }
    QLineEdit *masterNameEdit() const { return m_masterName; }
    QLineEdit *sentinelUserEdit() const { return m_sentinelUser; }
    QLineEdit *sentinelPasswordEdit() const { return m_sentinelPassword; }
    QSpinBox *dbEdit() const { return m_db; }
    QLineEdit *separatorEdit() const { return m_separator; }
    QPushButton *saveButton() const { return m_saveButton; }
    QPushButton *testButton() const { return m_testButton; }

signals:
    void tested(bool ok, const QString &message);
    void saved(const ratescope::ui::ConnectionProfile &profile);

private:
    void validate();
    void run(bool thenSave);
    void finishTest(const Outcome<RedisClient::Status> &o, bool thenSave);
    void keep(const ConnectionProfile &profile);
    // The passwords to test with: typed, or (editing) the stored ones.
    void withPasswords(std::function<void(QString, QString)> go);
    void showTransport();
    void showResult(const QString &text, bool ok);
    void setBusy(bool busy);
    void fitHeight();
    QWidget *fileRow(QLineEdit *edit, const QString &title);

    ProfileStore &m_store;
    PasswordVault &m_vault;
    QString m_originalName; // editing: the name it had
    ConnectionProfile::PasswordStorage m_storedPassword = ConnectionProfile::PasswordStorage::None;
    ConnectionProfile::PasswordStorage m_storedSentinelPassword = ConnectionProfile::PasswordStorage::None;
    QPointer<RedisClient> m_client; // the test's own connection
    bool m_busy = false;
    bool m_offerSaveAnyway = false; // the server could not be reached (not a refusal)
    QString m_saveNote;

    QLineEdit *m_name;
    QComboBox *m_transport;
    QLineEdit *m_host;
    QSpinBox *m_port;
    QLineEdit *m_socket;
    QLineEdit *m_seeds;
    QLineEdit *m_masterName;
    QWidget *m_sentinelBox;
    QLineEdit *m_sentinelUser;
    QLineEdit *m_sentinelPassword;
    QFormLayout *m_form;
    QWidget *m_hostRow;
    QWidget *m_tlsBox;
    QLineEdit *m_ca;
    QLineEdit *m_cert;
    QLineEdit *m_key;
    QLineEdit *m_serverName;
    QCheckBox *m_verify;
    QLineEdit *m_user;
    QLineEdit *m_password;
    QSpinBox *m_db;
    QLineEdit *m_ns;
    QLineEdit *m_separator;
    QCheckBox *m_readOnly;
    QLabel *m_problems;
    QLabel *m_result;
    QPushButton *m_testButton;
    QPushButton *m_saveButton;
};

} // namespace ratescope::ui
