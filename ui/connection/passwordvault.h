// Where profile passwords go: the system keychain (through QtKeychain), or, where no keychain
// service runs, only this session's memory, so the console asks again next time. Never a
// settings file, never a log.
#pragma once

#include <QHash>
#include <QObject>

#include <functional>
#include <memory>
#include <optional>

namespace ratescope::ui {

// The system keychain as the vault sees it: three asynchronous jobs, each answering once with
// one of a few outcomes. QtKeychain behind it in the console; tests put a keychain of their
// own here (none runs offscreen).
class KeychainStore {
public:
    enum class Error {
        None,
        NotFound,  // no such entry
        NoService, // no keychain service on this machine (or this build cannot use it)
        Denied,    // the keychain is there but said no: locked, the unlock prompt closed, ...
        Other,     // anything else (a failed delete, a D-Bus error)
    };
    struct Result {
        Error error = Error::None;
        QString message;  // the keychain's words, for a note
        QString password; // read: the password found
    };
    using Done = std::function<void(const Result &)>;

    virtual ~KeychainStore() = default;
    // Each answers on the calling (GUI) thread, later, through done, unless owner is gone.
    virtual void read(const QString &key, QObject *owner, Done done) = 0;
    virtual void write(const QString &key, const QString &password, QObject *owner, Done done) = 0;
    virtual void remove(const QString &key, QObject *owner, Done done) = 0;

    // The one error that means "there is no keychain here": stop asking it for this session.
    // A locked keychain, a prompt the user closed, a refusal, a failed delete are not: the next
    // call asks again, and a profile deleted meanwhile still has its entry removed.
    static bool meansNoKeychain(Error error) { return error == Error::NoService; }
};

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
    // The keychain given (Backend::Keychain): what tests use in place of the system's.
    explicit PasswordVault(std::unique_ptr<KeychainStore> keychain, QObject *parent = nullptr);
    ~PasswordVault() override;

    // Stores the password of a profile. done(kept, note): note explains a fallback.
    void store(const QString &profile, const QString &password, QObject *context, std::function<void(Kept, QString)> done,
               Secret which = Secret::Server);
    // Looks it up: session memory first, then the keychain. nullopt: the user must be asked.
    void fetch(const QString &profile, QObject *context, std::function<void(std::optional<QString>)> done, Secret which = Secret::Server);
    // Keeps a password typed at a prompt for the rest of the session.
    void remember(const QString &profile, const QString &password, Secret which = Secret::Server)
    {
        m_session.insert(keychainKey(profile, which), password);
    }
    // Drops the password from the session and from the keychain (asked even when an earlier
    // job failed: the entry may be there from an earlier session). done, if given: an empty
    // note once it is gone (or was never there), else why it could not be removed.
    void forget(const QString &profile, Secret which = Secret::Server, QObject *context = nullptr, std::function<void(QString)> done = {});
    // After the server refused it: the keychain's copy stays, the session's goes.
    void dropSessionPassword(const QString &profile, Secret which = Secret::Server) { m_session.remove(keychainKey(profile, which)); }
    bool hasSessionPassword(const QString &profile, Secret which = Secret::Server) const
    {
        return m_session.contains(keychainKey(profile, which));
    }
    int sessionCount() const { return int(m_session.size()); }
    // A job said there is no keychain service: this session keeps passwords in memory only.
    bool keychainMissing() const { return m_keychainMissing; }

    static QString keychainKey(const QString &profile, Secret which);

private:
    void learn(KeychainStore::Error error)
    {
        if (KeychainStore::meansNoKeychain(error))
            m_keychainMissing = true;
    }

    Backend m_backend;
    std::unique_ptr<KeychainStore> m_keychain; // nullptr for SessionOnly
    bool m_keychainMissing = false;            // learnt from a job: no service, stop asking it
    QHash<QString, QString> m_session;         // by keychain key
};

} // namespace ratescope::ui
