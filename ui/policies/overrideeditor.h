// Granting one key a temporary limit: prefilled with the limits in force for it, an expiry
// picked from the usual spans (or typed), each field's problem shown next to it.
#pragma once

#include "admin/policy.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace ratescope::ui {

class OverrideEditor : public QWidget {
    Q_OBJECT
public:
    explicit OverrideEditor(QWidget *parent = nullptr);

    // key: empty for an override typed by hand. inForce: the limits that apply now and where
    // they come from ("policy api-default", "an override until 14:05").
    void edit(const QByteArray &key, const std::optional<LimitSpec> &inForce, const QString &inForceFrom);
    // The limits in force for the key, once read; prefills the limit when it is still empty.
    void setInForce(const std::optional<LimitSpec> &inForce, const QString &from);
    QByteArray key() const;
    // The override as the fields say; nullopt with the problems shown when they are wrong.
    std::optional<Override> proposed() const;
    std::optional<qint64> forUs() const;
    QStringList problems() const;
    void setWritable(bool writable, const QString &why);
    void setStatus(const QString &text, bool problem);

    QLineEdit *keyEdit() const { return m_key; }
    QLineEdit *limitEdit() const { return m_limit; }
    QLineEdit *windowEdit() const { return m_window; }
    QComboBox *expiryBox() const { return m_expiry; }
    QLineEdit *customExpiryEdit() const { return m_customExpiry; }
    QLabel *inForceLabel() const { return m_inForce; }
    QPushButton *saveButton() const { return m_save; }
    QPushButton *clearButton() const { return m_clear; }

signals:
    void keyChanged(const QByteArray &key);
    void saveRequested();
    void clearRequested();
    void closeRequested();

private:
    void revalidate();

    QByteArray m_fixedKey; // from a key's context menu: exact bytes, shown escaped
    bool m_writable = false;
    QString m_whyNot;
    QLabel *m_title;
    QLineEdit *m_key;
    QLabel *m_inForce;
    QLineEdit *m_limit;
    QLineEdit *m_window;
    QComboBox *m_expiry;
    QLineEdit *m_customExpiry;
    QLabel *m_keyProblem;
    QLabel *m_limitProblem;
    QLabel *m_windowProblem;
    QLabel *m_expiryProblem;
    QLabel *m_status;
    QPushButton *m_save;
    QPushButton *m_clear;
    QPushButton *m_close;
};

} // namespace ratescope::ui
