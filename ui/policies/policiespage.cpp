#include "policiespage.h"

#include "editorfields.h"

#include "admin/limitsinforce.h"
#include "base/errors.h"
#include "base/glob.h"
#include "base/keytext.h"
#include "displayformat.h"
#include "fitwidth.h"
#include "formats/recognition.h"
#include "formats/usage.h"
#include "keys/keyscanner.h"
#include "overrideeditor.h"
#include "overridetablemodel.h"
#include "policyeditor.h"
#include "policyqueries.h"
#include "policytablemodel.h"
#include "refusal.h"

#include <QGroupBox>
#include <QHBoxLayout>
#include <QShortcut>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSplitter>
#include <QStyle>
#include <QStackedWidget>
#include <QTableView>
#include <QUrl>
#include <QVBoxLayout>

#include <set>

namespace ratescope::ui {

namespace {

// The editors' stack, as tall as the page it shows: a stacked layout answers height-for-width
// for its tallest page (the policy editor's wrapped labels), so the hint alone scrolled.
class EditorStack : public QStackedWidget {
public:
    bool hasHeightForWidth() const override { return false; }
};

} // namespace

namespace {

QTableView *makeTable(QAbstractItemModel *model)
{
    auto *view = new QTableView;
    view->setModel(model);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setSelectionMode(QAbstractItemView::SingleSelection);
    view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    view->setWordWrap(false);
    view->verticalHeader()->hide();
    view->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed); // uniform row heights
    view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 10);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    view->horizontalHeader()->setStretchLastSection(true);
    view->horizontalHeader()->setHighlightSections(false);
    return view;
}

} // namespace

PoliciesPage::PoliciesPage(QWidget *parent)
    : QWidget(parent)
    , m_requests(new QObject(this))
    , m_policies(new PolicyTableModel(this))
    , m_overrides(new OverrideTableModel(this))
{
    m_message = new QLabel;
    m_message->setTextFormat(Qt::PlainText);
    m_message->setWordWrap(true);
    m_message->hide();
    m_reload = new QPushButton(QStringLiteral("Reload"));
    m_reload->setToolTip(QStringLiteral("Read the policies and overrides again"));
    m_reload->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);

    m_policyView = makeTable(m_policies);
    // The name, then the limit, the keys, the algorithm and whether it is enforced while they fit
    // (each row's tooltip says them all): no sideways scrolling beside an editor at 1024 px.
    const int em = fontMetrics().horizontalAdvance(QLatin1Char('m'));
    m_policyView->horizontalHeader()->setStretchLastSection(false);
    keepColumnsFitted(m_policyView, m_policyView->horizontalHeader(), PolicyTableModel::NameColumn, 7 * em,
                      {{PolicyTableModel::LimitColumn, 11 * em},
                       {PolicyTableModel::MatchColumn, 14 * em},
                       {PolicyTableModel::AlgorithmColumn, 14 * em},
                       {PolicyTableModel::EnforcedColumn, 9 * em}});
    m_newPolicy = new QPushButton(QStringLiteral("New policy…"));
    m_editPolicy = new QPushButton(QStringLiteral("Edit…"));
    auto *policyBox = new QGroupBox(QStringLiteral("Policies"));
    policyBox->setToolTip(QStringLiteral("Which limits apply to which keys: a key's policy is the most specific match"));
    auto *pl = new QVBoxLayout(policyBox);
    pl->addWidget(m_policyView, 1);
    auto *pb = new QHBoxLayout;
    pb->addWidget(m_newPolicy);
    pb->addWidget(m_editPolicy);
    pb->addStretch();
    pl->addLayout(pb);

    m_overrideView = makeTable(m_overrides);
    m_overrideView->horizontalHeader()->setStretchLastSection(false);
    keepColumnsFitted(m_overrideView, m_overrideView->horizontalHeader(), OverrideTableModel::KeyColumn, 10 * em,
                      {{OverrideTableModel::LimitColumn, 15 * em},
                       {OverrideTableModel::ExpiresColumn, 9 * em},
                       {OverrideTableModel::SetByColumn, 10 * em}});
    m_newOverride = new QPushButton(QStringLiteral("Grant a limit…"));
    m_newOverride->setToolTip(QStringLiteral("Grant a key a temporary limit of its own"));
    m_clearOverride = new QPushButton(QStringLiteral("Clear override"));
    // A group box is at least as wide as its title: short titles, the rest in the tooltip.
    auto *overrideBox = new QGroupBox(QStringLiteral("Overrides in force"));
    overrideBox->setToolTip(QStringLiteral("Temporary limits for one key, expiring by themselves"));
    auto *ol = new QVBoxLayout(overrideBox);
    ol->addWidget(m_overrideView, 1);
    auto *ob = new QHBoxLayout;
    ob->addWidget(m_newOverride);
    ob->addWidget(m_clearOverride);
    ob->addStretch();
    ol->addLayout(ob);

    auto *left = new QWidget;
    auto *ll = new QVBoxLayout(left);
    ll->setContentsMargins(0, 0, 0, 0);
    ll->addWidget(policyBox, 3);
    ll->addWidget(overrideBox, 2);

    m_hint = new QLabel(QStringLiteral("Double-click a policy to edit it, or create one.\n"
                                       "Select an override to change or clear it.\n\n"
                                       "From the keys panel, a key's context menu opens its limit or its policy here."));
    static_cast<QLabel *>(m_hint)->setAlignment(Qt::AlignCenter);
    static_cast<QLabel *>(m_hint)->setWordWrap(true);
    m_policyEditor = new PolicyEditor;
    m_overrideEditor = new OverrideEditor;
    m_editors = new EditorStack;
    m_editors->addWidget(m_hint);
    m_editors->addWidget(m_policyEditor);
    m_editors->addWidget(m_overrideEditor);
    for (QWidget *editor : {static_cast<QWidget *>(m_policyEditor), static_cast<QWidget *>(m_overrideEditor)})
        editor->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored); // the hint shows first (showEditor)

    // Save, Grant and Delete ask once more, in place (no modal dialog over the operator's
    // work), with what the change would do: Enter confirms, Escape leaves it.
    m_deleteStrip = new QWidget;
    m_deleteStrip->setObjectName(QStringLiteral("confirmStrip"));
    m_deleteStrip->setAttribute(Qt::WA_StyledBackground);
    m_deleteStrip->setStyleSheet(QStringLiteral("#confirmStrip { background: #fcefc7; border: 1px solid #e0c97a; border-radius: 3px; }"));
    auto *ds = new QHBoxLayout(m_deleteStrip);
    m_deleteText = new QLabel;
    m_deleteText->setTextFormat(Qt::PlainText);
    m_deleteText->setWordWrap(true);
    m_deleteText->setMinimumWidth(160);
    m_confirmDelete = new QPushButton(QStringLiteral("Delete"));
    m_confirmDelete->setAutoDefault(true); // Enter on it confirms
    m_confirmDelete->setToolTip(QStringLiteral("Make the change (Enter)"));
    m_keepPolicy = new QPushButton(QStringLiteral("Cancel"));
    m_keepPolicy->setToolTip(QStringLiteral("Leave it as it is (Escape)"));
    auto *escape = new QShortcut(QKeySequence(Qt::Key_Escape), m_deleteStrip, [this] { stopAsking(); });
    escape->setContext(Qt::WidgetWithChildrenShortcut);
    ds->addWidget(m_deleteText, 1);
    ds->addWidget(m_keepPolicy);
    ds->addWidget(m_confirmDelete);
    m_deleteStrip->hide();

    auto *right = new QWidget;
    auto *rl = new QVBoxLayout(right);
    rl->setContentsMargins(0, 0, 0, 0);
    rl->addWidget(m_editors, 1);

    // The editor scrolls rather than widening the window: beside the keys panel at 1280 px the
    // tab area has about 850 px.
    auto *rightScroll = new QScrollArea;
    rightScroll->setWidget(right);
    rightScroll->setWidgetResizable(true);
    rightScroll->setFrameShape(QFrame::NoFrame);
    rightScroll->setMinimumWidth(16 * fontMetrics().horizontalAdvance(QLatin1Char('m'))); // the hint, wrapped

    auto *splitter = m_splitter = new QSplitter(Qt::Horizontal);
    splitter->addWidget(left);
    splitter->addWidget(rightScroll);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    splitter->setChildrenCollapsible(false);
    splitter->setSizes({3000, 2000}); // 3:2 from the start, scaled to the width there is

    auto *top = new QHBoxLayout;
    top->addWidget(m_message, 1);
    top->addStretch(); // keeps Reload at the right while there is no message
    top->addWidget(m_reload);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(splitter, 1);
    layout->addWidget(m_deleteStrip); // the whole width, never scrolled out of sight

    m_previewTimer.setSingleShot(true);
    m_previewTimer.setInterval(kDebounceMs);
    m_effectTimer.setSingleShot(true);
    m_effectTimer.setInterval(kDebounceMs);
    m_countdown.setInterval(1000);
    connect(&m_previewTimer, &QTimer::timeout, this, &PoliciesPage::runPreview);
    connect(&m_effectTimer, &QTimer::timeout, this, &PoliciesPage::runEffect);
    connect(&m_countdown, &QTimer::timeout, this, [this] {
        m_overrides->setNow(now());
        // An expired override removes itself on the server; the table follows once.
        for (const Override &o : m_overrides->overrides())
            if (o.expiresAt <= now() && !m_frozenNowUs) {
                reload();
                break;
            }
    });
    m_countdown.start();

    connect(m_reload, &QPushButton::clicked, this, &PoliciesPage::reload);
    connect(m_newPolicy, &QPushButton::clicked, this, &PoliciesPage::newPolicy);
    connect(m_editPolicy, &QPushButton::clicked, this, [this] {
        const QModelIndex i = m_policyView->currentIndex();
        if (i.isValid())
            editPolicy(m_policies->policies()[size_t(i.row())].name);
    });
    connect(m_policyView, &QTableView::doubleClicked, this,
            [this](const QModelIndex &i) { editPolicy(m_policies->policies()[size_t(i.row())].name); });
    connect(m_newOverride, &QPushButton::clicked, this, &PoliciesPage::newOverride);
    connect(m_overrideView, &QTableView::clicked, this,
            [this](const QModelIndex &i) { changeKeyLimit(m_overrides->overrides()[size_t(i.row())].key); });
    connect(m_clearOverride, &QPushButton::clicked, this, [this] {
        const QModelIndex i = m_overrideView->currentIndex();
        if (i.isValid())
            clearOverride(m_overrides->overrides()[size_t(i.row())].key);
    });

    connect(m_policyEditor, &PolicyEditor::globChanged, this, &PoliciesPage::schedulePreview);
    connect(m_policyEditor, &PolicyEditor::limitsChanged, this, &PoliciesPage::scheduleEffect);
    connect(m_policyEditor, &PolicyEditor::saveRequested, this, [this] { askSavePolicy(false); });
    connect(m_policyEditor, &PolicyEditor::applyMineRequested, this, [this] { askSavePolicy(true); });
    connect(m_policyEditor, &PolicyEditor::takeTheirsRequested, this, [this] {
        const auto theirs = m_policyEditor->theirs();
        if (theirs)
            m_policyEditor->edit(theirs, *theirs);
        else
            showEditor(m_hint);
        reload();
    });
    connect(m_policyEditor, &PolicyEditor::deleteRequested, this, &PoliciesPage::askDeletePolicy);
    connect(m_policyEditor, &PolicyEditor::closeRequested, this, [this] { showEditor(m_hint); });
    connect(m_policyEditor, &PolicyEditor::previewTrafficRequested, this, [this] {
        std::optional<Policy> stored;
        if (!m_policyEditor->isNew())
            if (const int row = m_policies->rowOf(m_policyEditor->originalName()); row >= 0)
                stored = m_policies->policies()[size_t(row)];
        emit previewRequested(stored, m_policyEditor->proposed());
    });
    connect(m_confirmDelete, &QPushButton::clicked, this, [this] {
        const auto confirmed = std::move(m_confirmed);
        stopAsking();
        if (confirmed)
            confirmed();
    });
    connect(m_keepPolicy, &QPushButton::clicked, this, &PoliciesPage::stopAsking);
    connect(m_overrideEditor, &OverrideEditor::keyChanged, this, [this](const QByteArray &key) {
        // A key typed by hand: what applies to it, read as typing pauses (each keystroke's
        // request replaces the previous one's).
        m_overrideEditor->inForceLabel()->setText(key.isEmpty() ? QString() : QStringLiteral("reading…"));
        refreshInForce(key);
    });
    connect(m_overrideEditor, &OverrideEditor::saveRequested, this, &PoliciesPage::askGrant);
    connect(m_overrideEditor, &OverrideEditor::clearRequested, this, [this] { clearOverride(m_overrideEditor->key()); });
    connect(m_overrideEditor, &OverrideEditor::closeRequested, this, [this] { showEditor(m_hint); });

    updateWritable();
}

PoliciesPage::~PoliciesPage()
{
    if (m_previewCancel)
        m_previewCancel->store(true);
}

void PoliciesPage::setClient(RedisClient *client, const QByteArray &ns)
{
    if (m_client)
        disconnect(m_client, nullptr, this, nullptr);
    delete m_requests; // queued work skipped, late answers dropped
    m_requests = new QObject(this);
    stopPreview();
    m_client = client;
    m_ns = ns;
    m_loaded = false;
    if (client) {
        connect(client, &RedisClient::readOnlyChanged, this, &PoliciesPage::updateWritable);
        connect(client, &RedisClient::stateChanged, this, [this](RedisClient::State s) {
            updateWritable();
            if (s == RedisClient::State::Connected && !m_loaded && isVisible())
                reload();
        });
    }
    updateWritable();
    if (isVisible() || !client)
        reload(); // else when first shown: a console opened on another tab reads its own first
}

void PoliciesPage::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (m_client && !m_loaded)
        reload();
}

void PoliciesPage::setNowUs(std::optional<qint64> nowUs)
{
    m_frozenNowUs = nowUs;
    m_overrides->setNow(now());
}

QDateTime PoliciesPage::now() const
{
    return m_frozenNowUs ? QDateTime::fromMSecsSinceEpoch(*m_frozenNowUs / 1000, Qt::UTC) : QDateTime::currentDateTimeUtc();
}

QString PoliciesPage::actor() const
{
    return m_operator.isEmpty() ? AuditLog::osUser() : m_operator;
}

bool PoliciesPage::writable() const
{
    return m_client && !m_client->isReadOnly() && m_client->state() != RedisClient::State::Failed;
}

QString PoliciesPage::whyNotWritable() const
{
    if (!m_client)
        return QStringLiteral("Not connected");
    if (m_client->isReadOnlyForSession())
        return QStringLiteral("Read-only session: changes are refused before anything is sent (started with --read-only)");
    if (m_client->isReadOnly())
        return QStringLiteral("Read-only session: changes are refused before anything is sent (open the toolbar's lock to edit)");
    if (m_client->state() == RedisClient::State::Failed)
        return QStringLiteral("Not connected: the server refused this connection");
    return {};
}

void PoliciesPage::updateWritable()
{
    const bool w = writable();
    const QString why = whyNotWritable();
    for (QPushButton *b : {m_newPolicy, m_newOverride, m_clearOverride, m_confirmDelete}) {
        b->setEnabled(w);
        b->setToolTip(w ? QString() : why);
    }
    if (w)
        m_clearOverride->setToolTip(QStringLiteral("Remove the selected override now; the policy's limits apply again"));
    m_policyEditor->setWritable(w, why);
    m_overrideEditor->setWritable(w, why);
    if (m_client && m_client->isReadOnly())
        showMessage(QStringLiteral("Read-only session: policies and overrides can be viewed, not changed."), false);
    else if (!m_client)
        showMessage(QStringLiteral("Not connected."), false);
    else if (m_message->text().startsWith(QLatin1String("Read-only session")) ||
             m_message->text().startsWith(QLatin1String("Not connected")))
        showMessage({}, false);
}

void PoliciesPage::showMessage(const QString &text, bool problem)
{
    QPalette pal = palette();
    if (problem)
        pal.setColor(QPalette::WindowText, problemColor(palette()));
    m_message->setPalette(pal);
    m_message->setText(text);
    m_message->setVisible(!text.isEmpty());
}

QString PoliciesPage::explain(const Failure &failure, bool duringChange) const
{
    return explainFailure(failure, duringChange, m_client ? QUrl(m_client->url()).userName() : QString());
}

QString PoliciesPage::explainFailure(const Failure &failure, bool duringChange, const QString &user)
{
    const QString &text = failure.message;
    if (failure.kind == Failure::Kind::Reply && text.startsWith(QLatin1String("NOPERM")))
        return explainRefusal(text, user, QStringLiteral("Ratescope's metadata keys")) + QLatin1Char('.');
    if (failure.kind == Failure::Kind::Connection && duringChange)
        return QStringLiteral("The connection was lost during the change (%1). It may or may not have been made, and it is not retried: "
                              "reload to see what the server holds.")
            .arg(text);
    return text;
}

void PoliciesPage::reload()
{
    if (!m_client) {
        m_policies->setPolicies({});
        m_overrides->setOverrides({});
        return;
    }
    const MetadataNamespace ns(m_ns);
    m_client->request(
        m_requests, [ns](Connection &c) { return readPoliciesAndOverrides(c, ns); },
        [this](const Outcome<std::pair<std::vector<Policy>, std::vector<Override>>> &o) {
            if (!o.ok()) {
                showMessage(QStringLiteral("Could not read the policies: %1").arg(explain(o.failure(), false)), true);
                return;
            }
            const QString selected = m_policyView->currentIndex().isValid()
                                         ? m_policies->policies()[size_t(m_policyView->currentIndex().row())].name
                                         : QString();
            m_policies->setPolicies(o.value().first);
            m_overrides->setOverrides(o.value().second);
            m_overrides->setNow(now());
            if (const int row = m_policies->rowOf(selected); row >= 0)
                m_policyView->selectRow(row);
            if (m_message->text().startsWith(QLatin1String("Could not read")))
                showMessage({}, false);
            if (!m_loaded) {
                m_loaded = true;
                emit loaded();
            }
        });
}

void PoliciesPage::showEditor(QWidget *editor)
{
    stopAsking(); // a question about the editor that goes
    // The stack is as wide as the page shown, not as its widest page: the hint fits where an
    // editor would scroll.
    for (int i = 0; i < m_editors->count(); ++i) {
        QWidget *page = m_editors->widget(i);
        const bool shown = page == editor;
        page->setSizePolicy(shown ? QSizePolicy::Preferred : QSizePolicy::Ignored, shown ? QSizePolicy::Preferred : QSizePolicy::Ignored);
    }
    m_editors->setCurrentWidget(editor);
    m_editors->adjustSize();
    fitEditor();
    if (editor != m_policyEditor) {
        // Nothing previewed for a closed editor: the walk under way stops.
        m_previewTimer.stop();
        stopPreview();
    }
}

// An editor gets the width it asks for, so that its fields and buttons are reached without
// scrolling sideways; the tables give it up (their columns fit what is left). With no editor
// open, the hint's few lines take no more than kHintEm: the tables have the rest.
void PoliciesPage::fitEditor()
{
    constexpr int kHintEm = 20;
    QWidget *editor = m_editors->currentWidget();
    const int total = m_splitter->width();
    if (total <= 0)
        return;
    const QList<int> sizes = m_splitter->sizes();
    const int leftMin = m_splitter->widget(0)->minimumSizeHint().width();
    if (editor == m_hint) {
        const int hint = kHintEm * fontMetrics().horizontalAdvance(QLatin1Char('m'));
        if (sizes.size() == 2 && sizes[1] > hint)
            m_splitter->setSizes({total - hint, hint});
        return;
    }
    const int want = editor->sizeHint().width() + style()->pixelMetric(QStyle::PM_ScrollBarExtent) + 4;
    if (sizes.size() == 2 && sizes[1] < want)
        m_splitter->setSizes({std::max(leftMin, total - want), std::min(want, total - leftMin)});
}

void PoliciesPage::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    QTimer::singleShot(0, this, &PoliciesPage::fitEditor); // once the splitter has its new width
}

void PoliciesPage::newPolicy()
{
    Policy blank;
    blank.spec = {Algorithm::SlidingLog, 0, 0, 1};
    showEditor(m_policyEditor);
    m_policyEditor->edit(std::nullopt, blank);
    m_policyEditor->nameEdit()->setFocus();
}

void PoliciesPage::editPolicy(const QString &name)
{
    const int row = m_policies->rowOf(name);
    if (row < 0)
        return;
    m_policyView->selectRow(row);
    const Policy p = m_policies->policies()[size_t(row)];
    showEditor(m_policyEditor);
    m_policyEditor->edit(p, p);
}

void PoliciesPage::withFreshPolicies(std::function<void(const std::vector<Policy> &)> then)
{
    if (!m_client)
        return;
    const MetadataNamespace ns(m_ns);
    m_client->request(
        m_requests, [ns](Connection &c) { return readPolicies(c, ns); },
        [this, then = std::move(then)](const Outcome<std::vector<Policy>> &o) {
            if (!o.ok()) {
                showMessage(explain(o.failure(), false), true);
                return;
            }
            m_policies->setPolicies(o.value());
            then(o.value());
        });
}

void PoliciesPage::editPolicyOf(const QByteArray &key)
{
    withFreshPolicies([this, key](const std::vector<Policy> &policies) {
        if (const auto p = matchPolicy(policies, key)) {
            editPolicy(p->name);
            return;
        }
        Policy forKey;
        forKey.match = escapeGlob(key);
        forKey.spec = {Algorithm::SlidingLog, 0, 0, 1};
        showEditor(m_policyEditor);
        m_policyEditor->edit(std::nullopt, forKey);
        m_policyEditor->setStatus(QStringLiteral("No policy covers %1: this is a new one for exactly that key.").arg(displayKey(key)), false);
    });
}

void PoliciesPage::editPolicyNamed(const QString &name)
{
    withFreshPolicies([this, name](const std::vector<Policy> &) {
        if (m_policies->rowOf(name) < 0) {
            showMessage(QStringLiteral("There is no policy named '%1'.").arg(escapeControls(name)), true);
            return;
        }
        editPolicy(name);
    });
}

void PoliciesPage::newOverride()
{
    showEditor(m_overrideEditor);
    m_overrideEditor->edit({}, std::nullopt, {});
    m_overrideEditor->keyEdit()->setFocus();
}

void PoliciesPage::changeKeyLimit(const QByteArray &key)
{
    showEditor(m_overrideEditor);
    m_overrideEditor->edit(key, std::nullopt, {});
    m_overrideEditor->inForceLabel()->setText(QStringLiteral("reading…"));
    refreshInForce(key);
}

void PoliciesPage::refreshInForce(const QByteArray &key)
{
    if (!m_client || key.isEmpty())
        return;
    delete m_inForceOwner; // an older key's answer is no longer wanted
    m_inForceOwner = new QObject(this);
    const MetadataNamespace ns(m_ns);
    m_client->request(
        m_inForceOwner,
        [ns, key](Connection &c) { return readLimitsInForceAt(c, ns, key); },
        [this, key](const Outcome<EffectiveLimits> &o) {
            if (!o.ok()) {
                m_overrideEditor->setStatus(explain(o.failure(), false), true);
                return;
            }
            const EffectiveLimits &e = o.value();
            QString from;
            if (e.override && e.spec)
                from = QStringLiteral("an override by %1, %2 left")
                           .arg(e.override->setBy, OverrideTableModel::countdown(now().msecsTo(e.override->expiresAt)));
            else if (e.policy)
                from = QStringLiteral("policy “%1”").arg(e.policy->name);
            if (m_overrideEditor->key() == key)
                m_overrideEditor->setInForce(e.spec, from);
        });
}

// ---- preview and effect --------------------------------------------------------------------

void PoliciesPage::stopPreview()
{
    // Deleting the owner skips its queued work and drops its answer; the flag stops a walk
    // already under way between two SCAN pages.
    if (m_previewCancel)
        m_previewCancel->store(true);
    delete m_previewOwner;
    m_previewOwner = nullptr;
    m_previewRunning = false;
    delete m_effectOwner;
    m_effectOwner = nullptr;
    m_effectRunning = false;
    m_effectTimer.stop();
}

void PoliciesPage::schedulePreview()
{
    // The walk for the previous pattern stops at once; the next starts when typing pauses.
    stopPreview();
    m_previewTimer.start();
}

void PoliciesPage::runPreview()
{
    const QByteArray glob = m_policyEditor->matchEdit()->text().toUtf8();
    m_previewKeys.clear();
    m_previewMatched = 0;
    m_policyEditor->setEffect({});
    if (glob.isEmpty() || !globSyntaxProblem(glob).isEmpty()) {
        m_policyEditor->setPreview(glob.isEmpty() ? QStringLiteral("Type a pattern to see the keys it matches.")
                                                  : QStringLiteral("Correct the pattern to see the keys it matches."),
                                   {});
        return;
    }
    if (!m_client) {
        m_policyEditor->setPreview(QStringLiteral("Not connected."), {});
        return;
    }
    m_policyEditor->setPreview(QStringLiteral("Reading the keys this pattern matches…"), {});
    m_previewOwner = new QObject(this);
    m_previewCancel = std::make_shared<std::atomic<bool>>(false);
    m_previewRunning = true;
    PolicyPreview start;
    start.glob = glob;
    previewStep(std::move(start));
}

void PoliciesPage::previewStep(PolicyPreview soFar)
{
    // A few SCAN pages per request: other views' reads get the worker in between.
    constexpr int kPagesPerStep = 10;
    m_client->request(
        m_previewOwner,
        [r = std::move(soFar), ns = MetadataNamespace(m_ns), cancel = m_previewCancel, budget = m_scanBudget](Connection &c) {
            return previewPolicyStep(c, ns, r, budget, kPagesPerStep, kPreviewKeys, *cancel);
        },
        [this](const Outcome<PolicyPreview> &o) {
            if (!o.ok()) {
                m_previewRunning = false;
                m_policyEditor->setPreview(QStringLiteral("Could not read the keys: %1").arg(explain(o.failure(), false)), {});
                return;
            }
            PolicyPreview r = o.value();
            if (!r.complete && !r.stopped) {
                m_policyEditor->setPreview(QStringLiteral("Reading… %1 so far; scanned %2 of about %3 keys.")
                                               .arg(formatKeys(r.matched), formatCount(r.scanned), formatCount(r.total)),
                                           {});
                previewStep(std::move(r));
                return;
            }
            m_previewRunning = false;
            std::sort(r.keys.begin(), r.keys.end());
            showPreview(r);
        });
}

void PoliciesPage::showPreview(const PolicyPreview &r)
{
    m_previewGlob = r.glob;
    m_previewKeys = r.keys;
    m_previewMatched = r.matched;
    m_previewComplete = r.complete;
    QString summary;
    if (!r.complete)
        summary = QStringLiteral("At least %1 match; scanned %2 of about %3 keys.")
                      .arg(formatKeys(r.matched), formatCount(r.scanned), formatCount(r.total));
    else if (r.matched == 0)
        summary = QStringLiteral("No key matches this pattern now.");
    else
        summary = QStringLiteral("%1 %2.").arg(formatKeys(r.matched), r.matched == 1 ? QStringLiteral("matches") : QStringLiteral("match"));
    if (r.matched > qint64(r.keys.size()))
        summary += QStringLiteral(" The first %1 are listed.").arg(r.keys.size());
    if (r.excluded > 0)
        summary += QStringLiteral(" (%1 of Ratescope's own under %2 left out.)").arg(formatKeys(r.excluded), displayKey(m_ns));
    QStringList shown;
    shown.reserve(qsizetype(r.keys.size()));
    for (const QByteArray &k : r.keys)
        shown << displayKey(k);
    m_policyEditor->setPreview(summary, shown);
    runEffect();
}

void PoliciesPage::scheduleEffect()
{
    if (!m_previewRunning && !m_previewTimer.isActive())
        m_effectTimer.start();
}

void PoliciesPage::runEffect()
{
    const auto spec = m_policyEditor->proposedSpec();
    if (!spec || m_previewKeys.empty() || !m_client) {
        m_policyEditor->setEffect({});
        return;
    }
    // The policies as they would be after saving: this one replaced by the proposal.
    Policy proposal = m_policyEditor->proposed();
    if (proposal.name.isEmpty())
        proposal.name = QStringLiteral("\x01(new policy)"); // sorts first, as an unnamed proposal would tie-break
    std::vector<Policy> policies;
    for (const Policy &p : m_policies->policies())
        if (p.name != proposal.name && p.name != m_policyEditor->originalName())
            policies.push_back(p);
    policies.push_back(proposal);

    delete m_effectOwner; // a previous proposal's answer is no longer wanted
    m_effectOwner = new QObject(this);
    m_effectTimer.stop();
    m_effectRunning = true;
    m_policyEditor->setEffect(QStringLiteral("Reading how full these keys are…"));
    const LimitSpec proposed = *spec;
    m_client->request(
        m_effectOwner,
        [keys = m_previewKeys, policies, proposed, name = proposal.name, nowFrozen = m_frozenNowUs,
         ns = MetadataNamespace(m_ns)](Connection &c) { return readPolicyEffect(c, ns, keys, policies, name, proposed, nowFrozen); },
        [this, proposed](const Outcome<PolicyEffect> &o) {
            m_effectRunning = false;
            if (!o.ok()) {
                m_policyEditor->setEffect(QStringLiteral("Could not read these keys: %1").arg(explain(o.failure(), false)));
                return;
            }
            const PolicyEffect &r = o.value();
            QString text =
                QStringLiteral("%1 would be at %2 limit under %3")
                    .arg(formatKeys(r.atLimit), r.atLimit == 1 ? QStringLiteral("its") : QStringLiteral("their"), formatLimit(proposed));
            if (r.read != r.atLimit || r.read == 0)
                text += QStringLiteral(" (of %1 read)").arg(formatCount(r.read));
            if (!m_previewComplete || m_previewMatched > qint64(m_previewKeys.size()))
                text += QStringLiteral(", among the first %1 listed").arg(m_previewKeys.size());
            QStringList notes;
            if (r.otherPolicy)
                notes << QStringLiteral("%1 governed by a more specific policy").arg(formatCount(r.otherPolicy));
            if (r.overridden)
                notes << QStringLiteral("%1 keeping an override").arg(formatCount(r.overridden));
            if (r.notLimiters)
                notes << QStringLiteral("%1 not limiters").arg(formatCount(r.notLimiters));
            if (r.unreadable)
                notes << QStringLiteral("%1 unreadable").arg(formatCount(r.unreadable));
            if (!notes.isEmpty())
                text += QStringLiteral("; %1").arg(notes.join(QStringLiteral(", ")));
            m_policyEditor->setEffect(text + QLatin1Char('.'));
            if (isAsking() && m_askText)
                m_deleteText->setText(m_askText()); // the effect the question waited for
        });
}

// ---- changes ---------------------------------------------------------------------------------

void PoliciesPage::savePolicy(bool onTopOfTheirs)
{
    if (!policyReadyToSend())
        return;
    const Policy p = m_policyEditor->proposed();
    qint64 basedOn = m_policyEditor->basedOnVersion();
    if (onTopOfTheirs) {
        const auto theirs = m_policyEditor->theirs();
        basedOn = theirs ? theirs->version : 0;
    }
    m_busy = true;
    m_policyEditor->setStatus(QStringLiteral("Saving…"), false);
    const MetadataNamespace ns(m_ns);
    m_client->request(
        m_requests,
        [ns, p, basedOn, actor = actor(), op = m_operator](Connection &c) { return storePolicy(c, ns, p, basedOn, actor, op); },
        [this, basedOn](const Outcome<PolicyChange> &o) {
            m_busy = false;
            if (!o.ok()) {
                m_policyEditor->setStatus(explain(o.failure(), true), true);
                return;
            }
            const PolicyChange &r = o.value();
            if (!r.stored) {
                // Who and when in the operator's own time; the core's words when it was deleted.
                const QString why =
                    r.theirs
                        ? QStringLiteral("Not saved: changed by %1 at %2 (now version %3; your edit was based on version %4). "
                                         "Your edit is kept: apply it on top of theirs, or take theirs.")
                              .arg(r.theirs->updatedBy, r.theirs->updatedAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")))
                              .arg(r.theirs->version)
                              .arg(basedOn)
                        : QStringLiteral("Not saved: %1").arg(r.conflict);
                m_policyEditor->showConflict(why, r.theirs);
                m_policyEditor->setStatus({}, false);
                reload();
                return;
            }
            m_policyEditor->edit(r.stored, *r.stored);
            m_policyEditor->setStatus(basedOn == 0 ? QStringLiteral("Created: version %1.").arg(r.stored->version)
                                                   : QStringLiteral("Saved: version %1.").arg(r.stored->version),
                                      false);
            reload();
            emit changed();
        });
}

QString PoliciesPage::confirmText() const
{
    return isAsking() ? m_deleteText->text() : QString();
}

bool PoliciesPage::isAsking() const
{
    return !m_deleteStrip->isHidden();
}

void PoliciesPage::ask(std::function<QString()> textNow, const QString &confirmWords, std::function<void()> confirmed)
{
    m_askText = std::move(textNow);
    m_confirmed = std::move(confirmed);
    m_deleteText->setText(m_askText());
    m_confirmDelete->setText(confirmWords);
    m_deleteStrip->show();
    m_confirmDelete->setFocus(Qt::OtherFocusReason);
}

void PoliciesPage::stopAsking()
{
    m_askText = {};
    m_confirmed = {};
    m_deleteStrip->hide();
}

QString PoliciesPage::effectWords() const
{
    if (previewPending() || effectPending())
        return QStringLiteral("How full its keys are is still being read…");
    const QString effect = m_policyEditor->effectLabel()->text();
    if (!effect.isEmpty())
        return effect;
    return m_previewKeys.empty() ? QStringLiteral("No key matches its pattern now.") : QString();
}

bool PoliciesPage::policyReadyToSend()
{
    if (!writable()) {
        m_policyEditor->setStatus(whyNotWritable(), true); // nothing is sent
        return false;
    }
    if (m_busy)
        return false;
    if (!m_policyEditor->problems().empty()) {
        m_policyEditor->setStatus(QStringLiteral("Correct the fields marked first."), true);
        return false;
    }
    return true;
}

void PoliciesPage::askSavePolicy(bool onTopOfTheirs)
{
    if (!policyReadyToSend())
        return;
    ask(
        [this] {
            const Policy p = m_policyEditor->proposed();
            const QString what = m_policyEditor->isNew()
                                     ? QStringLiteral("Create policy “%1”: %2 %3 on %4?")
                                     : QStringLiteral("Save policy “%1” as %2 %3 on %4?");
            QString text = what.arg(p.name, formatLimit(p.spec), algorithmName(p.spec.algorithm), displayKey(p.match));
            const QString effect = effectWords();
            return effect.isEmpty() ? text : text + QLatin1Char(' ') + effect;
        },
        m_policyEditor->isNew() ? QStringLiteral("Create") : QStringLiteral("Save"), [this, onTopOfTheirs] { savePolicy(onTopOfTheirs); });
}

void PoliciesPage::askGrant()
{
    if (!writable()) {
        m_overrideEditor->setStatus(whyNotWritable(), true);
        return;
    }
    const auto o = m_overrideEditor->proposed();
    const auto forUs = m_overrideEditor->forUs();
    if (m_busy || !o || !forUs)
        return;
    const QDateTime until = now().addMSecs(*forUs / 1000).toLocalTime();
    const QString limit = o->windowUs > 0 ? QStringLiteral("%1 per %2").arg(formatCount(o->limit), formatSpan(o->windowUs))
                                          : QStringLiteral("a limit of %1").arg(formatCount(o->limit));
    QString text = QStringLiteral("Grant %1 %2 until %3 (for %4)?")
                       .arg(displayKey(o->key), limit, until.toString(QStringLiteral("yyyy-MM-dd HH:mm")), formatSpan(*forUs));
    const QString inForce = m_overrideEditor->inForceLabel()->text();
    if (!inForce.isEmpty() && inForce != QLatin1String("reading…"))
        text += QStringLiteral(" In force now: %1; it applies again when the override expires.").arg(inForce);
    ask([text] { return text; }, QStringLiteral("Grant"), [this] { saveOverride(); });
}

void PoliciesPage::askDeletePolicy()
{
    if (!writable() || m_policyEditor->isNew())
        return;
    ask(
        [this] {
            QString text = QStringLiteral("Delete policy “%1” (version %2)? The keys it covers fall back to the next matching policy, or to none.")
                               .arg(m_policyEditor->originalName())
                               .arg(m_policyEditor->basedOnVersion());
            if (!previewPending() && !m_previewKeys.empty())
                text += QStringLiteral(" Its pattern matches %1%2 now.")
                            .arg(m_previewComplete ? QString() : QStringLiteral("at least "), formatKeys(m_previewMatched));
            return text;
        },
        QStringLiteral("Delete"), [this] { deletePolicy(); });
}

void PoliciesPage::deletePolicy()
{
    m_deleteStrip->hide();
    if (!writable() || m_busy || m_policyEditor->isNew())
        return;
    const QString name = m_policyEditor->originalName();
    const qint64 basedOn = m_policyEditor->basedOnVersion();
    m_busy = true;
    const MetadataNamespace ns(m_ns);
    m_client->request(
        m_requests,
        [ns, name, basedOn, actor = actor(), op = m_operator](Connection &c) { return removePolicy(c, ns, name, basedOn, actor, op); },
        [this, name](const Outcome<PolicyChange> &o) {
            m_busy = false;
            if (!o.ok()) {
                m_policyEditor->setStatus(explain(o.failure(), true), true);
                return;
            }
            if (!o.value().stored) {
                m_policyEditor->showConflict(QStringLiteral("Not deleted: %1").arg(o.value().conflict), o.value().theirs);
                reload();
                return;
            }
            showEditor(m_hint);
            showMessage(QStringLiteral("Deleted policy “%1”.").arg(name), false);
            reload();
            emit changed();
        });
}

void PoliciesPage::saveOverride()
{
    if (!writable()) {
        m_overrideEditor->setStatus(whyNotWritable(), true);
        return;
    }
    const auto o = m_overrideEditor->proposed();
    const auto forUs = m_overrideEditor->forUs();
    if (m_busy || !o || !forUs)
        return;
    m_busy = true;
    m_overrideEditor->setStatus(QStringLiteral("Granting…"), false);
    const MetadataNamespace ns(m_ns);
    m_client->request(
        m_requests,
        [ns, o = *o, forUs = *forUs, actor = actor(), op = m_operator](Connection &c) { return storeOverride(c, ns, o, forUs, actor, op); },
        [this](const Outcome<std::optional<Override>> &r) {
            m_busy = false;
            if (!r.ok()) {
                m_overrideEditor->setStatus(explain(r.failure(), true), true);
                return;
            }
            if (r.value())
                m_overrideEditor->setStatus(QStringLiteral("Granted %1 until %2.")
                                                .arg(formatCount(r.value()->limit),
                                                     r.value()->expiresAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))),
                                            false);
            reload();
            emit changed();
        });
}

void PoliciesPage::clearOverride(const QByteArray &key)
{
    if (!writable()) {
        showMessage(whyNotWritable(), true);
        return;
    }
    if (m_busy || key.isEmpty())
        return;
    m_busy = true;
    const MetadataNamespace ns(m_ns);
    m_client->request(
        m_requests,
        [ns, key, actor = actor(), op = m_operator](Connection &c) { return removeOverride(c, ns, key, actor, op); },
        [this, key](const Outcome<bool> &r) {
            m_busy = false;
            if (!r.ok()) {
                showMessage(explain(r.failure(), true), true);
                return;
            }
            showMessage(r.value() ? QStringLiteral("Cleared the override of %1: its policy's limits apply again.").arg(displayKey(key))
                                  : QStringLiteral("%1 had no override (it may have expired).").arg(displayKey(key)),
                        false);
            if (m_editors->currentWidget() == m_overrideEditor && m_overrideEditor->key() == key)
                showEditor(m_hint);
            reload();
            emit changed();
        });
}

} // namespace ratescope::ui
