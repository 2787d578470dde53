// Connection profiles: the dialog's validation, "Test connection", and Save that keeps a
// profile (settings) and its password (keychain, or this session) only after the server has
// accepted them; a wrong password shows the server's error and saves nothing; no password
// ever reaches the settings file.
#include "connectiondialog.h"
#include "passwordvault.h"
#include "profilestore.h"
#include "redis/sandboxserver.h"

#include <QComboBox>
#include <QFile>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

using namespace ratescope;
using namespace ratescope::ui;

namespace {

const QString kPassword = QStringLiteral("s3cret-Pa55word");

// A keychain in memory standing in for the system's (none runs offscreen): it answers later,
// as the real one does, and can be told to refuse (a locked keychain, a closed unlock prompt)
// or to be missing altogether.
class MemoryKeychain : public KeychainStore {
public:
    QHash<QString, QString> entries;
    Error readError = Error::None;   // every read fails so, unless None
    Error removeError = Error::None; // every remove fails so, unless None
    int reads = 0, removes = 0;

    void read(const QString &key, QObject *owner, Done done) override
    {
        ++reads;
        Result r;
        if (readError != Error::None)
            r = {readError, QStringLiteral("refused"), {}};
        else if (!entries.contains(key))
            r.error = Error::NotFound;
        else
            r.password = entries.value(key);
        answer(owner, done, r);
    }
    void write(const QString &key, const QString &password, QObject *owner, Done done) override
    {
        entries.insert(key, password);
        answer(owner, done, {});
    }
    void remove(const QString &key, QObject *owner, Done done) override
    {
        ++removes;
        if (removeError != Error::None) {
            answer(owner, done, {removeError, QStringLiteral("the keychain is locked"), {}});
            return;
        }
        answer(owner, done, {entries.remove(key) ? Error::None : Error::NotFound, {}, {}});
    }

private:
    static void answer(QObject *owner, const Done &done, const Result &r)
    {
        QMetaObject::invokeMethod(
            owner, [done, r] { done(r); }, Qt::QueuedConnection);
    }
};

} // namespace

class TestConnectionDialog : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void validation();
    void duplicateName();
    void testConnectionReportsTheServer();
    void wrongPasswordSavesNothing();
    void rightPasswordSavesProfileNotPassword();
    void unreachableOffersSaveAnyway();
    void profilesRoundTrip();
    void keychainRefusalIsNotAMissingKeychain();
    void renameRemovesTheOldEntryAfterARefusedRead();
    void renameSaysWhenTheOldEntryStays();

private:
    void fillFor(ConnectionDialog &d, const QString &name, const QString &password);

    SandboxServer m_server{[] {
        SandboxServer::Config c;
        c.configLines << QStringLiteral("requirepass %1").arg(kPassword);
        return c;
    }()};
    QTemporaryDir m_dir;
    std::unique_ptr<QSettings> m_settings;
    std::unique_ptr<ProfileStore> m_store;
    std::unique_ptr<PasswordVault> m_vault;
};

void TestConnectionDialog::initTestCase()
{
    m_server.start();
}

void TestConnectionDialog::init()
{
    QFile::remove(m_dir.filePath(QStringLiteral("settings.ini")));
    m_settings = std::make_unique<QSettings>(m_dir.filePath(QStringLiteral("settings.ini")), QSettings::IniFormat);
    m_store = std::make_unique<ProfileStore>(m_settings.get());
    // No keychain service in CI: the session-only vault is the fallback the console uses then.
    m_vault = std::make_unique<PasswordVault>(PasswordVault::Backend::SessionOnly);
}

void TestConnectionDialog::cleanup()
{
    m_store.reset();
    m_settings.reset();
    m_vault.reset();
}

void TestConnectionDialog::fillFor(ConnectionDialog &d, const QString &name, const QString &password)
{
    d.nameEdit()->setText(name);
    d.hostEdit()->setText(QStringLiteral("127.0.0.1"));
    d.portEdit()->setValue(m_server.port());
    d.passwordEdit()->setText(password);
}

void TestConnectionDialog::validation()
{
    ConnectionDialog d(*m_store, *m_vault);
    d.nameEdit()->clear();
    QVERIFY(d.problems().join(QLatin1Char(' ')).contains(QStringLiteral("name")));
    QVERIFY(!d.saveButton()->isEnabled());
    QVERIFY(!d.testButton()->isEnabled());

    fillFor(d, QStringLiteral("local"), QString());
    QVERIFY2(d.problems().isEmpty(), qPrintable(d.problems().join(QLatin1Char('\n'))));
    QVERIFY(d.saveButton()->isEnabled());

    d.hostEdit()->setText(QStringLiteral("bad host/name"));
    QVERIFY(d.problems().join(QLatin1Char(' ')).contains(QStringLiteral("not a host")));
    QVERIFY(!d.saveButton()->isEnabled());
    d.hostEdit()->clear();
    QVERIFY(d.problems().join(QLatin1Char(' ')).contains(QStringLiteral("host name or address")));
    d.hostEdit()->setText(QStringLiteral("localhost"));

    d.transportBox()->setCurrentIndex(int(ConnectionProfile::Transport::Unix));
    QVERIFY(d.problems().join(QLatin1Char(' ')).contains(QStringLiteral("unix socket")));
    d.socketEdit()->setText(QStringLiteral("/run/redis.sock"));
    QVERIFY(d.problems().isEmpty());

    d.transportBox()->setCurrentIndex(int(ConnectionProfile::Transport::Tls));
    ConnectionProfile p = d.profile();
    p.certFile = QStringLiteral("/nonexistent/client.crt");
    QVERIFY(p.problems().join(QLatin1Char(' ')).contains(QStringLiteral("needs its private key")));
    QVERIFY(p.problems().join(QLatin1Char(' ')).contains(QStringLiteral("cannot be read")));

    d.transportBox()->setCurrentIndex(int(ConnectionProfile::Transport::Tcp));
    d.separatorEdit()->clear();
    QVERIFY(d.problems().join(QLatin1Char(' ')).contains(QStringLiteral("separator")));
    QVERIFY(!d.saveButton()->isEnabled());
    d.separatorEdit()->setText(QStringLiteral("/"));
    QVERIFY(d.problems().isEmpty());
    QCOMPARE(d.profile().separator, QStringLiteral("/"));
}

void TestConnectionDialog::duplicateName()
{
    ConnectionProfile existing;
    existing.name = QStringLiteral("prod");
    m_store->save(existing);
    ConnectionDialog d(*m_store, *m_vault);
    fillFor(d, QStringLiteral("prod"), QString());
    QVERIFY(d.problems().join(QLatin1Char(' ')).contains(QStringLiteral("exists already")));
    // Editing it keeps its own name.
    d.setProfile(existing, true);
    QVERIFY2(d.problems().isEmpty(), qPrintable(d.problems().join(QLatin1Char('\n'))));
}

void TestConnectionDialog::testConnectionReportsTheServer()
{
    ConnectionDialog d(*m_store, *m_vault);
    fillFor(d, QStringLiteral("local"), kPassword);
    QSignalSpy tested(&d, &ConnectionDialog::tested);
    QTest::mouseClick(d.testButton(), Qt::LeftButton);
    QVERIFY(tested.wait(10000));
    QCOMPARE(tested.first().at(0).toBool(), true);
    QVERIFY2(d.resultText().startsWith(QStringLiteral("Connected to Redis 7")), qPrintable(d.resultText()));
    QVERIFY(m_store->list().isEmpty()); // a test saves nothing
    QCOMPARE(m_vault->sessionCount(), 0);
}

void TestConnectionDialog::wrongPasswordSavesNothing()
{
    ConnectionDialog d(*m_store, *m_vault);
    fillFor(d, QStringLiteral("local"), QStringLiteral("not-the-password"));
    QSignalSpy tested(&d, &ConnectionDialog::tested);
    QSignalSpy saved(&d, &ConnectionDialog::saved);
    QTest::mouseClick(d.saveButton(), Qt::LeftButton);
    QVERIFY(tested.wait(10000));
    QCOMPARE(tested.first().at(0).toBool(), false);
    QVERIFY2(d.resultText().contains(QStringLiteral("WRONGPASS")), qPrintable(d.resultText()));
    QVERIFY(d.resultText().contains(QStringLiteral("Nothing was saved")));
    QVERIFY(!d.resultText().contains(QStringLiteral("not-the-password")));
    QCOMPARE(d.result(), int(QDialog::Rejected));
    QCOMPARE(d.saveButton()->text(), QStringLiteral("Save")); // no "Save anyway" for a refusal
    QCOMPARE(saved.size(), 0);
    QVERIFY(m_store->list().isEmpty());
    QCOMPARE(m_vault->sessionCount(), 0);
    m_settings->sync();
    QVERIFY(m_settings->allKeys().isEmpty());
}

void TestConnectionDialog::rightPasswordSavesProfileNotPassword()
{
    ConnectionDialog d(*m_store, *m_vault);
    fillFor(d, QStringLiteral("local sandbox"), kPassword);
    QSignalSpy saved(&d, &ConnectionDialog::saved);
    QTest::mouseClick(d.saveButton(), Qt::LeftButton);
    QVERIFY(saved.wait(10000));
    QCOMPARE(d.result(), int(QDialog::Accepted));
    const auto stored = m_store->find(QStringLiteral("local sandbox"));
    QVERIFY(stored);
    QCOMPARE(stored->port, int(m_server.port()));
    // No keychain here: the password is kept for the session and asked for next time.
    QCOMPARE(stored->passwordStorage, ConnectionProfile::PasswordStorage::Ask);
    QVERIFY(m_vault->hasSessionPassword(QStringLiteral("local sandbox")));
    m_settings->sync();
    QFile file(m_settings->fileName());
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray contents = file.readAll();
    QVERIFY(contents.contains("local"));
    QVERIFY2(!contents.contains(kPassword.toUtf8()), contents.constData());
}

void TestConnectionDialog::unreachableOffersSaveAnyway()
{
    ConnectionDialog d(*m_store, *m_vault);
    fillFor(d, QStringLiteral("later"), QString());
    d.portEdit()->setValue(freeLoopbackPort()); // nothing listens there
    QSignalSpy tested(&d, &ConnectionDialog::tested);
    QTest::mouseClick(d.saveButton(), Qt::LeftButton);
    QVERIFY(tested.wait(10000));
    QVERIFY(m_store->list().isEmpty());
    QCOMPARE(d.saveButton()->text(), QStringLiteral("Save anyway"));
    QSignalSpy saved(&d, &ConnectionDialog::saved);
    QTest::mouseClick(d.saveButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(saved.size(), 1, 5000);
    QVERIFY(m_store->contains(QStringLiteral("later")));
}

void TestConnectionDialog::profilesRoundTrip()
{
    ConnectionProfile p;
    p.name = QStringLiteral("eu/west: limiters"); // characters settings keys cannot hold
    p.transport = ConnectionProfile::Transport::Tls;
    p.host = QStringLiteral("redis.example");
    p.port = 6380;
    p.caFile = QStringLiteral("/etc/ssl/ca.pem");
    p.serverName = QStringLiteral("redis.internal");
    p.verifyPeer = false;
    p.user = QStringLiteral("reader");
    p.db = 3;
    p.ns = QStringLiteral("rl:");
    p.separator = QStringLiteral("/");
    p.readOnly = true;
    p.passwordStorage = ConnectionProfile::PasswordStorage::Keychain;
    m_store->save(p);
    QCOMPARE(m_store->find(p.name), std::optional<ConnectionProfile>(p));
    QCOMPARE(m_store->list().size(), 1);
    const ConnectionOptions o = p.toOptions(QStringLiteral("pw"));
    QCOMPARE(o.transport, ConnectionOptions::Transport::Tls);
    QCOMPARE(o.tls.sni, QStringLiteral("redis.internal"));
    QVERIFY(o.tls.insecure);
    QCOMPARE(o.db, 3);
    QVERIFY(!o.toUrl().contains(QStringLiteral("pw"))); // redacted
    ConnectionProfile renamed = p;
    renamed.name = QStringLiteral("eu-west");
    m_store->save(renamed, p.name);
    QCOMPARE(m_store->list().size(), 1);
    QVERIFY(m_store->contains(QStringLiteral("eu-west")));
    m_store->remove(QStringLiteral("eu-west"));
    QVERIFY(m_store->list().isEmpty());
}

void TestConnectionDialog::keychainRefusalIsNotAMissingKeychain()
{
    auto owned = std::make_unique<MemoryKeychain>();
    MemoryKeychain *keychain = owned.get();
    keychain->entries.insert(QStringLiteral("profile/prod"), kPassword);
    PasswordVault vault(std::move(owned));
    QObject context;
    std::optional<std::optional<QString>> got;
    auto fetch = [&] {
        got.reset();
        vault.fetch(QStringLiteral("prod"), &context, [&](std::optional<QString> p) { got = p; });
        QTRY_VERIFY_WITH_TIMEOUT(got.has_value(), 5000);
    };
    // The user closes the unlock prompt: no password now, but the keychain is still there.
    keychain->readError = KeychainStore::Error::Denied;
    fetch();
    QVERIFY(!got->has_value());
    QVERIFY(!vault.keychainMissing());
    // Asked again next time, and unlocked this time.
    keychain->readError = KeychainStore::Error::None;
    fetch();
    QCOMPARE(got->value_or(QString()), kPassword);
    QCOMPARE(keychain->reads, 2);
    // Deleting the profile removes the entry.
    vault.dropSessionPassword(QStringLiteral("prod"));
    std::optional<QString> note;
    vault.forget(QStringLiteral("prod"), PasswordVault::Secret::Server, &context, [&](const QString &n) { note = n; });
    QTRY_VERIFY_WITH_TIMEOUT(note.has_value(), 5000);
    QVERIFY2(note->isEmpty(), qPrintable(*note));
    QVERIFY(!keychain->entries.contains(QStringLiteral("profile/prod")));

    // No keychain service at all: that one stops the asking for the session...
    keychain->entries.insert(QStringLiteral("profile/prod"), kPassword);
    keychain->readError = KeychainStore::Error::NoService;
    fetch();
    QVERIFY(vault.keychainMissing());
    fetch();
    QCOMPARE(keychain->reads, 3);
    // ...but a delete still asks (the entry may be from another session), and says when it
    // cannot remove it.
    keychain->removeError = KeychainStore::Error::NoService;
    note.reset();
    vault.forget(QStringLiteral("prod"), PasswordVault::Secret::Server, &context, [&](const QString &n) { note = n; });
    QTRY_VERIFY_WITH_TIMEOUT(note.has_value(), 5000);
    QCOMPARE(keychain->removes, 2);
    QVERIFY2(note->contains(QStringLiteral("could not be removed")) && note->contains(QStringLiteral("profile/prod")), qPrintable(*note));
    QVERIFY(!note->contains(kPassword));
}

namespace {

// The profile "old", its password kept in the keychain, at a port where nothing listens (so
// that Save needs "Save anyway"), renamed to "new" in the dialog with the password unchanged.
void renameOldToNew(ProfileStore &store, PasswordVault &vault, ConnectionDialog **out)
{
    ConnectionProfile old;
    old.name = QStringLiteral("old");
    old.host = QStringLiteral("127.0.0.1");
    old.port = freeLoopbackPort();
    old.passwordStorage = ConnectionProfile::PasswordStorage::Keychain;
    store.save(old);
    auto *d = new ConnectionDialog(store, vault);
    d->setProfile(old, true);
    d->nameEdit()->setText(QStringLiteral("new"));
    QSignalSpy tested(d, &ConnectionDialog::tested);
    QTest::mouseClick(d->saveButton(), Qt::LeftButton);
    QVERIFY(tested.wait(10000));
    QCOMPARE(d->saveButton()->text(), QStringLiteral("Save anyway"));
    QSignalSpy saved(d, &ConnectionDialog::saved);
    QTest::mouseClick(d->saveButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(saved.size(), 1, 5000);
    *out = d;
}

} // namespace

void TestConnectionDialog::renameRemovesTheOldEntryAfterARefusedRead()
{
    auto owned = std::make_unique<MemoryKeychain>();
    MemoryKeychain *keychain = owned.get();
    keychain->entries.insert(QStringLiteral("profile/old"), kPassword);
    keychain->readError = KeychainStore::Error::Denied; // the unlock prompt closed, each time
    PasswordVault vault(std::move(owned));
    ConnectionDialog *d = nullptr;
    renameOldToNew(*m_store, vault, &d);
    QVERIFY(d);
    std::unique_ptr<ConnectionDialog> owner(d);
    // The password could not be moved (so it is asked for), and the old name's entry is gone.
    QVERIFY(m_store->contains(QStringLiteral("new")));
    QCOMPARE(m_store->find(QStringLiteral("new"))->passwordStorage, ConnectionProfile::PasswordStorage::Ask);
    QVERIFY2(d->saveNote().contains(QStringLiteral("could not be read")), qPrintable(d->saveNote()));
    QVERIFY(!vault.keychainMissing());
    QVERIFY(keychain->removes >= 1);
    QVERIFY(!keychain->entries.contains(QStringLiteral("profile/old")));
}

void TestConnectionDialog::renameSaysWhenTheOldEntryStays()
{
    auto owned = std::make_unique<MemoryKeychain>();
    MemoryKeychain *keychain = owned.get();
    keychain->entries.insert(QStringLiteral("profile/old"), kPassword);
    keychain->removeError = KeychainStore::Error::Other;
    PasswordVault vault(std::move(owned));
    ConnectionDialog *d = nullptr;
    renameOldToNew(*m_store, vault, &d);
    QVERIFY(d);
    std::unique_ptr<ConnectionDialog> owner(d);
    // Moved under the new name; the old entry stays, and the note says so and where.
    QCOMPARE(keychain->entries.value(QStringLiteral("profile/new")), kPassword);
    QCOMPARE(m_store->find(QStringLiteral("new"))->passwordStorage, ConnectionProfile::PasswordStorage::Keychain);
    QVERIFY(keychain->entries.contains(QStringLiteral("profile/old")));
    QVERIFY2(d->saveNote().contains(QStringLiteral("could not be removed")) && d->saveNote().contains(QStringLiteral("profile/old")),
             qPrintable(d->saveNote()));
}

QTEST_MAIN(TestConnectionDialog)
#include "tst_connectiondialog.moc"
