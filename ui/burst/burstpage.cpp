#include "burstpage.h"

#include "burstcharts.h"
#include "burstqueries.h"
#include "displayformat.h"
#include "fitwidth.h"
#include "limittext.h"
#include "base/duration.h"
#include "base/errors.h"
#include "keys/inspector.h"
#include "keys/keydetails.h"
#include "base/keytext.h"
#include "limiters/limiter.h"
#include "admin/limitsinforce.h"
#include "admin/policy.h"
#include "formats/usage.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFrame>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QVBoxLayout>

#include <cmath>

namespace ratescope::ui {

namespace {

// What the Burst page reads before firing: the key as the keys panel reads it, and why it
// must not be fired at (Ratescope's records, another library's key), if so.
constexpr int kRedrawMs = BurstEngine::kProgressIntervalMs; // at most one redraw per engine tick
constexpr int kPolicyDelayMs = 300;                         // typing a key: look it up once it settles
const QColor kProblem(0xd3, 0x2f, 0x2f);                    // reads on light and dark backgrounds

QString problemStyle()
{
    return QStringLiteral("QLabel { color: %1; }").arg(kProblem.name());
}

// How long a burst should take when that is known: its duration, or its requests at its rate.
qint64 plannedUs(const BurstConfig &c)
{
    qint64 planned = c.durationUs.value_or(0);
    if (c.rate > 0 && c.requests) {
        const qint64 paced = qint64(double(*c.requests) / c.rate * 1e6);
        planned = planned > 0 ? std::min(planned, paced) : paced;
    }
    return planned;
}

QString describeKey(const KeyDetails &d)
{
    QStringList parts;
    if (d.kind.isLimiter())
        parts << QStringLiteral("a %1 limiter").arg(d.kind.label());
    else
        parts << QStringLiteral("a Redis %1 that is no limiter Ratescope recognises").arg(QString::fromUtf8(d.type));
    if (d.usage)
        parts << QStringLiteral("%1 of %2 used, %3 remaining")
                     .arg(formatCount(d.usage->usedNow), formatCount(d.usage->decision.limit), formatCount(d.remaining()));
    if (d.pttlMs >= 0)
        parts << QStringLiteral("expiring in %1").arg(formatTtl(d.pttlMs));
    return parts.first() + (parts.size() > 1 ? QStringLiteral(": ") + parts.mid(1).join(QStringLiteral(", ")) : QString());
}

} // namespace

BurstPage::BurstPage(QWidget *parent)
    : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 8, 8, 8);
    layout->addWidget(buildForm());

    m_start = new QPushButton(QStringLiteral("Start"), this);
    m_start->setObjectName(QStringLiteral("start"));
    m_start->setDefault(true);
    m_cancel = new QPushButton(QStringLiteral("Cancel"), this);
    m_cancel->setObjectName(QStringLiteral("cancel"));
    m_cancel->setEnabled(false);
    m_why = new QLabel(this);
    m_why->setObjectName(QStringLiteral("why"));
    m_why->setTextFormat(Qt::PlainText);
    m_why->setWordWrap(true);
    m_exportCsv = new QPushButton(QStringLiteral("Export CSV…"), this);
    m_exportCsv->setObjectName(QStringLiteral("exportCsv"));
    m_exportCsv->setToolTip(QStringLiteral("Allowed, denied and errors per 100 ms, as ratescope-cli burst --timeline writes them"));
    m_exportPng = new QPushButton(QStringLiteral("Export PNG…"), this);
    m_exportPng->setObjectName(QStringLiteral("exportPng"));
    m_exportPng->setToolTip(QStringLiteral("The chart as an image"));
    m_exportCsv->setEnabled(false);
    m_exportPng->setEnabled(false);
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_start);
    buttons->addWidget(m_cancel);
    buttons->addWidget(m_why, 1);
    buttons->addWidget(m_exportCsv);
    buttons->addWidget(m_exportPng);
    layout->addLayout(buttons);

    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setTextVisible(false);
    m_progress->setMaximumHeight(8);
    m_status = new QLabel(QStringLiteral("Fill in the burst and press Start."), this);
    m_status->setObjectName(QStringLiteral("status"));
    m_status->setTextFormat(Qt::PlainText);
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_progress);
    layout->addWidget(m_status);
    layout->addWidget(buildResults(), 1);

    connect(m_start, &QPushButton::clicked, this, &BurstPage::start);
    connect(m_cancel, &QPushButton::clicked, this, &BurstPage::cancel);
    connect(m_exportCsv, &QPushButton::clicked, this, [this] { chooseExportFile(false); });
    connect(m_exportPng, &QPushButton::clicked, this, [this] { chooseExportFile(true); });

    m_policyDelay.setSingleShot(true);
    m_policyDelay.setInterval(kPolicyDelayMs);
    connect(&m_policyDelay, &QTimer::timeout, this, &BurstPage::lookUpPolicy);
    m_redrawLater.setSingleShot(true);
    connect(&m_redrawLater, &QTimer::timeout, this, &BurstPage::redraw);
    // Quitting the console cancels a burst rather than leave it firing until the process ends.
    if (QCoreApplication *app = QCoreApplication::instance())
        connect(app, &QCoreApplication::aboutToQuit, this, [this] {
            if (m_run && m_run->isRunning()) {
                m_run->cancel();
                m_run->wait(BurstRun::kCloseWaitMs);
            }
        });
    formChanged();
}

BurstPage::~BurstPage()
{
    delete m_run; // cancels and waits, boundedly
    m_run = nullptr;
}

// ---- the form ------------------------------------------------------------------------------

QWidget *BurstPage::cell(QWidget *widget, const QString &name)
{
    auto *box = new QWidget(this);
    auto *v = new QVBoxLayout(box);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(1);
    widget->setObjectName(name);
    v->addWidget(widget);
    auto *note = new QLabel(box);
    note->setObjectName(name + QStringLiteral("Note"));
    note->setTextFormat(Qt::PlainText);
    note->setWordWrap(true);
    note->setStyleSheet(problemStyle());
    note->hide();
    v->addWidget(note);
    m_fields.insert(name, {widget, note});
    return box;
}

void BurstPage::setNote(const QString &name, const QString &text)
{
    const Field f = m_fields.value(name);
    if (!f.note)
        return;
    f.note->setText(text);
    f.note->setVisible(!text.isEmpty());
}

QWidget *BurstPage::buildForm()
{
    auto *box = new QFrame(this);
    box->setFrameShape(QFrame::StyledPanel);
    auto *grid = new QGridLayout(box);
    grid->setContentsMargins(8, 6, 8, 6);
    grid->setHorizontalSpacing(8);
    grid->setVerticalSpacing(4);

    m_mode = new QComboBox(this);
    m_mode->addItem(QStringLiteral("Burst at a key"));
    m_mode->addItem(QStringLiteral("Boundary test: fixed window vs sliding log"));
    m_mode->setToolTip(QStringLiteral("The boundary test fires `limit` requests just before a window boundary and `limit` just "
                                      "after it, at a fixed window and at a sliding log, each on a scratch key of its own: a "
                                      "fixed window admits up to twice its limit"));
    m_key = new QLineEdit(this);
    m_algo = new QComboBox(this);
    m_algo->addItem(QStringLiteral("From policy"));
    for (Algorithm a : kAllAlgorithms)
        m_algo->addItem(algorithmName(a), int(a));
    m_limit = new QLineEdit(this);
    m_limit->setPlaceholderText(QStringLiteral("requests"));
    m_window = new QLineEdit(this);
    m_window->setPlaceholderText(QStringLiteral("10s, 1m"));
    m_cost = new QLineEdit(this);
    m_cost->setPlaceholderText(QStringLiteral("1"));
    m_requests = new QLineEdit(QStringLiteral("1000"), this);
    m_duration = new QLineEdit(this);
    m_duration->setPlaceholderText(QStringLiteral("none, or 10s"));
    m_rate = new QLineEdit(this);
    m_rate->setPlaceholderText(QStringLiteral("e.g. 500"));
    keepPlaceholdersWhole({m_limit, m_window, m_duration, m_rate}); // at 1024 px too
    m_fast = new QCheckBox(QStringLiteral("as fast as possible"), this);
    m_fast->setObjectName(QStringLiteral("fast"));
    m_fast->setChecked(true);
    m_connections = new QSpinBox(this);
    m_connections->setRange(1, BurstConfig::kMaxConnections);
    m_connections->setValue(1);
    m_connections->setToolTip(QStringLiteral("Each connection on its own thread"));
    m_pipeline = new QSpinBox(this);
    m_pipeline->setRange(1, BurstConfig::kMaxPipeline);
    m_pipeline->setValue(1);
    m_pipeline->setToolTip(QStringLiteral("Requests per round trip on each connection"));
    m_policy = new QLabel(this);
    m_policy->setObjectName(QStringLiteral("policy"));
    m_policy->setTextFormat(Qt::PlainText);
    m_policy->setWordWrap(true);
    m_formNote = new QLabel(this);
    m_formNote->setObjectName(QStringLiteral("formNote"));
    m_formNote->setTextFormat(Qt::PlainText);
    m_formNote->setWordWrap(true);
    m_formNote->setStyleSheet(problemStyle());
    m_formNote->hide();
    m_mismatch = new QLabel(this);
    m_mismatch->setObjectName(QStringLiteral("limitsMismatch"));
    m_mismatch->setTextFormat(Qt::PlainText);
    m_mismatch->setWordWrap(true);
    m_mismatch->setStyleSheet(QStringLiteral("QLabel { background: #fcefc7; border: 1px solid #e0c97a; border-radius: 3px; "
                                             "padding: 3px 6px; color: #4d3b00; }"));
    m_mismatch->hide();

    auto label = [this](const QString &text) {
        auto *l = new QLabel(text, this);
        l->setAlignment(Qt::AlignRight | Qt::AlignTop);
        l->setContentsMargins(0, 4, 0, 0);
        return l;
    };
    int row = 0;
    grid->addWidget(label(QStringLiteral("Test")), row, 0);
    grid->addWidget(cell(m_mode, QStringLiteral("mode")), row, 1, 1, 3);
    grid->addWidget(label(QStringLiteral("Connections")), row, 4);
    grid->addWidget(cell(m_connections, QStringLiteral("connections")), row, 5);
    grid->addWidget(label(QStringLiteral("Pipeline")), row, 6);
    grid->addWidget(cell(m_pipeline, QStringLiteral("pipeline")), row, 7);
    ++row;
    grid->addWidget(label(QStringLiteral("Key")), row, 0);
    grid->addWidget(cell(m_key, QStringLiteral("key")), row, 1, 1, 7);
    ++row;
    grid->addWidget(m_policy, row, 1, 1, 7);
    ++row;
    grid->addWidget(label(QStringLiteral("Algorithm")), row, 0);
    grid->addWidget(cell(m_algo, QStringLiteral("algo")), row, 1);
    grid->addWidget(label(QStringLiteral("Limit")), row, 2);
    grid->addWidget(cell(m_limit, QStringLiteral("limit")), row, 3);
    grid->addWidget(label(QStringLiteral("Window")), row, 4);
    grid->addWidget(cell(m_window, QStringLiteral("window")), row, 5);
    grid->addWidget(label(QStringLiteral("Cost")), row, 6);
    grid->addWidget(cell(m_cost, QStringLiteral("cost")), row, 7);
    ++row;
    grid->addWidget(m_mismatch, row, 1, 1, 7);
    ++row;
    grid->addWidget(label(QStringLiteral("Requests")), row, 0);
    grid->addWidget(cell(m_requests, QStringLiteral("requests")), row, 1);
    grid->addWidget(label(QStringLiteral("Duration")), row, 2);
    grid->addWidget(cell(m_duration, QStringLiteral("duration")), row, 3);
    grid->addWidget(label(QStringLiteral("Rate (/s)")), row, 4);
    grid->addWidget(cell(m_rate, QStringLiteral("rate")), row, 5);
    grid->addWidget(m_fast, row, 6, 1, 2, Qt::AlignTop);
    ++row;
    grid->addWidget(m_formNote, row, 1, 1, 7);
    for (int c : {1, 3, 5, 7})
        grid->setColumnStretch(c, 1);

    // An empty key is an error only once a key was there: a fresh form is not marked red.
    connect(m_key, &QLineEdit::textChanged, this, [this] { m_keyTouched = true; });
    for (QLineEdit *e : {m_key, m_limit, m_window, m_cost, m_requests, m_duration, m_rate})
        connect(e, &QLineEdit::textChanged, this, &BurstPage::formChanged);
    connect(m_key, &QLineEdit::textChanged, this, [this] {
        m_policyKnown = false;
        m_policyDelay.start();
    });
    for (QComboBox *c : {m_mode, m_algo})
        connect(c, &QComboBox::currentIndexChanged, this, &BurstPage::formChanged);
    connect(m_fast, &QCheckBox::toggled, this, &BurstPage::formChanged);
    for (QSpinBox *s : {m_connections, m_pipeline})
        connect(s, &QSpinBox::valueChanged, this, &BurstPage::formChanged);
    return box;
}

QWidget *BurstPage::buildResults()
{
    m_resultPages = new QStackedWidget(this);

    // A burst: the summary in two lines, then the live timeline beside the latency histogram.
    auto *burst = new QWidget(m_resultPages);
    auto *burstLayout = new QVBoxLayout(burst);
    burstLayout->setContentsMargins(0, 0, 0, 0);
    auto *summary = new QGridLayout;
    summary->setHorizontalSpacing(6);
    summary->setVerticalSpacing(2);
    const std::initializer_list<std::initializer_list<const char *>> rows = {
        {"Sent", "Allowed", "Denied", "Errors", "Elapsed", "Throughput"},
        {"p50", "p90", "p99", "p99.9", "Max"},
    };
    int r = 0;
    for (const auto &names : rows) {
        int c = 0;
        for (const char *name : names) {
            const QString n = QLatin1String(name);
            const bool latency = r == 1;
            auto *title = new QLabel((latency && c == 0 ? QStringLiteral("Latency ") : QString()) + (latency ? n.toLower() : n), burst);
            title->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
            title->setForegroundRole(QPalette::PlaceholderText);
            auto *value = new QLabel(QStringLiteral("–"), burst);
            value->setObjectName(QStringLiteral("summary") + n);
            value->setTextFormat(Qt::PlainText);
            value->setTextInteractionFlags(Qt::TextSelectableByMouse);
            QFont bold = value->font();
            bold.setBold(true);
            value->setFont(bold);
            summary->addWidget(title, r, c * 2);
            summary->addWidget(value, r, c * 2 + 1);
            m_summaryValues.insert(n, value);
            ++c;
        }
        ++r;
    }
    summary->setColumnStretch(11, 1);
    burstLayout->addLayout(summary);
    auto *charts = new QSplitter(Qt::Horizontal, burst);
    m_timeline = new TimelineChart(charts);
    m_timeline->setObjectName(QStringLiteral("timelineChart"));
    m_latency = new LatencyChart(charts);
    m_latency->setObjectName(QStringLiteral("latencyChart"));
    charts->addWidget(m_timeline);
    charts->addWidget(m_latency);
    charts->setStretchFactor(0, 3);
    charts->setStretchFactor(1, 2);
    charts->setChildrenCollapsible(false);
    burstLayout->addWidget(charts, 1);
    m_resultPages->addWidget(burst);

    // The boundary test: the headline, the two limiters around the boundary, the details.
    auto *boundary = new QWidget(m_resultPages);
    auto *b = new QVBoxLayout(boundary);
    b->setContentsMargins(0, 0, 0, 0);
    m_boundaryHeadline = new QLabel(QStringLiteral("Run the boundary test to compare the two algorithms."), boundary);
    m_boundaryHeadline->setObjectName(QStringLiteral("boundaryHeadline"));
    m_boundaryHeadline->setTextFormat(Qt::PlainText);
    m_boundaryHeadline->setWordWrap(true);
    QFont big = m_boundaryHeadline->font();
    big.setPointSizeF(big.pointSizeF() * 1.35);
    big.setBold(true);
    m_boundaryHeadline->setFont(big);
    m_boundaryChart = new BoundaryChart(boundary);
    m_boundaryChart->setObjectName(QStringLiteral("boundaryChart"));
    m_boundaryDetails = new QLabel(boundary);
    m_boundaryDetails->setObjectName(QStringLiteral("boundaryDetails"));
    m_boundaryDetails->setTextFormat(Qt::PlainText);
    m_boundaryDetails->setWordWrap(true);
    m_boundaryDetails->setTextInteractionFlags(Qt::TextSelectableByMouse);
    b->addWidget(m_boundaryHeadline);
    b->addWidget(m_boundaryChart, 1);
    b->addWidget(m_boundaryDetails);
    m_resultPages->addWidget(boundary);
    return m_resultPages;
}

BurstPage::Mode BurstPage::mode() const
{
    return m_mode->currentIndex() == 1 ? Mode::Boundary : Mode::Burst;
}

void BurstPage::setMode(Mode mode)
{
    m_mode->setCurrentIndex(mode == Mode::Boundary ? 1 : 0);
}

QByteArray BurstPage::currentKey() const
{
    // A key handed over as bytes stays those bytes while its escaped form is left as shown.
    const QString text = m_key->text();
    if (!m_keyBytes.isEmpty() && text == displayKey(m_keyBytes))
        return m_keyBytes;
    return text.toUtf8();
}

void BurstPage::setKey(const QByteArray &key)
{
    m_keyBytes = key;
    m_key->setText(displayKey(key));
    setMode(Mode::Burst);
}

void BurstPage::prefill(const Prefill &p)
{
    if (p.boundary) {
        setMode(Mode::Boundary);
        if (!p.limit.isEmpty() || !p.window.isEmpty()) {
            m_limit->setText(p.limit);
            m_window->setText(p.window);
        }
        formChanged();
        return;
    }
    setKey(p.key);
    m_algo->setCurrentIndex(p.algorithm ? std::max(0, m_algo->findData(int(*p.algorithm))) : 0);
    if (p.algorithm) {
        m_limit->setText(p.limit);
        m_window->setText(p.window);
    }
    m_cost->setText(p.cost);
    m_requests->setText(p.requests);
    m_duration->setText(p.duration);
    m_rate->setText(p.rate);
    m_fast->setChecked(p.rate.isEmpty());
    m_connections->setValue(p.connections);
    m_pipeline->setValue(p.pipeline);
    formChanged();
}

void BurstPage::startWhenReady()
{
    m_startWhenReady = true;
    updateStartable();
}

QString BurstPage::limitsMismatch()
{
    if (mode() == Mode::Boundary || m_algo->currentIndex() == 0 || !m_policyKnown || !m_policySpec || m_policyKey != currentKey())
        return {};
    const auto form = readForm(false).burst;
    if (!form)
        return {};
    const LimitSpec &mine = form->spec, &theirs = *m_policySpec;
    if (mine.algorithm == theirs.algorithm && mine.limit == theirs.limit && mine.windowUs == theirs.windowUs)
        return {};
    return QStringLiteral("Not the limits in force at this key (%1, %2): the burst counts %3, %4 on the key's real state, "
                          "so what it admits is not what the key's services would.")
        .arg(formatLimit(theirs), algorithmName(theirs.algorithm), formatLimit(mine), algorithmName(mine.algorithm));
}

// Every field checked on its own, its note beside it, then the whole as the engine checks it.
BurstPage::FormResult BurstPage::readForm(bool showNotes)
{
    QHash<QString, QString> notes;
    const bool boundary = mode() == Mode::Boundary;
    const bool fromPolicy = !boundary && m_algo->currentIndex() == 0;

    LimitSpec spec;
    bool specOk = true;
    if (fromPolicy) {
        if (!m_policyKnown || m_policyKey != currentKey()) {
            specOk = false; // still reading: no note, Start waits
        } else if (!m_policySpec) {
            notes.insert(QStringLiteral("algo"), QStringLiteral("no policy matches this key: choose an algorithm"));
            specOk = false;
        } else {
            spec = *m_policySpec;
        }
    } else {
        spec.algorithm = boundary ? Algorithm::FixedWindow : Algorithm(m_algo->currentData().toInt());
        const FieldValue limit = parseLimitField(m_limit->text());
        if (!limit.value) {
            notes.insert(QStringLiteral("limit"), limit.problem);
            specOk = false;
        } else {
            try {
                LimitSpec{spec.algorithm, *limit.value, kMinWindowUs, 1}.validate();
                spec.limit = *limit.value;
            } catch (const UsageError &e) {
                notes.insert(QStringLiteral("limit"), e.message());
                specOk = false;
            }
        }
        try {
            const FieldValue window = parseWindowField(m_window->text());
            if (!window.value)
                throw UsageError(window.problem);
            spec.windowUs = *window.value;
            LimitSpec{spec.algorithm, 1, spec.windowUs, 1}.validate();
        } catch (const UsageError &e) {
            notes.insert(QStringLiteral("window"), e.message());
            specOk = false;
        }
    }
    if (!boundary && !m_cost->text().trimmed().isEmpty()) {
        const FieldValue cost = parseCostField(m_cost->text());
        if (!cost.value) {
            notes.insert(QStringLiteral("cost"), cost.problem);
            specOk = false;
        } else {
            spec.cost = *cost.value;
        }
    } else if (!fromPolicy) {
        spec.cost = 1;
    }
    if (specOk) {
        try {
            spec.validate();
        } catch (const UsageError &e) {
            notes.insert(QStringLiteral("cost"), e.message()); // the fields alone were fine: it is the cost against the limit
            specOk = false;
        }
    }

    FormResult result;
    QString formNote;
    if (boundary) {
        if (specOk)
            result.boundary = spec;
    } else {
        BurstConfig c;
        c.key = currentKey();
        c.spec = spec;
        bool ok = specOk;
        if (c.key.isEmpty()) {
            if (m_keyTouched)
                notes.insert(QStringLiteral("key"), QStringLiteral("a key is needed"));
            ok = false;
        }
        if (!m_requests->text().trimmed().isEmpty()) {
            const auto n = parseCount(m_requests->text());
            if (!n || *n < 1 || *n > kMaxLimit) {
                notes.insert(QStringLiteral("requests"),
                             n ? QStringLiteral("between 1 and %1").arg(formatCount(kMaxLimit)) : QStringLiteral("not a whole number"));
                ok = false;
            } else {
                c.requests = *n;
            }
        }
        if (!m_duration->text().trimmed().isEmpty()) {
            try {
                c.durationUs = parseDurationUs(m_duration->text());
            } catch (const UsageError &e) {
                notes.insert(QStringLiteral("duration"), e.message());
                ok = false;
            }
        }
        if (m_requests->text().trimmed().isEmpty() && m_duration->text().trimmed().isEmpty()) {
            notes.insert(QStringLiteral("requests"), QStringLiteral("requests or a duration is needed"));
            ok = false;
        }
        if (!m_fast->isChecked()) {
            bool rateOk = false;
            c.rate = m_rate->text().trimmed().toDouble(&rateOk);
            if (!rateOk || !(c.rate > 0)) {
                notes.insert(QStringLiteral("rate"), QStringLiteral("a positive number of requests per second"));
                ok = false;
            }
        }
        c.connections = m_connections->value();
        c.pipeline = m_pipeline->value();
        if (ok) {
            try {
                c.validate(); // the engine's own rules, the last word
                result.burst = c;
            } catch (const UsageError &e) {
                formNote = e.message();
            }
        }
    }
    if (showNotes) {
        for (auto it = m_fields.cbegin(); it != m_fields.cend(); ++it)
            setNote(it.key(), notes.value(it.key()));
        m_formNote->setText(formNote);
        m_formNote->setVisible(!formNote.isEmpty());
    }
    return result;
}

void BurstPage::formChanged()
{
    const bool boundary = mode() == Mode::Boundary;
    const bool fromPolicy = !boundary && m_algo->currentIndex() == 0;
    for (QWidget *w : std::initializer_list<QWidget *>{m_key, m_algo, m_cost, m_requests, m_duration, m_fast, m_connections, m_pipeline})
        w->setEnabled(!boundary);
    m_rate->setEnabled(!boundary && !m_fast->isChecked());
    m_limit->setEnabled(!fromPolicy);
    m_window->setEnabled(!fromPolicy);
    if (fromPolicy && m_policyKnown && m_policySpec && m_policyKey == currentKey()) {
        // Shown, not edited: the burst fires at what the services enforce.
        const QSignalBlocker a(m_limit), b(m_window);
        m_limit->setText(QString::number(m_policySpec->limit));
        m_window->setText(formatDurationUs(m_policySpec->windowUs));
    }
    if (boundary && m_limit->text().isEmpty() && m_window->text().isEmpty()) {
        const QSignalBlocker a(m_limit), b(m_window);
        m_limit->setText(QStringLiteral("100"));
        m_window->setText(QStringLiteral("1s"));
    }
    m_policy->setVisible(!boundary);
    m_key->setPlaceholderText(boundary ? QStringLiteral("scratch keys: ratescope-scratch:boundary:<algorithm>:<random>")
                                       : QStringLiteral("the limiter's key, e.g. api:alice"));
    m_resultPages->setCurrentIndex(boundary ? 1 : 0);
    readForm(true);
    const QString mismatch = limitsMismatch();
    m_mismatch->setText(mismatch);
    m_mismatch->setVisible(!mismatch.isEmpty());
    updateStartable();
}

QString BurstPage::whyNotStartable() const
{
    if (isRunning() || m_preparing)
        return QStringLiteral("A run is under way.");
    if (!m_haveClient || !m_client)
        return QStringLiteral("Not connected to a server.");
    if (m_client->isReadOnly())
        return QStringLiteral("Read-only session: a burst consumes quota and writes an audit entry, so it is not allowed.");
    if (m_client->state() != RedisClient::State::Connected)
        return QStringLiteral("Not connected yet: waiting for the server.");
    const FormResult f = const_cast<BurstPage *>(this)->readForm(false);
    if (mode() == Mode::Boundary ? !f.boundary : !f.burst) {
        if (mode() == Mode::Burst && m_algo->currentIndex() == 0 && (!m_policyKnown || m_policyKey != currentKey()) &&
            !currentKey().isEmpty())
            return QStringLiteral("Reading the policy for this key…");
        if (mode() == Mode::Burst && currentKey().isEmpty() && !m_keyTouched)
            return QStringLiteral("Type the key of the limiter to fire at.");
        return QStringLiteral("Correct the fields marked in red.");
    }
    return {};
}

void BurstPage::updateStartable()
{
    const QString why = whyNotStartable();
    const bool running = isRunning() || m_preparing;
    m_start->setEnabled(why.isEmpty());
    m_start->setToolTip(why.isEmpty() ? (mode() == Mode::Boundary ? QStringLiteral("Run the boundary test on two scratch keys")
                                                                  : QStringLiteral("Fire the burst at the key"))
                                      : why);
    m_why->setText(running ? QString() : why);
    const bool serious = !running && !why.isEmpty() && !why.startsWith(QLatin1String("Correct")) &&
                         !why.startsWith(QLatin1String("Reading")) && !why.startsWith(QLatin1String("Type"));
    m_why->setStyleSheet(serious ? problemStyle() : QString());
    m_cancel->setEnabled(running);
    if (m_startWhenReady && !running) {
        if (why.isEmpty()) {
            m_startWhenReady = false;
            start(); // updates this again
            return;
        }
        if (!why.startsWith(QLatin1String("Reading")) && !why.startsWith(QLatin1String("Not connected"))) {
            m_startWhenReady = false;
            setStatus(QStringLiteral("Not started: %1").arg(why), true);
        }
    }
    if (isBusy() != m_wasBusy) {
        m_wasBusy = isBusy();
        emit busyChanged(m_wasBusy);
    }
}

void BurstPage::setClient(RedisClient *client, const ConnectionOptions &options, const QByteArray &ns)
{
    if (m_client)
        disconnect(m_client, nullptr, this, nullptr);
    m_client = client;
    m_haveClient = client != nullptr;
    m_options = options;
    m_ns = ns;
    m_policyKnown = false;
    m_peekPending = false;
    if (client) {
        connect(client, &RedisClient::readOnlyChanged, this, &BurstPage::updateStartable);
        connect(client, &RedisClient::stateChanged, this, [this](RedisClient::State s) {
            if (s == RedisClient::State::Connected && !m_policyKnown)
                lookUpPolicy();
            updateStartable();
        });
        lookUpPolicy();
    }
    formChanged();
}

bool BurstPage::isRunning() const
{
    return m_run && m_run->isRunning();
}

// The limits in force for the key: its override, else the policy matching it.
void BurstPage::lookUpPolicy()
{
    const QByteArray key = currentKey();
    if (!m_client || key.isEmpty()) {
        m_policy->setText(key.isEmpty() ? QStringLiteral("Limits come from the policy matching the key, or choose an algorithm.")
                                        : QString());
        return;
    }
    m_policy->setText(QStringLiteral("Reading the policy for this key…"));
    m_client->request(
        this,
        [key, ns = MetadataNamespace(m_ns)](Connection &c) { return readLimitsInForceAt(c, ns, key); },
        [this, key](const Outcome<EffectiveLimits> &o) {
            if (key != currentKey())
                return; // typed on meanwhile: a later look-up is on its way
            if (!o.ok()) {
                m_policy->setText(QStringLiteral("The policy could not be read: %1").arg(o.failure().message));
                return;
            }
            const EffectiveLimits &l = o.value();
            m_policyKey = key;
            m_policyKnown = true;
            m_policySpec = l.spec;
            QString text;
            if (l.policy)
                text = QStringLiteral("Policy %1 (matches %2): %3, %4")
                           .arg(l.policy->name, displayKey(l.policy->match), algorithmName(l.policy->spec.algorithm),
                                formatLimit(l.policy->spec));
            else
                text = QStringLiteral("No policy matches this key.");
            if (l.override && l.spec)
                text += QStringLiteral(" Override in force until %1: %2.")
                            .arg(QLocale().toString(l.override->expiresAt.toLocalTime(), QLocale::ShortFormat), formatLimit(*l.spec));
            m_policy->setText(text);
            formChanged();
        });
}

// ---- running -------------------------------------------------------------------------------

void BurstPage::start()
{
    if (!whyNotStartable().isEmpty())
        return;
    const FormResult f = readForm(true);
    if (mode() == Mode::Boundary) {
        launchBoundary(*f.boundary);
        return;
    }
    askThenLaunch(*f.burst);
}

// A burst at a key that exists consumes that client's real quota: say what it holds, ask.
void BurstPage::askThenLaunch(const BurstConfig &config)
{
    m_preparing = true;
    setStatus(QStringLiteral("Reading the key…"));
    updateStartable();
    m_client->request(
        this,
        [key = config.key, spec = config.spec, ns = MetadataNamespace(m_ns)](Connection &c) {
            return readBurstPreflight(c, ns, key, spec);
        },
        [this, config](const Outcome<BurstPreflight> &o) {
            if (!m_preparing)
                return; // cancelled meanwhile
            if (!o.ok()) {
                m_preparing = false;
                setStatus(QStringLiteral("The key could not be read, so nothing was fired: %1").arg(o.failure().message), true);
                updateStartable();
                return;
            }
            const KeyDetails &d = o.value().details;
            if (const QString &refusal = o.value().refusal; !refusal.isEmpty()) {
                m_preparing = false;
                setStatus(QStringLiteral("Not fired: %1.").arg(refusal), true);
                updateStartable();
                return;
            }
            // Where the quota line starts: what is left before the first request.
            const qint64 remaining = d.usage ? d.remaining() : config.spec.limit;
            if (!d.exists()) {
                launch(config, remaining);
                return;
            }
            auto *box = new QMessageBox(QMessageBox::Warning, QStringLiteral("Burst at an existing key"),
                                        QStringLiteral("%1 exists: it holds %2.").arg(displayKey(config.key), describeKey(d)),
                                        QMessageBox::NoButton, this);
            box->setTextFormat(Qt::PlainText);
            const QString mismatch = limitsMismatch();
            box->setInformativeText(
                QStringLiteral("A burst of %1 consumes this key's real quota: the clients behind it are denied "
                               "until it refills.%2")
                    .arg(config.requests ? formatCount(*config.requests) + QStringLiteral(" requests") : formatSpan(*config.durationUs),
                         mismatch.isEmpty() ? QString() : QStringLiteral("\n\n") + mismatch));
            box->addButton(QStringLiteral("Fire the burst"), QMessageBox::AcceptRole);
            box->setDefaultButton(box->addButton(QMessageBox::Cancel));
            box->setAttribute(Qt::WA_DeleteOnClose);
            box->setWindowModality(Qt::WindowModal);
            m_confirm = box;
            connect(box, &QMessageBox::finished, this, [this, box, config, remaining] {
                const bool fire = box->buttonRole(box->clickedButton()) == QMessageBox::AcceptRole;
                if (!m_preparing)
                    return;
                if (!fire) {
                    m_preparing = false;
                    setStatus(QStringLiteral("Not fired: the key was left as it was."));
                    updateStartable();
                    return;
                }
                launch(config, remaining);
            });
            box->open();
        });
}

void BurstPage::launch(const BurstConfig &config, qint64 remainingBefore)
{
    m_preparing = false;
    // The lock may have come on while the key was read or the question was open.
    if (!m_client || m_client->isReadOnly()) {
        setStatus(QStringLiteral("Not fired: %1").arg(whyNotStartable()), true);
        updateStartable();
        return;
    }
    delete m_run;
    m_run = new BurstRun(m_options, QString::fromUtf8(m_ns), this);
    m_run->setOperatorName(m_operator);
    connect(m_run, &BurstRun::progressed, this, &BurstPage::takeProgress);
    connect(m_run, &BurstRun::finished, this, &BurstPage::runFinished);
    m_config = config;
    m_boundarySpec.reset();
    m_summary.reset();
    m_slices.clear();
    m_remaining.assign(1, QPointF(0, double(remainingBefore)));
    m_live = {};
    m_engineOffsetUs = -1;
    m_auditEntries = 0;
    m_resultPages->setCurrentIndex(0);
    // Chart titles are HTML: a key is escaped to show as the plain text it is.
    m_timeline->reset(
        QStringLiteral("Burst at %1: %2 per 100 ms").arg(displayKey(config.key).toHtmlEscaped(), algorithmName(config.spec.algorithm)),
        config.spec.limit, plannedUs(config));
    m_latency->clear();
    for (QLabel *l : std::as_const(m_summaryValues))
        l->setText(QStringLiteral("–"));
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_exportCsv->setEnabled(false);
    m_exportPng->setEnabled(false);
    setStatus(
        QStringLiteral("Connecting %1 and loading the script…")
            .arg(config.connections == 1 ? QStringLiteral("1 connection") : QStringLiteral("%1 connections").arg(config.connections)));
    m_runClock.start();
    m_sinceRedraw.start();
    m_run->startBurst(config);
    updateStartable();
}

void BurstPage::launchBoundary(const LimitSpec &spec)
{
    delete m_run;
    m_run = new BurstRun(m_options, QString::fromUtf8(m_ns), this);
    m_run->setOperatorName(m_operator);
    connect(m_run, &BurstRun::progressed, this, &BurstPage::takeProgress);
    connect(m_run, &BurstRun::finished, this, &BurstPage::runFinished);
    m_config.reset();
    m_boundarySpec = spec;
    m_summary.reset();
    m_boundary.clear();
    m_auditEntries = 0;
    m_resultPages->setCurrentIndex(1);
    m_boundaryChart->clear();
    m_boundaryHeadline->setText(QStringLiteral("Fixed window against sliding log, %1…").arg(formatLimit(spec)));
    m_boundaryDetails->clear();
    m_progress->setRange(0, 0); // parked on the server's clock: no fraction to show
    m_exportCsv->setEnabled(false);
    m_exportPng->setEnabled(false);
    setStatus(QStringLiteral("Fixed window: waiting for the next window boundary on the server's clock…"));
    LimitSpec fixed = spec, sliding = spec;
    fixed.algorithm = Algorithm::FixedWindow;
    sliding.algorithm = Algorithm::SlidingLog;
    fixed.cost = sliding.cost = 1;
    m_run->startBoundary({fixed, sliding});
    updateStartable();
}

void BurstPage::cancel()
{
    if (m_preparing) {
        m_preparing = false;
        if (m_confirm)
            m_confirm->reject();
        setStatus(QStringLiteral("Not fired."));
        updateStartable();
        return;
    }
    if (!isRunning())
        return;
    m_run->cancel();
    setStatus(m_boundarySpec ? QStringLiteral("Cancelling: the algorithm under way finishes its two bursts first…")
                             : QStringLiteral("Cancelling: waiting for the replies in flight…"));
    m_cancel->setEnabled(false);
}

// Queued from the run's thread at most once at a time; the chart redraws at most every 100 ms.
void BurstPage::takeProgress()
{
    if (!m_run)
        return;
    BurstSnapshot s = m_run->takeSnapshot();
    if (m_boundarySpec) {
        if (s.boundaryDone == 1)
            setStatus(QStringLiteral("Sliding log: waiting for the next window boundary on the server's clock…"));
        return;
    }
    if (m_engineOffsetUs < 0 && (s.elapsedUs > 0 || !s.newSlices.empty()))
        m_engineOffsetUs = m_runClock.nsecsElapsed() / 1000 - s.elapsedUs;
    m_slices.insert(m_slices.end(), s.newSlices.begin(), s.newSlices.end());
    s.newSlices.clear();
    m_live = s;
    const qint64 since = m_sinceRedraw.elapsed();
    if (since >= kRedrawMs)
        redraw();
    else if (!m_redrawLater.isActive())
        m_redrawLater.start(int(kRedrawMs - since));
}

void BurstPage::redraw()
{
    m_redrawLater.stop();
    m_sinceRedraw.start();
    m_timeline->show(m_slices, m_remaining);
    if (!m_config)
        return;
    if (isRunning()) {
        double done = 0;
        if (m_config->requests)
            done = double(m_live.sent) / double(*m_config->requests);
        if (m_config->durationUs)
            done = std::max(done, double(m_live.elapsedUs) / double(*m_config->durationUs));
        m_progress->setValue(int(std::clamp(done, 0.0, 1.0) * 1000));
        setStatus(QStringLiteral("Running %1: sent %2, allowed %3, denied %4, errors %5")
                      .arg(formatSpan(m_live.elapsedUs), formatCount(m_live.sent), formatCount(m_live.allowed), formatCount(m_live.denied),
                           formatCount(m_live.errors)));
        peekRemaining();
    }
}

// The key's remaining quota, peeked on the console's own connection (never the engine's):
// one at a time, so a slow server gets fewer samples rather than a queue of them.
void BurstPage::peekRemaining()
{
    if (!m_client || m_peekPending || !m_config)
        return;
    m_peekPending = true;
    m_client->request(
        this, [key = m_config->key, spec = m_config->spec](Connection &c) { return readRemainingQuota(c, key, spec); },
        [this, key = m_config->key](const Outcome<qint64> &o) {
            m_peekPending = false;
            if (!o.ok() || !m_config || m_config->key != key || m_engineOffsetUs < 0)
                return; // a key of another format answers WRONGTYPE: no quota line then
            const qint64 atUs = std::max<qint64>(0, m_runClock.nsecsElapsed() / 1000 - m_engineOffsetUs);
            m_remaining.push_back(QPointF(double(atUs), double(o.value())));
            if (!isRunning())
                m_timeline->show(m_slices, m_remaining); // the last sample, after the run
        });
}

void BurstPage::runFinished(const BurstOutcome &outcome)
{
    takeProgress();
    m_redrawLater.stop();
    m_progress->setRange(0, 1000);
    m_auditEntries = outcome.auditEntries;
    const QString audit = outcome.auditError.isEmpty()
                              ? (outcome.auditEntries == 1  ? QStringLiteral(" Audited.")
                                 : outcome.auditEntries > 1 ? QStringLiteral(" Audited (%1 entries).").arg(outcome.auditEntries)
                                                            : QString())
                              : QStringLiteral(" The audit entry was not written: %1").arg(outcome.auditError);
    if (!outcome.error.isEmpty()) {
        setStatus(QStringLiteral("Nothing was fired: %1").arg(outcome.error), true);
        m_progress->setValue(0);
    } else if (outcome.summary) {
        m_summary = outcome.summary;
        m_slices = outcome.summary->timeline; // the engine's own, complete
        showSummary(*outcome.summary);
        peekRemaining();
        const BurstSummary &s = *outcome.summary;
        QString text = QStringLiteral("%1: %2 of %3 requests allowed, %4 denied, %5 errors%6 in %7.")
                           .arg(s.cancelled ? QStringLiteral("Cancelled")
                                : s.gaveUp  ? QStringLiteral("Gave up (the server could not be reached again for 3 s)")
                                            : QStringLiteral("Done"),
                                formatCount(s.allowed), formatCount(s.sent), formatCount(s.denied), formatCount(s.errors),
                                s.unknown ? QStringLiteral(", %1 with no reply (outcome unknown)").arg(formatCount(s.unknown)) : QString(),
                                formatSpan(s.elapsedUs));
        if (!s.firstError.isEmpty())
            text += QStringLiteral(" First error: %1").arg(s.firstError);
        setStatus(text + audit, !s.firstError.isEmpty() || !outcome.auditError.isEmpty());
        m_progress->setValue(1000);
        m_exportCsv->setEnabled(true);
        m_exportPng->setEnabled(true);
    } else {
        m_boundary = outcome.boundary;
        showBoundary(outcome.boundary);
        bool ok = !outcome.boundary.empty();
        for (const BoundaryRun &r : outcome.boundary)
            ok = ok && r.result.has_value();
        setStatus(
            (ok ? QStringLiteral("Boundary test done.") : QStringLiteral("The boundary test did not give a result for every algorithm.")) +
                audit,
            !ok || !outcome.auditError.isEmpty());
        m_progress->setValue(1000);
        m_exportPng->setEnabled(true);
    }
    updateStartable();
    if (outcome.summary && outcome.summary->sent > 0 && m_config)
        emit keyChanged(m_config->key);
    emit finished();
}

void BurstPage::showSummary(const BurstSummary &s)
{
    m_timeline->setTitle(QStringLiteral("Burst at %1: %2 allowed, %3 denied%4")
                             .arg(displayKey(m_config->key).toHtmlEscaped(), formatCount(s.allowed), formatCount(s.denied),
                                  s.errors ? QStringLiteral(", %1 errors").arg(formatCount(s.errors)) : QString()));
    m_timeline->show(m_slices, m_remaining);
    auto set = [this](const char *name, const QString &text) { m_summaryValues.value(QLatin1String(name))->setText(text); };
    set("Sent", formatCount(s.sent) + (s.cancelled ? QStringLiteral(" (cancelled)")
                                       : s.gaveUp  ? QStringLiteral(" (gave up: server unreachable)")
                                                   : QString()));
    set("Allowed", formatCount(s.allowed));
    set("Denied", formatCount(s.denied));
    // Lost replies are no errors: those requests may have been admitted (they were sent).
    QString errors = formatCount(s.errors);
    if (s.unknown)
        errors += QStringLiteral(" · %1 unknown (sent, no reply: may have been admitted)").arg(formatCount(s.unknown));
    if (s.notSent)
        errors += QStringLiteral(" · %1 not sent").arg(formatCount(s.notSent));
    set("Errors", errors);
    set("Elapsed", formatSpan(s.elapsedUs));
    set("Throughput", QStringLiteral("%1 decisions/s").arg(formatCount(std::llround(s.throughput()))));
    const LatencyHistogram &l = s.latency;
    set("p50", formatLatency(l.percentile(50)));
    set("p90", formatLatency(l.percentile(90)));
    set("p99", formatLatency(l.percentile(99)));
    set("p99.9", formatLatency(l.percentile(99.9)));
    set("Max", formatLatency(l.max()));
    m_latency->show(l);
}

void BurstPage::showBoundary(const std::vector<BoundaryRun> &runs)
{
    std::vector<std::pair<QString, BoundaryResult>> drawn;
    QStringList headline, details;
    const LimitSpec spec = m_boundarySpec.value_or(LimitSpec{});
    for (const BoundaryRun &r : runs) {
        const QString name = r.spec.algorithm == Algorithm::FixedWindow ? QStringLiteral("fixed window") : QStringLiteral("sliding log");
        if (r.result) {
            drawn.push_back({name, *r.result});
            headline << (headline.isEmpty() ? QStringLiteral("%1 admitted %2") : QStringLiteral("%1 %2"))
                            .arg(name, formatCount(r.result->admitted()));
            details << QStringLiteral("%1: %2 allowed before the boundary (the last reply %3 before it) + %4 after it (from %5 after) "
                                      "= %6 of %7 requests, %8× the limit.")
                           .arg(name, formatCount(r.result->firstAllowed), formatSpan(r.result->boundaryUs - r.result->firstEndUs),
                                formatCount(r.result->secondAllowed), formatSpan(r.result->secondStartUs - r.result->boundaryUs),
                                formatCount(r.result->admitted()), formatCount(2 * r.result->requestsPerBurst))
                           .arg(double(r.result->admitted()) / double(r.spec.limit), 0, 'f', 2);
        } else {
            headline << QStringLiteral("%1: no result").arg(name);
            details << QStringLiteral("%1: %2").arg(name, r.error);
        }
    }
    if (runs.empty())
        headline << QStringLiteral("No result");
    m_boundaryHeadline->setText(headline.join(QStringLiteral(" / ")) + QStringLiteral("  (limit %1)").arg(formatLimit(spec)));
    QStringList keys;
    for (const BoundaryRun &r : runs)
        keys << displayKey(r.key);
    if (!keys.isEmpty())
        details << QStringLiteral("Scratch keys %1: left to expire by themselves (the scripts give them about a window).")
                       .arg(keys.join(QStringLiteral(", ")));
    m_boundaryDetails->setText(details.join(QLatin1Char('\n')));
    m_boundaryChart->show(spec.limit, drawn);
}

void BurstPage::setStatus(const QString &text, bool problem)
{
    m_status->setText(text);
    m_status->setStyleSheet(problem ? problemStyle() : QString());
}

QString BurstPage::statusText() const
{
    return m_status->text();
}

// ---- export --------------------------------------------------------------------------------

void BurstPage::chooseExportFile(bool png)
{
    auto *dialog = new QFileDialog(this, png ? QStringLiteral("Export the chart") : QStringLiteral("Export the timeline"));
    dialog->setAcceptMode(QFileDialog::AcceptSave);
    dialog->setNameFilter(png ? QStringLiteral("PNG images (*.png)") : QStringLiteral("CSV files (*.csv)"));
    dialog->setDefaultSuffix(png ? QStringLiteral("png") : QStringLiteral("csv"));
    dialog->selectFile(png ? QStringLiteral("burst.png") : QStringLiteral("burst-timeline.csv"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QFileDialog::fileSelected, this, [this, png](const QString &path) {
        const QString error = png ? exportChartPng(path) : exportTimelineCsv(path);
        if (error.isEmpty())
            setStatus(QStringLiteral("Saved %1").arg(path));
        else
            setStatus(error, true);
    });
    dialog->open();
}

QString BurstPage::exportTimelineCsv(const QString &path) const
{
    if (!m_summary)
        return QStringLiteral("No burst has finished yet: nothing to export.");
    // Never half-written: QSaveFile writes a temporary file and renames it on commit.
    QSaveFile file(path);
    if (file.open(QIODevice::WriteOnly) && file.write(timelineCsv(m_summary->timeline)) >= 0 && file.commit())
        return {};
    return QStringLiteral("Cannot write the timeline to %1: %2").arg(path, file.errorString());
}

QString BurstPage::exportChartPng(const QString &path) const
{
    QWidget *chart = m_resultPages->currentIndex() == 1 ? static_cast<QWidget *>(m_boundaryChart) : static_cast<QWidget *>(m_timeline);
    const QPixmap image = chart->grab();
    QSaveFile file(path);
    if (file.open(QIODevice::WriteOnly) && image.save(&file, "PNG") && file.commit())
        return {};
    return QStringLiteral("Cannot write the chart to %1: %2").arg(path, file.errorString());
}

} // namespace ratescope::ui
