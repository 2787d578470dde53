#include "whatifpage.h"

#include "whatifchart.h"
#include "whatifkeymodel.h"

#include "chartpalette.h"
#include "admin/limitsinforce.h"
#include "limitqueries.h"
#include "limittext.h"
#include "displayformat.h"
#include "fitwidth.h"
#include "base/duration.h"
#include "base/errors.h"
#include "base/glob.h"
#include "base/keytext.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QFileDialog>
#include <QFrame>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace ratescope::ui {

namespace {

const QColor kProblem(0xd3, 0x2f, 0x2f); // reads on light and dark backgrounds

QString problemStyle()
{
    return QStringLiteral("QLabel { color: %1; }").arg(kProblem.name());
}

QLabel *textLabel(const QString &text = {}, QWidget *parent = nullptr)
{
    auto *l = new QLabel(text, parent);
    l->setTextFormat(Qt::PlainText); // keys and globs come from the server
    l->setWordWrap(true);
    return l;
}

// A small square in a spec's chart colour, so its row, summary line and lines go together.
QWidget *swatch(int index, QWidget *parent)
{
    auto *w = new QFrame(parent);
    w->setFixedSize(12, 12);
    w->setStyleSheet(QStringLiteral("QFrame { background: %1; border-radius: 2px; }").arg(seriesColor(index).name()));
    return w;
}

// A, B, C...: the views that open this one name their specs ("now", "proposed").
QString defaultName(int index)
{
    return QString(QChar(u'A' + index % 26));
}

} // namespace

WhatIfPage::WhatIfPage(QWidget *parent)
    : QWidget(parent)
    , m_requests(new QObject(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 8, 8, 8);
    layout->setSpacing(6);
    layout->addWidget(buildTraceBox());
    layout->addWidget(buildSpecBox());

    m_runButton = new QPushButton(QStringLiteral("Run"), this);
    m_runButton->setObjectName(QStringLiteral("run"));
    m_runButton->setDefault(true);
    m_runButton->setToolTip(QStringLiteral("Replay the trace against every spec in a private sandbox server (nothing is written "
                                           "to the inspected server)"));
    m_cancelButton = new QPushButton(QStringLiteral("Cancel"), this);
    m_cancelButton->setObjectName(QStringLiteral("cancel"));
    m_cancelButton->setEnabled(false);
    m_why = textLabel({}, this);
    m_why->setObjectName(QStringLiteral("why"));
    m_why->setForegroundRole(QPalette::PlaceholderText);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setTextVisible(false);
    m_progress->setMaximumHeight(8);
    m_progress->setMaximumWidth(160);
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_runButton);
    buttons->addWidget(m_cancelButton);
    buttons->addWidget(m_progress);
    buttons->addWidget(m_why, 1);
    layout->addLayout(buttons);

    m_status = textLabel(QStringLiteral("Choose a trace and the limits to compare, then press Run."), this);
    m_status->setObjectName(QStringLiteral("status"));
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_status);
    layout->addWidget(buildResults(), 1);

    connect(m_runButton, &QPushButton::clicked, this, &WhatIfPage::run);
    connect(m_cancelButton, &QPushButton::clicked, this, &WhatIfPage::cancel);
    connect(&m_runLater, &QTimer::timeout, this, [this] {
        run();
        if (!m_run) { // could not start: say why, and let whoever waits know
            setStatus(whyNotRunnable(), true);
            emit finished();
        }
    });
    // Quitting the console ends a run rather than leave its sandbox working until exit.
    if (QCoreApplication *app = QCoreApplication::instance())
        connect(app, &QCoreApplication::aboutToQuit, this, [this] {
            if (m_run) {
                m_run->cancel();
                m_run->wait(WhatIfRun::kCloseWaitMs);
            }
        });

    setSpecs({{defaultName(0), {Algorithm::SlidingLog, 0, 0, 1}}, {defaultName(1), {Algorithm::SlidingLog, 0, 0, 1}}});
    sourceChanged();
}

WhatIfPage::~WhatIfPage()
{
    delete m_run; // cancels and waits, boundedly
    m_run = nullptr;
}

// ---- the form ------------------------------------------------------------------------------

QWidget *WhatIfPage::buildTraceBox()
{
    auto *box = new QFrame(this);
    box->setFrameShape(QFrame::StyledPanel);
    auto *v = new QVBoxLayout(box);
    v->setContentsMargins(8, 6, 8, 6);
    v->setSpacing(3);
    auto *row = new QHBoxLayout;
    auto *title = new QLabel(QStringLiteral("Trace"), box);
    QFont bold = title->font();
    bold.setBold(true);
    title->setFont(bold);
    m_source = new QComboBox(box);
    m_source->setObjectName(QStringLiteral("source"));
    m_source->addItem(QStringLiteral("Logs of the keys matching"));
    m_source->addItem(QStringLiteral("A trace file (CSV)"));
    m_source->setToolTip(QStringLiteral("Recent traffic as the keys' sorted-set logs record it on the server, or a file of "
                                        "requests (time,key[,cost] per line)"));

    m_logFields = new QWidget(box);
    auto *lf = new QHBoxLayout(m_logFields);
    lf->setContentsMargins(0, 0, 0, 0);
    m_glob = new QLineEdit(m_logFields);
    m_glob->setObjectName(QStringLiteral("glob"));
    m_glob->setPlaceholderText(QStringLiteral("key glob, e.g. api:*"));
    m_scoreUnit = new QComboBox(m_logFields);
    m_scoreUnit->setObjectName(QStringLiteral("scoreUnit"));
    for (ScoreUnit u : {ScoreUnit::Auto, ScoreUnit::Seconds, ScoreUnit::Milliseconds, ScoreUnit::Microseconds})
        m_scoreUnit->addItem(QStringLiteral("scores: %1").arg(scoreUnitName(u)), int(u));
    m_scoreUnit->setToolTip(QStringLiteral("How the logs' scores count time (auto: recognised per key)"));
    m_wholeGroup = new QPushButton(m_logFields);
    m_wholeGroup->setObjectName(QStringLiteral("wholeGroup"));
    m_wholeGroup->hide();
    lf->addWidget(m_glob, 1);
    lf->addWidget(m_scoreUnit);
    lf->addWidget(m_wholeGroup);

    m_fileFields = new QWidget(box);
    auto *ff = new QHBoxLayout(m_fileFields);
    ff->setContentsMargins(0, 0, 0, 0);
    m_file = new QLineEdit(m_fileFields);
    m_file->setObjectName(QStringLiteral("file"));
    m_file->setPlaceholderText(QStringLiteral("trace.csv: time,key[,cost] per line"));
    m_browse = new QPushButton(QStringLiteral("Browse…"), m_fileFields);
    m_timeUnit = new QComboBox(m_fileFields);
    m_timeUnit->setObjectName(QStringLiteral("timeUnit"));
    for (const auto &[label, unit] : {std::pair{"times: auto", TraceTimeUnit::Auto},
                                      {"times: µs", TraceTimeUnit::Microseconds},
                                      {"times: ms", TraceTimeUnit::Milliseconds},
                                      {"times: ISO 8601", TraceTimeUnit::Iso8601}})
        m_timeUnit->addItem(QString::fromUtf8(label), int(unit));
    ff->addWidget(m_file, 1);
    ff->addWidget(m_browse);
    ff->addWidget(m_timeUnit);

    row->addWidget(title);
    row->addWidget(m_source);
    row->addWidget(m_logFields, 1);
    row->addWidget(m_fileFields, 1);
    v->addLayout(row);
    m_traceNote = textLabel({}, box);
    m_traceNote->setObjectName(QStringLiteral("traceNote"));
    m_traceNote->setForegroundRole(QPalette::PlaceholderText);
    v->addWidget(m_traceNote);

    connect(m_source, &QComboBox::currentIndexChanged, this, &WhatIfPage::sourceChanged);
    connect(m_glob, &QLineEdit::textChanged, this, &WhatIfPage::updateRunnable);
    connect(m_file, &QLineEdit::textChanged, this, &WhatIfPage::updateRunnable);
    connect(m_browse, &QPushButton::clicked, this, &WhatIfPage::chooseFile);
    connect(m_wholeGroup, &QPushButton::clicked, this, [this] { m_glob->setText(QString::fromUtf8(m_groupGlob)); });
    return box;
}

QWidget *WhatIfPage::buildSpecBox()
{
    auto *box = new QFrame(this);
    box->setFrameShape(QFrame::StyledPanel);
    auto *v = new QVBoxLayout(box);
    v->setContentsMargins(8, 6, 8, 6);
    v->setSpacing(3);
    auto *head = new QHBoxLayout;
    auto *title = new QLabel(QStringLiteral("Limits to compare"), box);
    QFont bold = title->font();
    bold.setBold(true);
    title->setFont(bold);
    m_addSpec = new QPushButton(QStringLiteral("Add a spec"), box);
    m_addSpec->setObjectName(QStringLiteral("addSpec"));
    head->addWidget(title);
    head->addStretch();
    head->addWidget(m_addSpec);
    v->addLayout(head);
    m_specGrid = new QGridLayout;
    m_specGrid->setHorizontalSpacing(6);
    m_specGrid->setVerticalSpacing(2);
    v->addLayout(m_specGrid);
    connect(m_addSpec, &QPushButton::clicked, this, [this] {
        QStringList taken;
        for (const SpecRow &r : m_rows)
            taken << r.name->text().trimmed();
        int free = 0;
        while (taken.contains(defaultName(free)))
            ++free;
        Spec s{defaultName(free), {Algorithm::SlidingLog, 0, 0, 1}};
        if (!m_rows.empty()) { // a copy of the last to change
            const std::vector<Spec> now = specs();
            if (now.size() == m_rows.size())
                s.spec = now.back().spec;
        }
        addSpecRow(s);
        m_rows.back().limit->setFocus();
        relayoutSpecs();
    });
    return box;
}

void WhatIfPage::addSpecRow(const Spec &spec)
{
    QWidget *owner = m_specGrid->parentWidget();
    SpecRow row;
    const int index = int(m_rows.size());
    row.swatch = swatch(index, owner);
    row.name = new QLineEdit(spec.name, owner);
    row.name->setPlaceholderText(QStringLiteral("name"));
    row.name->setMaximumWidth(110);
    row.algorithm = new QComboBox(owner);
    for (Algorithm a : kAllAlgorithms)
        row.algorithm->addItem(algorithmName(a), int(a));
    row.algorithm->setCurrentIndex(row.algorithm->findData(int(spec.spec.algorithm)));
    row.limit = new QLineEdit(spec.spec.limit > 0 ? QString::number(spec.spec.limit) : QString(), owner);
    row.limit->setPlaceholderText(QStringLiteral("limit"));
    row.window = new QLineEdit(spec.spec.windowUs > 0 ? formatDurationUs(spec.spec.windowUs) : QString(), owner);
    row.window->setObjectName(QStringLiteral("window"));
    row.window->setPlaceholderText(QStringLiteral("10s, 1m"));
    row.cost = new QLineEdit(QString::number(std::max<qint64>(1, spec.spec.cost)), owner);
    row.cost->setPlaceholderText(QStringLiteral("cost"));
    row.cost->setMaximumWidth(60);
    row.cost->setToolTip(QStringLiteral("The cost of a request whose trace line gives none"));
    row.per = new QLabel(QStringLiteral("per"), owner);
    row.remove = new QPushButton(QStringLiteral("Remove"), owner);
    row.problem = textLabel({}, owner);
    row.problem->setStyleSheet(problemStyle());
    row.problem->hide();
    for (QLineEdit *e : {row.name, row.limit, row.window, row.cost})
        connect(e, &QLineEdit::textChanged, this, &WhatIfPage::updateRunnable);
    connect(row.algorithm, &QComboBox::currentIndexChanged, this, &WhatIfPage::updateRunnable);
    QPushButton *remove = row.remove;
    connect(remove, &QPushButton::clicked, this, [this, remove] {
        for (size_t i = 0; i < m_rows.size(); ++i)
            if (m_rows[i].remove == remove) {
                removeSpecRow(int(i));
                return;
            }
    });
    m_rows.push_back(row);
}

void WhatIfPage::removeSpecRow(int index)
{
    if (index < 0 || size_t(index) >= m_rows.size())
        return;
    const SpecRow row = m_rows[size_t(index)];
    m_rows.erase(m_rows.begin() + index);
    for (QWidget *w : std::initializer_list<QWidget *>{row.swatch, row.name, row.algorithm, row.limit, row.per, row.window, row.cost,
                                                       row.remove, row.problem}) {
        m_specGrid->removeWidget(w);
        w->hide();
        w->deleteLater();
    }
    relayoutSpecs();
}

void WhatIfPage::relayoutSpecs()
{
    // Rows in order, each spec's swatch in its position's colour (the chart's colours follow
    // the order of the specs).
    for (size_t i = 0; i < m_rows.size(); ++i) {
        SpecRow &r = m_rows[i];
        for (QWidget *w :
             std::initializer_list<QWidget *>{r.swatch, r.name, r.algorithm, r.limit, r.per, r.window, r.cost, r.remove, r.problem})
            m_specGrid->removeWidget(w);
        r.swatch->setStyleSheet(QStringLiteral("QFrame { background: %1; border-radius: 2px; }").arg(seriesColor(int(i)).name()));
        const int line = int(i) * 2;
        m_specGrid->addWidget(r.swatch, line, 0, Qt::AlignVCenter);
        m_specGrid->addWidget(r.name, line, 1);
        m_specGrid->addWidget(r.algorithm, line, 2);
        m_specGrid->addWidget(r.limit, line, 3);
        m_specGrid->addWidget(r.per, line, 4);
        m_specGrid->addWidget(r.window, line, 5);
        m_specGrid->addWidget(r.cost, line, 6);
        m_specGrid->addWidget(r.remove, line, 7);
        m_specGrid->addWidget(r.problem, line + 1, 1, 1, 7);
        r.remove->setEnabled(m_rows.size() > 1);
    }
    m_specGrid->setColumnStretch(3, 1);
    m_specGrid->setColumnStretch(5, 1);
    m_addSpec->setEnabled(int(m_rows.size()) < kMaxSpecs);
    m_addSpec->setToolTip(int(m_rows.size()) < kMaxSpecs ? QStringLiteral("Compare one more set of limits")
                                                         : QStringLiteral("At most %1 specs at a time").arg(kMaxSpecs));
    updateRunnable();
}

void WhatIfPage::setSpecs(const std::vector<Spec> &specs)
{
    while (!m_rows.empty())
        removeSpecRow(int(m_rows.size()) - 1);
    for (const Spec &s : specs)
        if (int(m_rows.size()) < kMaxSpecs)
            addSpecRow(s);
    relayoutSpecs();
}

std::vector<WhatIfPage::Spec> WhatIfPage::specs(QString *problem) const
{
    std::vector<Spec> out;
    QStringList problems;
    QStringList names;
    for (size_t i = 0; i < m_rows.size(); ++i) {
        const SpecRow &r = m_rows[i];
        Spec s;
        s.name = r.name->text().trimmed();
        if (s.name.isEmpty())
            s.name = defaultName(int(i));
        QString why;
        if (names.contains(s.name))
            why = QStringLiteral("Another spec is named %1: give each its own name.").arg(s.name);
        names << s.name;
        s.spec.algorithm = Algorithm(r.algorithm->currentData().toInt());
        const FieldValue limit = parseLimitField(r.limit->text());
        const FieldValue window = parseWindowField(r.window->text());
        const FieldValue cost = parseCostField(r.cost->text());
        s.spec.limit = limit.value.value_or(0);
        s.spec.windowUs = window.value.value_or(0);
        s.spec.cost = cost.value.value_or(0);
        for (const FieldValue *f : {&limit, &window, &cost})
            if (why.isEmpty() && !f->value)
                why = f->problem;
        if (why.isEmpty()) {
            try {
                s.spec.validate();
            } catch (const Error &e) {
                why = e.message();
            }
        }
        // A row not filled in yet is no mistake to point at: Run's note says what is missing.
        const bool untouched = r.limit->text().trimmed().isEmpty() && r.window->text().trimmed().isEmpty();
        r.problem->setText(why);
        r.problem->setVisible(!why.isEmpty() && !untouched);
        if (!why.isEmpty())
            problems << QStringLiteral("%1: %2").arg(s.name, why);
        out.push_back(s);
    }
    if (problem)
        *problem = problems.join(QLatin1Char(' '));
    if (!problems.isEmpty())
        return {};
    return out;
}

void WhatIfPage::setTrace(const WhatIfTrace &trace)
{
    m_source->setCurrentIndex(trace.source == WhatIfTrace::Source::LogKeys ? 0 : 1);
    m_glob->setText(QString::fromUtf8(trace.glob));
    m_scoreUnit->setCurrentIndex(m_scoreUnit->findData(int(trace.scoreUnit)));
    m_file->setText(trace.path);
    m_timeUnit->setCurrentIndex(m_timeUnit->findData(int(trace.timeUnit)));
    sourceChanged();
}

WhatIfTrace WhatIfPage::trace() const
{
    WhatIfTrace t;
    t.source = m_source->currentIndex() == 0 ? WhatIfTrace::Source::LogKeys : WhatIfTrace::Source::CsvFile;
    t.glob = m_glob->text().toUtf8();
    t.scoreUnit = ScoreUnit(m_scoreUnit->currentData().toInt());
    t.path = m_file->text().trimmed();
    t.timeUnit = TraceTimeUnit(m_timeUnit->currentData().toInt());
    return t;
}

void WhatIfPage::sourceChanged()
{
    const bool logs = m_source->currentIndex() == 0;
    m_logFields->setVisible(logs);
    m_fileFields->setVisible(!logs);
    m_traceNote->setText(
        logs ? QStringLiteral("The keys' sorted-set logs, only read. They hold what was admitted: denials are a lower bound.")
             : QStringLiteral("One request per line: time,key[,cost]; times in µs since the epoch (or ms), or ISO 8601. No "
                              "connection needed."));
    updateRunnable();
}

QString WhatIfPage::whyNotRunnable() const
{
    if (m_run)
        return QStringLiteral("A comparison is running");
    const WhatIfTrace t = trace();
    if (t.source == WhatIfTrace::Source::LogKeys) {
        if (!m_client)
            return QStringLiteral("Not connected: connect to read the keys' logs, or choose a trace file");
        if (t.glob.isEmpty())
            return QStringLiteral("Give the keys whose logs make the trace (a glob such as api:*)");
    } else if (t.path.isEmpty()) {
        return QStringLiteral("Choose a trace file");
    }
    QString problem;
    if (specs(&problem).empty())
        return problem.isEmpty() ? QStringLiteral("Add a spec to compare") : problem;
    return {};
}

void WhatIfPage::updateRunnable()
{
    const QString why = whyNotRunnable();
    m_runButton->setEnabled(why.isEmpty());
    m_runButton->setToolTip(why.isEmpty() ? QStringLiteral("Replay the trace against every spec in a private sandbox server "
                                                           "(nothing is written to the inspected server)")
                                          : why);
    m_why->setText(m_run ? QString() : why);
    m_cancelButton->setEnabled(m_run != nullptr);
    m_progress->setVisible(m_run != nullptr);
    for (QWidget *w :
         std::initializer_list<QWidget *>{m_source, m_glob, m_scoreUnit, m_file, m_browse, m_timeUnit, m_wholeGroup, m_addSpec})
        w->setEnabled(!m_run);
    if (m_run)
        for (const SpecRow &r : m_rows)
            for (QWidget *w : std::initializer_list<QWidget *>{r.name, r.algorithm, r.limit, r.window, r.cost, r.remove})
                w->setEnabled(false);
    else
        for (const SpecRow &r : m_rows) {
            for (QWidget *w : std::initializer_list<QWidget *>{r.name, r.algorithm, r.limit, r.window, r.cost})
                w->setEnabled(true);
            r.remove->setEnabled(m_rows.size() > 1);
        }
    m_addSpec->setEnabled(!m_run && int(m_rows.size()) < kMaxSpecs);
}

void WhatIfPage::chooseFile()
{
    auto *dialog = new QFileDialog(this, QStringLiteral("Trace file"), {}, QStringLiteral("Traces (*.csv *.txt);;All files (*)"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setFileMode(QFileDialog::ExistingFile);
    connect(dialog, &QFileDialog::fileSelected, this, [this](const QString &path) { m_file->setText(path); });
    dialog->open();
}

void WhatIfPage::setClient(RedisClient *client, const ConnectionOptions &options, const QByteArray &ns)
{
    delete m_requests; // queued reads skipped, late answers dropped
    m_requests = new QObject(this);
    m_keyPending = false;
    m_client = client;
    m_options = options;
    m_ns = ns;
    updateRunnable();
}

// ---- where it is opened from ---------------------------------------------------------------

void WhatIfPage::previewPolicy(const std::optional<Policy> &stored, const Policy &edited, bool runNow)
{
    if (m_run)
        return;
    WhatIfTrace t;
    t.source = WhatIfTrace::Source::LogKeys;
    t.glob = edited.match;
    t.scoreUnit = edited.scoreUnit;
    setTrace(t);
    m_groupGlob.clear();
    m_wholeGroup->hide();
    std::vector<Spec> s;
    if (stored)
        s.push_back({QStringLiteral("now"), stored->spec});
    s.push_back({stored ? QStringLiteral("proposed") : QStringLiteral("new policy"), edited.spec});
    setSpecs(s);
    clearResults();
    const QString why = whyNotRunnable();
    if (!why.isEmpty())
        setStatus(why, true);
    else if (runNow)
        run();
    else
        setStatus(QStringLiteral("Press Run to replay the recent requests of %1 against %2.")
                      .arg(displayKey(edited.match), stored ? QStringLiteral("both specs") : QStringLiteral("the new policy")));
}

void WhatIfPage::runAfter(int delayMs)
{
    m_runLater.setSingleShot(true);
    m_runLater.start(delayMs);
    setStatus(QStringLiteral("Running in %1…").arg(formatSpan(qint64(delayMs) * 1000)));
}

void WhatIfPage::previewKey(const QByteArray &key)
{
    if (m_run || !m_client)
        return;
    WhatIfTrace t;
    t.source = WhatIfTrace::Source::LogKeys;
    t.glob = escapeGlob(key);
    setTrace(t);
    m_groupGlob.clear();
    m_wholeGroup->hide();
    clearResults();
    setStatus(QStringLiteral("Reading the limits of %1…").arg(displayKey(key)));
    m_keyPending = true;
    m_client->request(
        m_requests,
        [key, ns = MetadataNamespace(m_ns)](Connection &c) { return readLimitsInForceAt(c, ns, key); },
        [this, key](const Outcome<EffectiveLimits> &o) {
            m_keyPending = false;
            if (!o.ok()) {
                setStatus(QStringLiteral("Could not read the limits of %1: %2").arg(displayKey(key), o.failure().message), true);
                emit finished();
                return;
            }
            const EffectiveLimits &limits = o.value();
            if (limits.policy) {
                m_scoreUnit->setCurrentIndex(m_scoreUnit->findData(int(limits.policy->scoreUnit)));
                if (limits.policy->match != escapeGlob(key)) {
                    m_groupGlob = limits.policy->match;
                    m_wholeGroup->setText(QStringLiteral("All keys of policy %1").arg(limits.policy->name));
                    m_wholeGroup->setToolTip(plainToolTip(QStringLiteral("Use the logs of every key %1 matches: %2")
                                                              .arg(limits.policy->name, displayKey(limits.policy->match))));
                    m_wholeGroup->show();
                }
            }
            if (limits.spec) {
                setSpecs({{QStringLiteral("now"), *limits.spec}, {QStringLiteral("proposed"), *limits.spec}});
                setStatus(
                    QStringLiteral("%1 is limited to %2%3. Change the proposed limits (or add a spec) and press Run.")
                        .arg(displayKey(key), formatLimit(*limits.spec), limits.override ? QStringLiteral(" by an override") : QString()));
                if (!m_rows.empty())
                    m_rows.back().limit->setFocus();
            } else {
                setSpecs({{QStringLiteral("proposed"), {Algorithm::SlidingLog, 0, 0, 1}}});
                setStatus(QStringLiteral("No policy or override limits %1: give the limits to try and press Run.").arg(displayKey(key)));
            }
            emit finished();
        });
}

// ---- a run ---------------------------------------------------------------------------------

void WhatIfPage::run()
{
    m_runLater.stop();
    if (!whyNotRunnable().isEmpty())
        return;
    const std::vector<Spec> chosen = specs();
    std::vector<LimitSpec> limits;
    m_runNames.clear();
    for (const Spec &s : chosen) {
        limits.push_back(s.spec);
        m_runNames << s.name;
    }
    const WhatIfTrace t = trace();
    clearResults();
    m_run = new WhatIfRun(this);
    connect(m_run, &WhatIfRun::progressed, this, &WhatIfPage::showProgress);
    connect(m_run, &WhatIfRun::finished, this, &WhatIfPage::showOutcome);
    m_progress->setValue(0);
    setStatus(t.source == WhatIfTrace::Source::LogKeys
                  ? QStringLiteral("Reading the logs of %1 and replaying them in a private sandbox…").arg(displayKey(t.glob))
                  : QStringLiteral("Replaying %1 in a private sandbox…").arg(t.path));
    m_run->start(m_options, t, limits);
    updateRunnable();
}

void WhatIfPage::cancel()
{
    if (!m_run)
        return;
    m_run->cancel();
    m_cancelButton->setEnabled(false);
    setStatus(QStringLiteral("Cancelling…"));
}

void WhatIfPage::showProgress()
{
    if (m_run)
        m_progress->setValue(int(m_run->progress() * 1000));
}

void WhatIfPage::clearResults()
{
    m_outcome.reset();
    for (QLabel *l : m_summaryLabels)
        l->parentWidget()->deleteLater(); // the line's row: swatch and text
    m_summaryLabels.clear();
    m_note->hide();
    m_chart->clear();
    m_keys->setResult({}, {}, 0);
    m_keysTitle->setText(QStringLiteral("Affected keys"));
    m_progress->setValue(0);
}

QString WhatIfPage::summaryLine(const QString &name, const SimSpecResult &r)
{
    // The CLI's words for the spec and its outcome, so the two read alike.
    return QStringLiteral("%1  %2: %3").arg(name, describeSpec(r.spec), simOutcomeText(r));
}

void WhatIfPage::showOutcome(const WhatIfOutcome &outcome)
{
    m_run->deleteLater();
    m_run = nullptr;
    m_outcome = outcome;
    updateRunnable();
    if (!outcome.result) {
        m_progress->setValue(0);
        setStatus(QStringLiteral("The comparison did not run: %1").arg(outcome.error), true);
        emit finished();
        return;
    }
    const SimResult &r = *outcome.result;
    m_progress->setValue(r.cancelled ? m_progress->value() : 1000);
    qint64 requests = r.specs.empty() ? 0 : r.specs.front().requests;
    const QString span = r.lastUs > r.firstUs ? formatSpan(r.lastUs - r.firstUs) : QStringLiteral("an instant");
    if (requests == 0 && !r.cancelled)
        setStatus(QStringLiteral("Nothing to replay: %1 holds no requests%2.")
                      .arg(r.traceDescription, trace().source == WhatIfTrace::Source::LogKeys
                                                   ? QStringLiteral(" (no key matches, or no log among them)")
                                                   : QString()),
                  true);
    else
        setStatus(QStringLiteral("%1%2, over %3.")
                      .arg(r.cancelled ? QStringLiteral("Cancelled; what was replayed of the trace: ") : QStringLiteral("Trace: "),
                           r.traceDescription, span),
                  false);
    for (size_t i = 0; i < r.specs.size(); ++i) {
        auto *line = new QWidget(m_summaryBox->parentWidget());
        auto *h = new QHBoxLayout(line);
        h->setContentsMargins(0, 0, 0, 0);
        h->addWidget(swatch(int(i), line), 0, Qt::AlignVCenter);
        auto *text = textLabel(summaryLine(m_runNames.value(int(i)), r.specs[i]), line);
        text->setObjectName(QStringLiteral("summary%1").arg(i));
        text->setTextInteractionFlags(Qt::TextSelectableByMouse);
        QFont bold = text->font();
        bold.setBold(true);
        text->setFont(bold);
        h->addWidget(text, 1);
        m_summaryBox->addWidget(line);
        m_summaryLabels.push_back(text);
    }
    m_note->setVisible(r.admittedOnly);
    m_chart->show(r, m_runNames);
    m_keys->setResult(m_runNames, outcome.keys, r.firstUs);
    if (outcome.affectedKeys == 0)
        m_keysTitle->setText(QStringLiteral("Affected keys: none (no spec denies any request)"));
    else if (size_t(outcome.affectedKeys) > outcome.keys.size())
        m_keysTitle->setText(QStringLiteral("Affected keys: %1 denied under some spec; the %2 most denied are listed")
                                 .arg(formatCount(outcome.affectedKeys), formatCount(qint64(outcome.keys.size()))));
    else
        m_keysTitle->setText(QStringLiteral("Affected keys: %1 denied under some spec").arg(formatCount(outcome.affectedKeys)));
    emit finished();
}

void WhatIfPage::setStatus(const QString &text, bool problem)
{
    m_status->setText(text);
    m_status->setStyleSheet(problem ? problemStyle() : QString());
}

QString WhatIfPage::statusText() const
{
    return m_status->text();
}

QString WhatIfPage::noteText() const
{
    return m_note->isVisibleTo(this) ? m_note->text() : QString();
}

QStringList WhatIfPage::summaryLines() const
{
    QStringList lines;
    for (const QLabel *l : m_summaryLabels)
        lines << l->text();
    return lines;
}

// ---- the results ---------------------------------------------------------------------------

QWidget *WhatIfPage::buildResults()
{
    auto *box = new QWidget(this);
    auto *v = new QVBoxLayout(box);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(4);
    auto *summaries = new QWidget(box);
    m_summaryBox = new QVBoxLayout(summaries);
    m_summaryBox->setContentsMargins(0, 0, 0, 0);
    m_summaryBox->setSpacing(2);
    v->addWidget(summaries);
    m_note = textLabel(QStringLiteral("Admitted requests only: a lower bound (logs keep what the limiters admitted, not what "
                                      "they denied)."),
                       box);
    m_note->setObjectName(QStringLiteral("note"));
    m_note->setForegroundRole(QPalette::PlaceholderText);
    m_note->hide();
    v->addWidget(m_note);

    m_chart = new WhatIfChart(box);
    auto *keysBox = new QWidget(box);
    auto *kv = new QVBoxLayout(keysBox);
    kv->setContentsMargins(0, 0, 0, 0);
    kv->setSpacing(2);
    m_keysTitle = textLabel(QStringLiteral("Affected keys"), keysBox);
    m_keysTitle->setObjectName(QStringLiteral("keysTitle"));
    m_keys = new WhatIfKeyModel(this);
    m_sorted = new QSortFilterProxyModel(this);
    m_sorted->setSourceModel(m_keys);
    m_sorted->setSortRole(WhatIfKeyModel::SortRole);
    m_table = new QTableView(keysBox);
    m_table->setObjectName(QStringLiteral("keys"));
    m_table->setModel(m_sorted);
    m_table->setSortingEnabled(true);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 8);
    m_table->horizontalHeader()->setHighlightSections(false);
    m_table->horizontalHeader()->setDefaultSectionSize(120);
    m_table->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff); // the columns fit the width instead
    m_table->setMinimumHeight(90);
    m_table->sortByColumn(WhatIfKeyModel::deniedColumn(0), Qt::DescendingOrder);
    connect(m_keys, &QAbstractItemModel::modelReset, this, [this] {
        // Most denied under the last (proposed) spec first.
        if (m_keys->specCount() > 0)
            m_table->sortByColumn(WhatIfKeyModel::deniedColumn(m_keys->specCount() - 1), Qt::DescendingOrder);
        fitTable();
    });
    fitOnResize(m_table, [this] { fitTable(); });
    m_table->setToolTip(QStringLiteral("Double-click a key to open it"));
    connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex &index) {
        const QByteArray key = index.data(WhatIfKeyModel::KeyRole).toByteArray();
        if (!key.isEmpty())
            emit openKeyRequested(key);
    });
    kv->addWidget(m_keysTitle);
    kv->addWidget(m_table, 1);

    auto *split = new QSplitter(Qt::Vertical, box);
    split->addWidget(m_chart);
    split->addWidget(keysBox);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setSizes({300, 200});
    split->setChildrenCollapsible(false);
    v->addWidget(split, 1);
    return box;
}

} // namespace ratescope::ui

namespace ratescope::ui {

void WhatIfPage::fitTable()
{
    // As the keys panel's columns: the key at a readable width, then the requests, what each
    // spec denied and when each first denied, while they fit (a cell's tooltip says the rest);
    // the key takes what is left. No sideways scrolling at any width.
    const int available = m_table->viewport()->width();
    if (available <= 0)
        return;
    const int em = m_table->fontMetrics().horizontalAdvance(QLatin1Char('m'));
    QHeaderView *header = m_table->horizontalHeader();
    // Short keys need less than a readable width for long ones: their own, within 8 .. 14 em.
    const int keyMin = std::clamp(columnContentWidth(m_table, header, WhatIfKeyModel::KeyColumn), 8 * em, 14 * em);
    auto width = [&](int column) { return std::clamp(columnContentWidth(m_table, header, column), 5 * em, 16 * em); };
    std::vector<FittedColumn> order{{WhatIfKeyModel::RequestsColumn, width(WhatIfKeyModel::RequestsColumn)}};
    for (int spec = 0; spec < m_keys->specCount(); ++spec)
        order.push_back({WhatIfKeyModel::deniedColumn(spec), width(WhatIfKeyModel::deniedColumn(spec))});
    for (int spec = 0; spec < m_keys->specCount(); ++spec)
        order.push_back({WhatIfKeyModel::firstDenialColumn(spec), width(WhatIfKeyModel::firstDenialColumn(spec))});
    const int used = fitColumns(header, available, keyMin, order);
    header->resizeSection(WhatIfKeyModel::KeyColumn, std::max(keyMin, available - used));
}

} // namespace ratescope::ui
