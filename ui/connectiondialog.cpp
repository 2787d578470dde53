#include "connectiondialog.h"

#include "connection.h"
#include "displayformat.h"
#include "passwordvault.h"
#include "profilestore.h"

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
    m_transport->addItems(
        {QStringLiteral("TCP"), QStringLiteral("TCP with TLS"), QStringLiteral("Unix socket")});
    m_host = new QLineEdit(this);
    m_port = new QSpinBox(this);
    m_port->setRange(1, 65535);
    m_port->setValue(6379);
    auto *hostRow = new QWidget(this);
    auto *hostLayout = new QHBoxLayout(hostRow);
    hostLayout->setContentsMargins(0, 0, 0, 0);
    hostLayout->addWidget(m_host, 1);
    hostLayout->addWidget(new QLabel(QStringLiteral("Port"), hostRow));
    hostLayout->addWidget(m_port);
    m_socket = new QLineEdit(this);
    m_socket->setPlaceholderText(QStringLiteral("/run/redis/redis-server.sock"));

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
    tls->addRow(QStringLiteral("Client certificate"),
                fileRow(m_cert, QStringLiteral("Client certificate (PEM)")));
    tls->addRow(QStringLiteral("Client key"),
                fileRow(m_key, QStringLiteral("Client private key (PEM)")));
    tls->addRow(QStringLiteral("Server name"), m_serverName);
    tls->addRow(QString(), m_verify);

    m_user = new QLineEdit(this);
    m_user->setPlaceholderText(QStringLiteral("default"));
    m_password = new QLineEdit(this);
    m_password->setEchoMode(QLineEdit::Password);
    m_password->setToolTip(
        QStringLiteral("Kept in the system keychain, never in the settings file"));
    m_db = new QSpinBox(this);
    m_db->setRange(0, 100000);
    m_ns = new QLineEdit(QStringLiteral("ratescope:"), this);
    m_ns->setToolTip(QStringLiteral("Prefix of Ratescope's own keys: policies, overrides, audit"));
    m_separator = new QLineEdit(QStringLiteral(":"), this);
    m_separator->setMaximumWidth(80);
    m_separator->setToolTip(
        QStringLiteral("Groups key names in the keys panel: demo:api:acme sits in demo › api"));
    m_readOnly = new QCheckBox(
        QStringLiteral("Open read-only (every change is refused until you unlock it)"), this);

    auto *form = new QFormLayout;
    form->addRow(QStringLiteral("Name"), m_name);
    form->addRow(QStringLiteral("Connect with"), m_transport);
    form->addRow(QStringLiteral("Host"), hostRow);
    form->addRow(QStringLiteral("Socket"), m_socket);
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
    m_testButton =
        buttons->addButton(QStringLiteral("Test connection"), QDialogButtonBox::ActionRole);
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
    for (QLineEdit *e : {m_name, m_host, m_socket, m_ca, m_cert, m_key, m_serverName, m_user,
                         m_password, m_ns, m_separator})
        connect(e, &QLineEdit::textChanged, this, &ConnectionDialog::validate);
    connect(m_port, &QSpinBox::valueChanged, this, &ConnectionDialog::validate);
    connect(m_db, &QSpinBox::valueChanged, this, &ConnectionDialog::validate);
    connect(m_transport, &QComboBox::currentIndexChanged, this, [this, form, hostRow] {
        const auto t = ConnectionProfile::Transport(m_transport->currentIndex());
        form->setRowVisible(hostRow, t != ConnectionProfile::Transport::Unix);
        form->setRowVisible(m_socket, t == ConnectionProfile::Transport::Unix);
        form->setRowVisible(m_tlsBox, t == ConnectionProfile::Transport::Tls);
        validate();
    });
    m_transport->setCurrentIndex(0);
    form->setRowVisible(m_socket, false);
    form->setRowVisible(m_tlsBox, false);
    setProfile(ConnectionProfile{}, false);
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
    m_name->setText(p.name);
    m_transport->setCurrentIndex(int(p.transport));
    m_host->setText(p.host);
    m_port->setValue(p.port);
    m_socket->setText(p.socketPath);
    m_ca->setText(p.caFile);
    m_cert->setText(p.certFile);
    m_key->setText(p.keyFile);
    m_serverName->setText(p.serverName);
    m_verify->setChecked(p.verifyPeer);
    m_user->setText(p.user);
    m_password->clear();
    switch (m_storedPassword) {
    case ConnectionProfile::PasswordStorage::Keychain:
        m_password->setPlaceholderText(QStringLiteral("unchanged (in the system keychain)"));
        break;
    case ConnectionProfile::PasswordStorage::Ask:
        m_password->setPlaceholderText(
            QStringLiteral("asked for when connecting (no keychain service)"));
        break;
    case ConnectionProfile::PasswordStorage::None:
        m_password->setPlaceholderText(QStringLiteral("none"));
        break;
    }
    m_db->setValue(p.db);
    m_ns->setText(p.ns);
    m_separator->setText(p.separator);
    m_readOnly->setChecked(p.readOnly);
    m_result->clear();
    m_offerSaveAnyway = false;
    m_saveButton->setText(QStringLiteral("Save"));
    setWindowTitle(editing ? QStringLiteral("Edit %1").arg(p.name)
                           : QStringLiteral("New connection profile"));
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
    p.caFile = m_ca->text().trimmed();
    p.certFile = m_cert->text().trimmed();
    p.keyFile = m_key->text().trimmed();
    p.serverName = m_serverName->text().trimmed();
    p.verifyPeer = m_verify->isChecked();
    p.user = m_user->text().trimmed();
    p.db = m_db->value();
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
    auto go = [this, p, thenSave](const QString &password) {
        if (m_client)
            m_client->retire();
        m_client = new RedisClient(p.toOptions(password), this);
        setBusy(true);
        m_result->setStyleSheet(QString());
        m_result->setText(QStringLiteral("Connecting to %1…").arg(p.endpoint()));
        m_client->request(
            this,
            [](Connection &c) {
                c.connect();
                return RedisClient::probe(c);
            },
            [this, thenSave](const Outcome<RedisClient::Status> &o) { finishTest(o, thenSave); });
    };
    const bool useStored = m_password->text().isEmpty() && !m_originalName.isEmpty() &&
                           m_storedPassword != ConnectionProfile::PasswordStorage::None;
    if (useStored)
        m_vault.fetch(m_originalName, this,
                      [go](std::optional<QString> password) { go(password.value_or(QString())); });
    else
        go(m_password->text());
}

void ConnectionDialog::finishTest(const Outcome<RedisClient::Status> &o, bool thenSave)
{
    if (m_client)
        m_client->retire();
    setBusy(false);
    if (o.ok()) {
        const ServerInfo &info = o.value().info;
        QString text =
            info.version.isEmpty()
                ? QStringLiteral("Connected")
                : QStringLiteral("Connected to Redis %1 (%2)").arg(info.version, info.role);
        text += QStringLiteral(": %1 keys, round trip %2.")
                    .arg(formatCount(info.dbSize), formatRoundTrip(o.value().roundTripMs));
        showResult(text, true);
        emit tested(true, text);
        if (thenSave)
            keep(profile());
        return;
    }
    const Failure &f = o.failure();
    QString text;
    if (f.kind == Failure::Kind::Auth) {
        text = QStringLiteral("The server refused these credentials: %1").arg(f.message);
        if (thenSave)
            text += QStringLiteral("\nNothing was saved.");
    } else {
        text = QStringLiteral("Could not connect: %1").arg(f.message);
        if (thenSave) {
            text += QStringLiteral(
                "\nNothing was saved. Save anyway if the server is only down for now.");
            m_offerSaveAnyway = true;
            m_saveButton->setText(QStringLiteral("Save anyway"));
        }
    }
    showResult(text, false);
    emit tested(false, text);
}

void ConnectionDialog::keep(const ConnectionProfile &form)
{
    ConnectionProfile p = form;
    const QString previous = m_originalName;
    const bool renamed = !previous.isEmpty() && previous != p.name;
    auto finish = [this, previous, renamed](ConnectionProfile saved) {
        m_store.save(saved, previous);
        if (renamed && m_storedPassword != ConnectionProfile::PasswordStorage::None)
            m_vault.forget(previous);
        emit this->saved(saved);
        accept();
    };
    auto storePassword = [this, p, finish](const QString &password) mutable {
        setBusy(true);
        m_vault.store(p.name, password, this,
                      [this, p, finish](PasswordVault::Kept kept, const QString &note) mutable {
                          setBusy(false);
                          p.passwordStorage = kept == PasswordVault::Kept::InKeychain
                                                  ? ConnectionProfile::PasswordStorage::Keychain
                                                  : ConnectionProfile::PasswordStorage::Ask;
                          if (!note.isEmpty())
                              m_saveNote = note;
                          finish(p);
                      });
    };
    if (!m_password->text().isEmpty()) {
        storePassword(m_password->text());
    } else if (renamed && m_storedPassword == ConnectionProfile::PasswordStorage::Keychain) {
        // The keychain entry is named after the profile: move it.
        m_vault.fetch(previous, this,
                      [storePassword, finish, p](std::optional<QString> password) mutable {
                          if (password)
                              storePassword(*password);
                          else
                              finish(p);
                      });
    } else {
        finish(p);
    }
}

} // namespace ratescope::ui
