// Where profile passwords go: the system keychain (through QtKeychain), or, where no keychain
// service runs, only this session's memory, so the console asks again next time. Never a
// settings file, never a log.
#pragma once

#include <QHash>
#include <QObject>

#include <functional>
#include <optional>

namespace ratescope::ui {

class PasswordVault : public QObject {
    Q_OBJECT
public:
    enum class Backend {
        Keychain,    // the system keychain, falling back to session memory when it is missing
        SessionOnly, // session memory only (tests, or a user who declines the keychain)
    };
    // How a password was kept.
    enum class Kept { InKeychain, ForThisSession };

    explicit PasswordVault(Backend backend = Backend::Keychain, QObject *parent = nullptr);

    // Stores the password of a profile. done(kept, note): note explains a fallback.
    void store(const QString &profile, const QString &password, QObject *context,
               std::function<void(Kept, QString)> done);
    // Looks it up: session memory first, then the keychain. nullopt: the user must be asked.
    void fetch(const QString &profile, QObject *context,
               std::function<void(std::optional<QString>)> done);
    // Keeps a password typed at a prompt for the rest of the session.
    void remember(const QString &profile, const QString &password)
    {
        m_session.insert(profile, password);
    }
    void forget(const QString &profile); // session memory and keychain
    // After the server refused it: the keychain's copy stays, the session's goes.
    void dropSessionPassword(const QString &profile) { m_session.remove(profile); }
    bool hasSessionPassword(const QString &profile) const { return m_session.contains(profile); }
    int sessionCount() const { return int(m_session.size()); }

private:
    static QString keychainKey(const QString &profile);

    Backend m_backend;
    bool m_keychainMissing = false; // learnt from a failed job: stop asking it
    QHash<QString, QString> m_session;
};

} // namespace ratescope::ui
