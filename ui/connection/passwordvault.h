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
    // Which of a profile's passwords: the server's, or (Sentinel profiles) the sentinels'.
    enum class Secret { Server, Sentinel };

    explicit PasswordVault(Backend backend = Backend::Keychain, QObject *parent = nullptr);

    // Stores the password of a profile. done(kept, note): note explains a fallback.
    void store(const QString &profile, const QString &password, QObject *context,
               std::function<void(Kept, QString)> done, Secret which = Secret::Server);
    // Looks it up: session memory first, then the keychain. nullopt: the user must be asked.
    void fetch(const QString &profile, QObject *context,
               std::function<void(std::optional<QString>)> done, Secret which = Secret::Server);
    // Keeps a password typed at a prompt for the rest of the session.
    void remember(const QString &profile, const QString &password, Secret which = Secret::Server)
    {
        m_session.insert(keychainKey(profile, which), password);
    }
    void forget(const QString &profile, Secret which = Secret::Server); // session and keychain
    // After the server refused it: the keychain's copy stays, the session's goes.
    void dropSessionPassword(const QString &profile, Secret which = Secret::Server)
    {
        m_session.remove(keychainKey(profile, which));
    }
    bool hasSessionPassword(const QString &profile, Secret which = Secret::Server) const
    {
        return m_session.contains(keychainKey(profile, which));
    }
    int sessionCount() const { return int(m_session.size()); }

private:
    static QString keychainKey(const QString &profile, Secret which);

    Backend m_backend;
    bool m_keychainMissing = false; // learnt from a failed job: stop asking it
    QHash<QString, QString> m_session; // by keychain key
};

} // namespace ratescope::ui
