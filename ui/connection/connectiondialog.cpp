#include "connectiondialog.h"

#include "displayformat.h"
#include "passwordvault.h"
#include "profilestore.h"
#include "servertext.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include <memory>

namespace ratescope::ui {

namespace {

const QString kErrorStyle = QStringLiteral("QLabel { color: #b02a1e; }");
const QString kOkStyle = QStringLiteral("QLabel { color: #2e7d32; }");

} // namespace

ConnectionDialog::ConnectionDialog(ProfileStore &store, PasswordVault &vault, QWidget *parent)
    : QDialog(parent)
    , m_store(store)
    , m_vault(vault)
{
    setWindowTitle(QStringLiteral("Connection profile"));
    m_name = new QLineEdit(this);
    m_name->setPlaceholderText(QStringLiteral("e.g. production limiters"));
    m_transport = new QComboBox(this);
    // In the order of ConnectionProfile::Transport.
    m_transport->addItems({QStringLiteral("TCP"), QStringLiteral("TCP with TLS"), QStringLiteral("Unix socket"),
                           QStringLiteral("Redis Cluster"), QStringLiteral("Redis Sentinel")});
    m_host = new QLineEdit(this);
    m_port = new QSpinBox(this);
    m_port->setRange(1, 65535);
    m_port->setValue(6379);
    m_hostRow = new QWidget(this);
    auto *hostLayout = new QHBoxLayout(m_hostRow);
    hostLayout->setContentsMargins(0, 0, 0, 0);
    hostLayout->addWidget(m_host, 1);
    hostLayout->addWidget(new QLabel(QStringLiteral("Port"), m_hostRow));
    hostLayout->addWidget(m_port);
    m_socket = new QLineEdit(this);
    m_socket->setPlaceholderText(QStringLiteral("/run/redis/redis-server.sock"));
    m_seeds = new QLineEdit(this);
    m_masterName = new QLineEdit(this);
    m_masterName->setPlaceholderText(QStringLiteral("mymaster"));
    m_masterName->setToolTip(QStringLiteral("The name in the sentinels' “sentinel monitor” line"));

    m_sentinelBox = new QWidget(this);
    auto *sentinel = new QFormLayout(m_sentinelBox);
    sentinel->setContentsMargins(0, 0, 0, 0);
    m_sentinelUser = new QLineEdit(m_sentinelBox);
    m_sentinelUser->setPlaceholderText(QStringLiteral("none or default"));
    m_sentinelPassword = new QLineEdit(m_sentinelBox);
    m_sentinelPassword->setEchoMode(QLineEdit::Password);
    m_sentinelPassword->setToolTip(QStringLiteral("Only if the sentinels require one (their own requirepass or ACL); kept "
                                                  "in the system keychain, never in the settings file"));
    sentinel->addRow(QStringLiteral("User"), m_sentinelUser);
    sentinel->addRow(QStringLiteral("Password"), m_sentinelPassword);

    m_tlsBox = new QWidget(this);
    auto *tls = new QFormLayout(m_tlsBox);
    tls->setContentsMargins(0, 0, 0, 0);
    m_ca = new QLineEdit(m_tlsBox);
    m_ca->setPlaceholderText(QStringLiteral("the system's trusted CAs"));
    m_cert = new QLineEdit(m_tlsBox);
    m_cert->setPlaceholderText(QStringLiteral("only if the server asks for one"));
    m_key = new QLineEdit(m_tlsBox);
    m_serverName = new QLineEdit(m_tlsBox);
    m_serverName->setPlaceholderText(QStringLiteral("the host"));
    m_verify = new QCheckBox(QStringLiteral("Verify the server's certificate"), m_tlsBox);
    m_verify->setChecked(true);
    m_verify->setToolTip(QStringLiteral("Turn off only for a test server with a self-signed "
                                        "certificate you cannot trust otherwise"));
    tls->addRow(QStringLiteral("CA file"), fileRow(m_ca, QStringLiteral("CA certificates (PEM)")));
    tls->addRow(QStringLiteral("Client certificate"), fileRow(m_cert, QStringLiteral("Client certificate (PEM)")));
    tls->addRow(QStringLiteral("Client key"), fileRow(m_key, QStringLiteral("Client private key (PEM)")));
    tls->addRow(QStringLiteral("Server name"), m_serverName);
    tls->addRow(QString(), m_verify);

    m_user = new QLineEdit(this);
    m_user->setPlaceholderText(QStringLiteral("default"));
    m_password = new QLineEdit(this);
    m_password->setEchoMode(QLineEdit::Password);
    m_password->setToolTip(QStringLiteral("Kept in the system keychain, never in the settings file"));
    m_db = new QSpinBox(this);
    m_db->setRange(0, 100000);
    m_ns = new QLineEdit(QStringLiteral("ratescope:"), this);
    m_ns->setToolTip(QStringLiteral("Prefix of Ratescope's own keys: policies, overrides, audit"));
    m_separator = new QLineEdit(QStringLiteral(":"), this);
    m_separator->setMaximumWidth(80);
    m_separator->setToolTip(QStringLiteral("Groups key names in the keys panel: demo:api:acme sits in demo › api"));
    m_readOnly = new QCheckBox(QStringLiteral("Open read-only (every change is refused until you unlock it)"), this);

    auto *form = new QFormLayout;
    m_form = form;
    form->addRow(QStringLiteral("Name"), m_name);
    form->addRow(QStringLiteral("Connect with"), m_transport);
    form->addRow(QStringLiteral("Host"), m_hostRow);
    form->addRow(QStringLiteral("Socket"), m_socket);
    form->addRow(QStringLiteral("Nodes"), m_seeds);
    form->addRow(QStringLiteral("Master name"), m_masterName);
    form->addRow(QStringLiteral("Sentinel login"), m_sentinelBox);
    form->addRow(QStringLiteral("TLS"), m_tlsBox);
    form->addRow(QStringLiteral("ACL user"), m_user);
    form->addRow(QStringLiteral("Password"), m_password);
    form->addRow(QStringLiteral("Database"), m_db);
    form->addRow(QStringLiteral("Namespace"), m_ns);
    form->addRow(QStringLiteral("Key separator"), m_separator);
    form->addRow(QString(), m_readOnly);

    m_problems = new QLabel(this);
    m_problems->setWordWrap(true);
    m_problems->setStyleSheet(kErrorStyle);
    m_result = new QLabel(this);
    m_result->setWordWrap(true);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto *buttons = new QDialogButtonBox(this);
    m_testButton = buttons->addButton(QStringLiteral("Test connection"), QDialogButtonBox::ActionRole);
    m_saveButton = buttons->addButton(QStringLiteral("Save"), QDialogButtonBox::AcceptRole);
    buttons->addButton(QDialogButtonBox::Cancel);
    m_saveButton->setDefault(true);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_problems);
    layout->addWidget(m_result);
    layout->addWidget(buttons);

    connect(m_testButton, &QPushButton::clicked, this, &ConnectionDialog::testConnection);
    connect(m_saveButton, &QPushButton::clicked, this, &ConnectionDialog::save);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    for (QLineEdit *e : {m_name, m_host, m_socket, m_seeds, m_masterName, m_sentinelUser, m_sentinelPassword, m_ca, m_cert, m_key,
                         m_serverName, m_user, m_password, m_ns, m_separator})
        connect(e, &QLineEdit::textChanged, this, &ConnectionDialog::validate);
    connect(m_port, &QSpinBox::valueChanged, this, &ConnectionDialog::validate);
    connect(m_db, &QSpinBox::valueChanged, this, &ConnectionDialog::validate);
    connect(m_transport, &QComboBox::currentIndexChanged, this, [this] {
        showTransport();
        validate();
    });
    m_transport->setCurrentIndex(0);
    showTransport();
    setProfile(ConnectionProfile{}, false);
}

void ConnectionDialog::showTransport()
{
    using T = ConnectionProfile::Transport;
    const auto t = T(m_transport->currentIndex());
    const bool cluster = t == T::Cluster, sentinel = t == T::Sentinel;
    m_form->setRowVisible(m_hostRow, t == T::Tcp || t == T::Tls);
    m_form->setRowVisible(m_socket, t == T::Unix);
    m_form->setRowVisible(m_seeds, cluster || sentinel);
    m_form->setRowVisible(m_masterName, sentinel);
    m_form->setRowVisible(m_sentinelBox, sentinel);
    m_form->setRowVisible(m_tlsBox, t == T::Tls);
    m_form->setRowVisible(m_db, !cluster); // a cluster has database 0 only
    if (auto *label = qobject_cast<QLabel *>(m_form->labelForField(m_seeds)))
        label->setText(sentinel ? QStringLiteral("Sentinels") : QStringLiteral("Seed nodes"));
    m_seeds->setPlaceholderText(sentinel ? QStringLiteral("127.0.0.1:26379, 127.0.0.1:26380")
                                         : QStringLiteral("127.0.0.1:7000, 127.0.0.1:7001"));
    m_seeds->setToolTip(sentinel ? QStringLiteral("The sentinels to ask for the current master, in order; a dead "
                                                  "one is skipped. Failovers are followed.")
                                 : QStringLiteral("Any nodes of the cluster: the others, and who owns which slots, "
                                                  "are learnt from them. Keys are browsed on every master."));
}

ConnectionDialog::~ConnectionDialog()
{
    if (m_client)
        m_client->retire(); // a test under way finishes on its own, without us waiting
}

QWidget *ConnectionDialog::fileRow(QLineEdit *edit, const QString &title)
{
    auto *row = new QWidget(this);
    auto *l = new QHBoxLayout(row);
    l->setContentsMargins(0, 0, 0, 0);
    l->addWidget(edit, 1);
    auto *browse = new QToolButton(row);
    browse->setText(QStringLiteral("…"));
    browse->setToolTip(QStringLiteral("Choose a file"));
    l->addWidget(browse);
    connect(browse, &QToolButton::clicked, this, [this, edit, title] {
        // open(), not exec(): no nested event loop.
        auto *d = new QFileDialog(this, title, edit->text());
        d->setAttribute(Qt::WA_DeleteOnClose);
        d->setFileMode(QFileDialog::ExistingFile);
        connect(d, &QFileDialog::fileSelected, edit, &QLineEdit::setText);
        d->open();
    });
    return row;
}

void ConnectionDialog::setProfile(const ConnectionProfile &p, bool editing)
{
    m_originalName = editing ? p.name : QString();
    m_storedPassword = editing ? p.passwordStorage : ConnectionProfile::PasswordStorage::None;
    m_storedSentinelPassword = editing ? p.sentinelPasswordStorage : ConnectionProfile::PasswordStorage::None;
    m_name->setText(p.name);
    m_transport->setCurrentIndex(int(p.transport));
    m_host->setText(p.host);
    m_port->setValue(p.port);
    m_socket->setText(p.socketPath);
    m_seeds->setText(p.seeds.join(QStringLiteral(", ")));
    m_masterName->setText(p.masterName);
    m_sentinelUser->setText(p.sentinelUser);
    m_ca->setText(p.caFile);
    m_cert->setText(p.certFile);
    m_key->setText(p.keyFile);
    m_serverName->setText(p.serverName);
    m_verify->setChecked(p.verifyPeer);
    m_user->setText(p.user);
    for (auto [edit, stored] : {std::pair{m_password, m_storedPassword}, std::pair{m_sentinelPassword, m_storedSentinelPassword}}) {
        edit->clear();
        switch (stored) {
        case ConnectionProfile::PasswordStorage::Keychain:
            edit->setPlaceholderText(QStringLiteral("unchanged (in the system keychain)"));
            break;
        case ConnectionProfile::PasswordStorage::Ask:
            edit->setPlaceholderText(QStringLiteral("asked for when connecting (no keychain service)"));
            break;
        case ConnectionProfile::PasswordStorage::None:
            edit->setPlaceholderText(QStringLiteral("none"));
            break;
        }
    }
    m_db->setValue(p.db);
    m_ns->setText(p.ns);
    m_separator->setText(p.separator);
    m_readOnly->setChecked(p.readOnly);
    m_result->clear();
    m_offerSaveAnyway = false;
    m_saveButton->setText(QStringLiteral("Save"));
    setWindowTitle(editing ? QStringLiteral("Edit %1").arg(p.name) : QStringLiteral("New connection profile"));
    validate();
}

ConnectionProfile ConnectionDialog::profile() const
{
    ConnectionProfile p;
    p.name = m_name->text().trimmed();
    p.transport = ConnectionProfile::Transport(m_transport->currentIndex());
    p.host = m_host->text().trimmed();
    p.port = m_port->value();
    p.socketPath = m_socket->text().trimmed();
    p.seeds = ConnectionProfile::splitSeeds(m_seeds->text());
    p.masterName = m_masterName->text().trimmed();
    p.sentinelUser = m_sentinelUser->text().trimmed();
    p.sentinelPasswordStorage = m_storedSentinelPassword;
    p.caFile = m_ca->text().trimmed();
    p.certFile = m_cert->text().trimmed();
    p.keyFile = m_key->text().trimmed();
    p.serverName = m_serverName->text().trimmed();
    p.verifyPeer = m_verify->isChecked();
    p.user = m_user->text().trimmed();
    p.db = p.transport == ConnectionProfile::Transport::Cluster ? 0 : m_db->value();
    p.ns = m_ns->text();
    p.separator = m_separator->text();
    p.readOnly = m_readOnly->isChecked();
    p.passwordStorage = m_storedPassword;
    return p;
}

QStringList ConnectionDialog::problems() const
{
    const ConnectionProfile p = profile();
    QStringList list = p.problems();
    if (!p.name.isEmpty() && p.name != m_originalName && m_store.contains(p.name))
        list << QStringLiteral("A profile named '%1' exists already.").arg(p.name);
    return list;
}

QString ConnectionDialog::resultText() const
{
    return m_result->text();
}

void ConnectionDialog::validate()
{
    const QStringList list = problems();
    m_problems->setText(list.join(QLatin1Char('\n')));
    m_problems->setVisible(!list.isEmpty());
    fitHeight();
    m_saveButton->setEnabled(list.isEmpty() && !m_busy);
    m_testButton->setEnabled(list.isEmpty() && !m_busy);
    if (m_offerSaveAnyway) {
        m_offerSaveAnyway = false; // the form changed: test again before saving
        m_saveButton->setText(QStringLiteral("Save"));
    }
}

void ConnectionDialog::setBusy(bool busy)
{
    m_busy = busy;
    const bool ok = problems().isEmpty();
    m_saveButton->setEnabled(ok && !busy);
    m_testButton->setEnabled(ok && !busy);
}

void ConnectionDialog::showResult(const QString &text, bool ok)
{
    m_result->setText(text);
    m_result->setStyleSheet(ok ? kOkStyle : kErrorStyle);
    fitHeight();
}

void ConnectionDialog::fitHeight()
{
    // Wrapped messages need more height at this width; a top-level layout does not ask for it.
    QLayout *l = layout();
    l->activate();
    const int wanted = l->hasHeightForWidth() ? l->totalHeightForWidth(width()) : l->totalSizeHint().height();
    if (wanted > height())
        resize(width(), wanted);
}

void ConnectionDialog::testConnection()
{
    run(false);
}

void ConnectionDialog::save()
{
    if (m_offerSaveAnyway) {
        // The server could not be reached (it did not refuse us): the user decides.
        keep(profile());
        return;
    }
    run(true);
}

void ConnectionDialog::run(bool thenSave)
{
    if (m_busy || !problems().isEmpty())
        return;
    const ConnectionProfile p = profile();
    setBusy(true); // already while the kept passwords are looked up: one test at a time
    withPasswords([this, p, thenSave](const QString &password, const QString &sentinelPassword) {
        if (m_client)
            m_client->retire();
        m_client = new RedisClient(p.toOptions(password, sentinelPassword), this);
        m_result->setStyleSheet(QString());
        m_result->setText(QStringLiteral("Connecting to %1…").arg(p.endpoint()));
        m_client->request(
            this,
            &RedisClient::connectAndProbe,
            [this, thenSave](const Outcome<RedisClient::Status> &o) { finishTest(o, thenSave); });
    });
}

void ConnectionDialog::withPasswords(std::function<void(QString, QString)> go)
{
    using Secret = PasswordVault::Secret;
    // A field left empty while editing means "unchanged": the stored password is used.
    auto stored = [this](QLineEdit *edit, ConnectionProfile::PasswordStorage storage) {
        return edit->text().isEmpty() && !m_originalName.isEmpty() && storage != ConnectionProfile::PasswordStorage::None;
    };
    const bool sentinel = profile().transport == ConnectionProfile::Transport::Sentinel;
    auto withSentinel = [this, go, sentinel, useStored = stored(m_sentinelPassword, m_storedSentinelPassword)](const QString &password) {
        if (!sentinel)
            go(password, QString());
        else if (useStored)
            m_vault.fetch(
                m_originalName, this, [go, password](std::optional<QString> s) { go(password, s.value_or(QString())); }, Secret::Sentinel);
        else
            go(password, m_sentinelPassword->text());
    };
    if (stored(m_password, m_storedPassword))
        m_vault.fetch(m_originalName, this,
                      [withSentinel](std::optional<QString> password) { withSentinel(password.value_or(QString())); });
    else
        withSentinel(m_password->text());
}

void ConnectionDialog::finishTest(const Outcome<RedisClient::Status> &o, bool thenSave)
{
    if (m_client)
        m_client->retire();
    setBusy(false);
    if (o.ok()) {
        const ServerInfo &info = o.value().info;
        const bool cluster = info.mode == QLatin1String("cluster");
        // What answered: the role of one server, or the shape of a cluster or replicated set.
        const QString shape = cluster                 ? QStringLiteral("cluster: %1").arg(nodesSummary(info, true))
                              : info.nodes.size() > 1 ? nodesSummary(info, false)
                                                      : info.role;
        QString text =
            info.version.isEmpty() ? QStringLiteral("Connected") : QStringLiteral("Connected to Redis %1 (%2)").arg(info.version, shape);
        text += QStringLiteral(": %1 keys%2, round trip %3.")
                    .arg(formatCount(info.dbSize), cluster ? QStringLiteral(" on all masters") : QString(),
                         formatRoundTrip(o.value().roundTripMs));
        showResult(text, true);
        emit tested(true, text);
        if (thenSave)
            keep(profile());
        return;
    }
    const Failure &f = o.failure();
    QString text;
    if (f.kind == Failure::Kind::Auth) {
        // The server's, or (through sentinels) the sentinels' credentials: the message says whose.
        text = QStringLiteral("Credentials refused: %1").arg(f.message);
        if (thenSave)
            text += QStringLiteral("\nNothing was saved.");
    } else {
        text = QStringLiteral("Could not connect: %1").arg(f.message);
        if (thenSave) {
            text += QStringLiteral("\nNothing was saved. Save anyway if the server is only down for now.");
            m_offerSaveAnyway = true;
            m_saveButton->setText(QStringLiteral("Save anyway"));
        }
    }
    showResult(text, false);
    emit tested(false, text);
}

void ConnectionDialog::keep(const ConnectionProfile &form)
{
    using Secret = PasswordVault::Secret;
    using Storage = ConnectionProfile::PasswordStorage;
    // Each password in turn (keychain jobs answer later), then the profile itself.
    auto p = std::make_shared<ConnectionProfile>(form);
    const QString previous = m_originalName;
    const bool renamed = !previous.isEmpty() && previous != p->name;
    struct Step {
        Secret which;
        QString typed;
        Storage stored;                    // before this edit
        bool used;                         // does the profile (still) need it
        Storage ConnectionProfile::*field; // nullptr: forget the old name's entry
    };
    auto steps = std::make_shared<QList<Step>>(QList<Step>{
        {Secret::Server, m_password->text(), m_storedPassword, true, &ConnectionProfile::passwordStorage},
        {Secret::Sentinel, m_sentinelPassword->text(), m_storedSentinelPassword, p->transport == ConnectionProfile::Transport::Sentinel,
         &ConnectionProfile::sentinelPasswordStorage},
    });
    // The chain holds itself only weakly: whoever runs a step (this call, or a pending keychain
    // job's callback) holds it, so it goes once the last step has run.
    auto chain = std::make_shared<std::function<void()>>();
    *chain = [this, p, previous, renamed, steps, weak = std::weak_ptr(chain)] {
        const auto next = weak.lock();
        if (!next)
            return;
        if (steps->isEmpty()) {
            m_store.save(*p, previous);
            emit saved(*p);
            accept();
            return;
        }
        const Step step = steps->takeFirst();
        // The entry under the old name goes once it is copied (below) or if no longer needed.
        if (step.stored != Storage::None && (renamed || !step.used))
            steps->append({step.which, {}, Storage::None, false, nullptr});
        if (!step.field) {
            // The old name's entry: gone, or the user is told it is left in the keychain.
            m_vault.forget(previous, step.which, this, [this, next](const QString &note) {
                if (!note.isEmpty())
                    m_saveNote = m_saveNote.isEmpty() ? note : m_saveNote + QLatin1Char('\n') + note;
                (*next)();
            });
            return;
        }
        if (!step.used) {
            (*p).*step.field = Storage::None;
            (*next)();
            return;
        }
        auto storeAs = [this, p, step, next](const QString &password) {
            setBusy(true);
            m_vault.store(
                p->name, password, this,
                [this, p, step, next](PasswordVault::Kept kept, const QString &note) {
                    setBusy(false);
                    (*p).*step.field = kept == PasswordVault::Kept::InKeychain ? Storage::Keychain : Storage::Ask;
                    if (!note.isEmpty())
                        m_saveNote = note;
                    (*next)();
                },
                step.which);
        };
        if (!step.typed.isEmpty()) {
            storeAs(step.typed);
        } else if (renamed && step.stored != Storage::None) {
            // The keychain (or this session's) entry is named after the profile: move it.
            m_vault.fetch(
                previous, this,
                [this, p, step, storeAs, next](std::optional<QString> password) {
                    if (password) {
                        storeAs(*password);
                        return;
                    }
                    // Not in the keychain (locked, refused) nor typed this session: the
                    // console asks for it when connecting, and says so now.
                    if (step.stored == Storage::Keychain)
                        m_saveNote = QStringLiteral("The saved password could not be read from "
                                                    "the keychain to move it to the new name: "
                                                    "it will be asked for when connecting.");
                    (*p).*step.field = Storage::Ask;
                    (*next)();
                },
                step.which);
        } else {
            (*next)();
        }
    };
    (*chain)();
}

} // namespace ratescope::ui
