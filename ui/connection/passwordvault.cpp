#include "passwordvault.h"

#include <QPointer>
#include <qt6keychain/keychain.h>

namespace ratescope::ui {

namespace {

const QString kService = QStringLiteral("Ratescope");

KeychainStore::Error errorOf(QKeychain::Error e)
{
    switch (e) {
    case QKeychain::NoError:
        return KeychainStore::Error::None;
    case QKeychain::EntryNotFound:
        return KeychainStore::Error::NotFound;
    case QKeychain::NoBackendAvailable:
    case QKeychain::NotImplemented:
        return KeychainStore::Error::NoService;
    case QKeychain::AccessDenied:
    case QKeychain::AccessDeniedByUser:
        return KeychainStore::Error::Denied;
    default:
        return KeychainStore::Error::Other; // CouldNotDeleteEntry, OtherError
    }
}

// The system keychain through QtKeychain (never its plain-text fallback).
class QtKeychainStore final : public KeychainStore {
public:
    void read(const QString &key, QObject *owner, Done done) override
    {
        auto *job = new QKeychain::ReadPasswordJob(kService);
        job->setKey(key);
        run(job, owner, std::move(done));
    }
    void write(const QString &key, const QString &password, QObject *owner, Done done) override
    {
        auto *job = new QKeychain::WritePasswordJob(kService);
        job->setKey(key);
        job->setTextData(password);
        run(job, owner, std::move(done));
    }
    void remove(const QString &key, QObject *owner, Done done) override
    {
        auto *job = new QKeychain::DeletePasswordJob(kService);
        job->setKey(key);
        run(job, owner, std::move(done));
    }

private:
    static void run(QKeychain::Job *job, QObject *owner, Done done)
    {
        job->setAutoDelete(true);
        job->setInsecureFallback(false); // never plain text
        QObject::connect(job, &QKeychain::Job::finished, owner, [done](QKeychain::Job *j) {
            Result r;
            r.error = errorOf(j->error());
            if (r.error != Error::None)
                r.message = j->errorString();
            else if (auto *read = qobject_cast<QKeychain::ReadPasswordJob *>(j))
                r.password = read->textData();
            done(r);
        });
        job->start();
    }
};

QString keychainWords(const QString &why)
{
    return why.isEmpty() || why == QLatin1String("Unknown error") ? QString() : QStringLiteral(" (%1)").arg(why);
}

} // namespace

PasswordVault::PasswordVault(Backend backend, QObject *parent)
    : QObject(parent)
    , m_backend(backend)
{
    if (backend == Backend::Keychain)
        m_keychain = std::make_unique<QtKeychainStore>();
}

PasswordVault::PasswordVault(std::unique_ptr<KeychainStore> keychain, QObject *parent)
    : QObject(parent)
    , m_backend(Backend::Keychain)
    , m_keychain(std::move(keychain))
{
}

PasswordVault::~PasswordVault() = default;

QString PasswordVault::keychainKey(const QString &profile, Secret which)
{
    return (which == Secret::Sentinel ? QStringLiteral("sentinels/%1") : QStringLiteral("profile/%1")).arg(profile);
}

void PasswordVault::store(const QString &profile, const QString &password, QObject *context, std::function<void(Kept, QString)> done,
                          Secret which)
{
    const QString key = keychainKey(profile, which);
    m_session.insert(key, password);
    if (!m_keychain || m_keychainMissing) {
        QMetaObject::invokeMethod(
            context,
            [done] {
                done(Kept::ForThisSession, QStringLiteral("No keychain service is running: the password is kept for this "
                                                          "session only and asked for next time."));
            },
            Qt::QueuedConnection);
        return;
    }
    QPointer<QObject> guard(context);
    m_keychain->write(key, password, this, [this, guard, done](const KeychainStore::Result &r) {
        learn(r.error);
        if (!guard)
            return;
        if (r.error == KeychainStore::Error::None) {
            done(Kept::InKeychain, {});
            return;
        }
        done(Kept::ForThisSession,
             QStringLiteral("The system keychain %1%2: the password is kept for this session only "
                            "and asked for next time.")
                 .arg(r.error == KeychainStore::Error::Denied ? QStringLiteral("refused it") : QStringLiteral("is not available"),
                      keychainWords(r.message)));
    });
}

void PasswordVault::fetch(const QString &profile, QObject *context, std::function<void(std::optional<QString>)> done, Secret which)
{
    const QString key = keychainKey(profile, which);
    if (m_session.contains(key) || !m_keychain || m_keychainMissing) {
        std::optional<QString> known;
        if (m_session.contains(key))
            known = m_session.value(key);
        QMetaObject::invokeMethod(
            context, [done, known] { done(known); }, Qt::QueuedConnection);
        return;
    }
    QPointer<QObject> guard(context);
    m_keychain->read(key, this, [this, guard, done, key](const KeychainStore::Result &r) {
        // Only "no keychain service" stops the asking: a locked keychain or a closed unlock
        // prompt is asked again next time, and deleting a profile still removes its entry.
        learn(r.error);
        if (!guard)
            return;
        if (r.error != KeychainStore::Error::None) {
            done(std::nullopt);
            return;
        }
        m_session.insert(key, r.password);
        done(r.password);
    });
}

void PasswordVault::forget(const QString &profile, Secret which, QObject *context, std::function<void(QString)> done)
{
    const QString key = keychainKey(profile, which);
    m_session.remove(key);
    QPointer<QObject> guard(context);
    auto answer = [guard, done](const QString &note) {
        if (done && guard)
            done(note);
    };
    if (!m_keychain) {
        if (context)
            QMetaObject::invokeMethod(
                context, [answer] { answer({}); }, Qt::QueuedConnection);
        return;
    }
    // Asked even after a failed job this session: the entry may be there from another one.
    m_keychain->remove(key, this, [this, key, answer](const KeychainStore::Result &r) {
        learn(r.error);
        if (r.error == KeychainStore::Error::None || r.error == KeychainStore::Error::NotFound) {
            answer({});
            return;
        }
        answer(QStringLiteral("The stored password could not be removed from the system "
                              "keychain%1: remove the entry \"%2\" of %3 there by hand.")
                   .arg(keychainWords(r.message), key, kService));
    });
}

} // namespace ratescope::ui
