#include "policyeditor.h"

#include "editorfields.h"

#include "displayformat.h"
#include "limittext.h"
#include "base/duration.h"
#include "base/errors.h"
#include "base/keytext.h"
#include "formats/formatreaders.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QFrame>
#include <QGroupBox>
#include <QAbstractItemView>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace ratescope::ui {

QString policySummary(const Policy &p)
{
    QString s = QStringLiteral("%1, %2 on %3").arg(algorithmLabel(p.spec), formatLimit(p.spec), displayKey(p.match));
    if (!p.enforced)
        s += QStringLiteral(" · declared only");
    if (!p.description.isEmpty())
        s += QStringLiteral(" · “%1”").arg(p.description);
    return s;
}

PolicyEditor::PolicyEditor(QWidget *parent)
    : QWidget(parent)
{
    m_title = plainLabel();
    QFont titleFont = m_title->font();
    titleFont.setBold(true);
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.2);
    m_title->setFont(titleFont);

    m_name = new QLineEdit;
    m_name->setPlaceholderText(QStringLiteral("e.g. api-default"));
    m_match = new QLineEdit;
    m_match->setPlaceholderText(QStringLiteral("key glob, e.g. api:*  (a plain key matches only itself)"));
    m_algorithm = new QComboBox;
    for (Algorithm a : kAllAlgorithms)
        m_algorithm->addItem(algorithmName(a), int(a));
    m_limit = new QLineEdit;
    m_limit->setPlaceholderText(QStringLiteral("requests (units of cost) per window"));
    m_window = new QLineEdit;
    m_window->setPlaceholderText(QStringLiteral("e.g. 10s, 1m, 1h"));
    m_cost = new QLineEdit(QStringLiteral("1"));
    m_buckets = new QSpinBox;
    m_buckets->setRange(kMinBuckets, kMaxBuckets);
    m_buckets->setValue(kDefaultBuckets);
    m_buckets->setToolTip(QStringLiteral("sliding-buckets: the window is kept as this many clock-aligned sub-buckets (memory per limiter "
                                         "grows with them; with traffic spread over the window, at most limit × (1 + 1/B) pass in "
                                         "any window-long span). Changing it starts the limiters' counts afresh."));
    // Shards: 1 reads "not sharded" (a policy's shards are 0, or 2 .. 1024).
    m_shardsBox = new QSpinBox;
    m_shardsBox->setRange(1, kMaxPolicyShards);
    m_shardsBox->setSpecialValueText(QStringLiteral("not sharded"));
    m_shardsBox->setValue(1);
    m_shardsBox->setToolTip(QStringLiteral("The keys it matches are N shards <base>:0 .. <base>:N-1 of one limiter, sharing its "
                                           "limit (each shard limit / N), as ratescope-cli policy set --shards N"));
    m_scoreUnit = new QComboBox;
    for (ScoreUnit u : {ScoreUnit::Auto, ScoreUnit::Seconds, ScoreUnit::Milliseconds, ScoreUnit::Microseconds})
        m_scoreUnit->addItem(scoreUnitName(u), int(u));
    m_scoreUnit->setToolTip(QStringLiteral("How the scores of other services' sorted-set logs count time"));
    m_format = new QComboBox;
    m_format->addItem(QStringLiteral("by key shape"), QString());
    for (const FormatReader *f : formatReaders())
        m_format->addItem(QStringLiteral("%1 (%2)").arg(f->name(), f->keyShape()), f->name());
    m_format->setToolTip(QStringLiteral("Another library's format the matching keys are read as, for key shapes that need saying"));
    // As narrow as the form allows (the longest shape would set the editor's width, and make
    // it scroll sideways beside the tables); the list that drops down shows them whole.
    m_format->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_format->setMinimumContentsLength(14);
    m_format->view()->setMinimumWidth(m_format->view()->sizeHintForColumn(0) + 24);
    m_description = new QLineEdit;
    m_enforced = new QCheckBox(QStringLiteral("Enforced by services (else declared only)"));
    m_enforced->setToolTip(QStringLiteral("Services enforce it through Ratescope; unticked, it is declared for inspection only"));
    m_enforced->setChecked(true);

    m_nameProblem = problemLabelFor(this);
    m_matchProblem = problemLabelFor(this);
    m_limitProblem = problemLabelFor(this);
    m_windowProblem = problemLabelFor(this);
    m_costProblem = problemLabelFor(this);

    auto *form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
    auto addField = [form](const QString &label, QWidget *field, QLabel *problem) { addFieldRow(form, label, field, problem); };
    addField(QStringLiteral("Name"), m_name, m_nameProblem);
    addField(QStringLiteral("Keys"), m_match, m_matchProblem);
    addField(QStringLiteral("Algorithm"), m_algorithm, nullptr);
    addField(QStringLiteral("Limit"), m_limit, m_limitProblem);
    addField(QStringLiteral("Window"), m_window, m_windowProblem);
    addField(QStringLiteral("Cost per request"), m_cost, m_costProblem);
    addField(QStringLiteral("Sub-buckets"), m_buckets, nullptr);
    addField(QStringLiteral("Shards"), m_shardsBox, nullptr);
    addField(QStringLiteral("Score unit"), m_scoreUnit, nullptr);
    addField(QStringLiteral("Format"), m_format, nullptr);
    addField(QStringLiteral("Description"), m_description, nullptr);
    form->addRow(QString(), m_enforced);

    // What the pattern matches now, and what the proposed limits would do to those keys.
    auto *preview = new QGroupBox(QStringLiteral("Keys this pattern matches"));
    auto *pv = new QVBoxLayout(preview);
    m_previewSummary = plainLabel(QStringLiteral("Type a pattern to see the keys it matches."));
    m_previewList = new QListWidget;
    m_previewList->setUniformItemSizes(true);
    m_previewList->setSelectionMode(QAbstractItemView::NoSelection);
    m_previewList->setMinimumHeight(110);
    m_effect = plainLabel();
    QFont effectFont = m_effect->font();
    effectFont.setBold(true);
    m_effect->setFont(effectFont);
    m_previewTraffic = new QPushButton(QStringLiteral("Preview on recent traffic"));
    m_previewTraffic->setObjectName(QStringLiteral("previewTraffic"));
    pv->addWidget(m_previewSummary);
    pv->addWidget(m_previewList, 1);
    auto *effectRow = new QHBoxLayout;
    effectRow->addWidget(m_effect, 1);
    effectRow->addWidget(m_previewTraffic, 0, Qt::AlignTop);
    pv->addLayout(effectRow);

    // A stale-version conflict: theirs beside mine, mine kept.
    m_conflict = new QFrame;
    m_conflict->setFrameShape(QFrame::StyledPanel);
    auto *cv = new QVBoxLayout(m_conflict);
    m_conflictText = problemLabelFor(this);
    m_conflictText->show();
    m_theirsText = plainLabel();
    m_mineText = plainLabel();
    m_applyMine = new QPushButton(QStringLiteral("Apply mine on top"));
    m_applyMine->setToolTip(QStringLiteral("Save your edit over the server's current version"));
    m_takeTheirs = new QPushButton(QStringLiteral("Discard mine, take theirs"));
    auto *cb = new QHBoxLayout;
    cb->addWidget(m_applyMine);
    cb->addWidget(m_takeTheirs);
    cb->addStretch();
    cv->addWidget(m_conflictText);
    cv->addWidget(m_theirsText);
    cv->addWidget(m_mineText);
    cv->addLayout(cb);
    m_conflict->hide();

    m_status = plainLabel();
    m_status->hide();
    m_save = new QPushButton(QStringLiteral("Save"));
    m_save->setDefault(true);
    m_delete = new QPushButton(QStringLiteral("Delete policy…"));
    m_close = new QPushButton(QStringLiteral("Close"));
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_delete);
    buttons->addStretch();
    buttons->addWidget(m_close);
    buttons->addWidget(m_save);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_title);
    layout->addLayout(form);
    layout->addWidget(m_conflict);
    layout->addWidget(preview, 1);
    layout->addWidget(m_status);
    layout->addLayout(buttons);

    for (QLineEdit *e : {m_name, m_limit, m_window, m_cost, m_description})
        connect(e, &QLineEdit::textChanged, this, &PolicyEditor::revalidate);
    for (QLineEdit *e : {m_limit, m_window, m_cost})
        connect(e, &QLineEdit::textChanged, this, &PolicyEditor::limitsChanged);
    connect(m_match, &QLineEdit::textChanged, this, [this] {
        revalidate();
        emit globChanged(m_match->text().toUtf8());
    });
    connect(m_algorithm, &QComboBox::currentIndexChanged, this, [this] {
        m_buckets->setEnabled(Algorithm(m_algorithm->currentData().toInt()) == Algorithm::SlidingBuckets);
        revalidate();
        emit limitsChanged();
    });
    connect(m_shardsBox, &QSpinBox::valueChanged, this, [this] {
        revalidate();
        emit limitsChanged();
    });
    connect(m_buckets, &QSpinBox::valueChanged, this, [this] {
        revalidate();
        emit limitsChanged();
    });
    m_buckets->setEnabled(false);
    connect(m_save, &QPushButton::clicked, this, &PolicyEditor::saveRequested);
    connect(m_delete, &QPushButton::clicked, this, &PolicyEditor::deleteRequested);
    connect(m_close, &QPushButton::clicked, this, &PolicyEditor::closeRequested);
    connect(m_applyMine, &QPushButton::clicked, this, &PolicyEditor::applyMineRequested);
    connect(m_takeTheirs, &QPushButton::clicked, this, &PolicyEditor::takeTheirsRequested);
    connect(m_previewTraffic, &QPushButton::clicked, this, &PolicyEditor::previewTrafficRequested);
}

void PolicyEditor::edit(const std::optional<Policy> &existing, const Policy &initial)
{
    const Policy &p = existing ? *existing : initial;
    m_basedOn = existing ? existing->version : 0;
    m_originalName = existing ? existing->name : QString();
    m_title->setText(existing ? QStringLiteral("Policy “%1” (version %2, changed by %3)").arg(p.name).arg(p.version).arg(p.updatedBy)
                              : QStringLiteral("New policy"));
    clearConflict();
    setStatus({}, false);
    const QSignalBlocker b1(m_match); // one globChanged below, not one per field
    m_name->setText(p.name);
    m_name->setReadOnly(existing.has_value()); // the name is the policy's identity: renaming is a new policy
    m_name->setToolTip(existing ? QStringLiteral("The name identifies the policy; to rename it, create a new one and delete this")
                                : QString());
    m_match->setText(QString::fromUtf8(p.match));
    m_algorithm->setCurrentIndex(m_algorithm->findData(int(p.spec.algorithm)));
    m_limit->setText(p.spec.limit ? QString::number(p.spec.limit) : QString());
    m_window->setText(p.spec.windowUs ? formatDurationUs(p.spec.windowUs) : QString());
    m_cost->setText(QString::number(std::max<qint64>(1, p.spec.cost)));
    m_buckets->setValue(p.spec.buckets);
    m_buckets->setEnabled(p.spec.algorithm == Algorithm::SlidingBuckets);
    m_scoreUnit->setCurrentIndex(m_scoreUnit->findData(int(p.scoreUnit)));
    m_format->setCurrentIndex(std::max(0, m_format->findData(p.format)));
    m_shardsBox->setValue(p.shards >= 2 ? p.shards : 1);
    m_description->setText(p.description);
    for (QLineEdit *e : {m_name, m_match, m_description})
        e->setCursorPosition(0); // a long text read from its start
    m_enforced->setChecked(p.enforced);
    m_previewList->clear();
    m_previewSummary->setText(QStringLiteral("Reading the keys this pattern matches…"));
    m_effect->clear();
    revalidate();
    emit globChanged(p.match);
}

Policy PolicyEditor::proposed() const
{
    Policy p;
    p.name = m_name->text();
    p.match = m_match->text().toUtf8();
    p.spec.algorithm = Algorithm(m_algorithm->currentData().toInt());
    p.spec.limit = parseLimitField(m_limit->text()).value.value_or(0);
    p.spec.windowUs = parseWindowField(m_window->text()).value.value_or(0);
    p.spec.cost = parseCostField(m_cost->text()).value.value_or(0);
    p.spec.buckets = m_buckets->value();
    p.scoreUnit = ScoreUnit(m_scoreUnit->currentData().toInt());
    p.format = m_format->currentData().toString();
    p.shards = m_shardsBox->value() >= 2 ? m_shardsBox->value() : 0;
    p.description = m_description->text();
    p.enforced = m_enforced->isChecked();
    return p;
}

std::vector<PolicyProblem> PolicyEditor::problems() const
{
    std::vector<PolicyProblem> found = proposed().problems();
    // What cannot even be parsed says so in the parser's words, before the range checks.
    auto replace = [&](PolicyField field, const QString &message) {
        std::erase_if(found, [&](const PolicyProblem &p) { return p.field == field; });
        found.push_back({field, message});
    };
    for (const auto &[field, value] : {std::pair(PolicyField::Limit, parseLimitField(m_limit->text())),
                                       std::pair(PolicyField::Cost, parseCostField(m_cost->text())),
                                       std::pair(PolicyField::Window, parseWindowField(m_window->text()))})
        if (!value.value)
            replace(field, value.problem);
    return found;
}

std::optional<LimitSpec> PolicyEditor::proposedSpec() const
{
    for (const PolicyProblem &p : problems())
        if (p.field != PolicyField::Name && p.field != PolicyField::Match)
            return std::nullopt;
    return proposed().spec;
}

QLabel *PolicyEditor::problemLabel(PolicyField field) const
{
    switch (field) {
    case PolicyField::Name:
        return m_nameProblem;
    case PolicyField::Match:
    case PolicyField::Format:
        return m_matchProblem;
    case PolicyField::Limit:
        return m_limitProblem;
    case PolicyField::Window:
        return m_windowProblem;
    case PolicyField::Cost:
        return m_costProblem;
    }
    return nullptr;
}

void PolicyEditor::revalidate()
{
    const auto found = problems();
    for (PolicyField f : {PolicyField::Name, PolicyField::Match, PolicyField::Limit, PolicyField::Window, PolicyField::Cost}) {
        QStringList messages;
        for (const PolicyProblem &p : found)
            if (p.field == f)
                messages << p.message;
        QLabel *l = problemLabel(f);
        l->setText(messages.join(QLatin1Char('\n')));
        l->setVisible(!messages.isEmpty());
    }
    if (m_conflict->isVisible())
        m_mineText->setText(QStringLiteral("Yours: %1").arg(policySummary(proposed())));
    updateButtons();
}

void PolicyEditor::setWritable(bool writable, const QString &why)
{
    m_writable = writable;
    m_whyNot = why;
    updateButtons();
}

void PolicyEditor::updateButtons()
{
    const bool valid = problems().empty();
    m_save->setEnabled(m_writable && valid && !hasConflict());
    m_save->setToolTip(!m_writable     ? m_whyNot
                       : !valid        ? QStringLiteral("Correct the fields marked first")
                       : hasConflict() ? QStringLiteral("Someone else changed this policy: apply yours on top, or take theirs")
                                       : QStringLiteral("Save (based on version %1)").arg(m_basedOn));
    m_delete->setVisible(!isNew());
    m_delete->setEnabled(m_writable);
    m_delete->setToolTip(m_writable ? QString() : m_whyNot);
    m_applyMine->setEnabled(m_writable && valid);
    m_applyMine->setToolTip(m_writable ? QStringLiteral("Save your edit over the server's current version") : m_whyNot);
    // Replaying writes nothing to the server: offered whether or not changes are allowed.
    const bool replayable = proposedSpec().has_value() && !m_match->text().isEmpty();
    m_previewTraffic->setEnabled(replayable);
    m_previewTraffic->setToolTip(replayable ? QStringLiteral("Replay the recent requests of the keys this pattern matches (their "
                                                             "logs) against the policy as stored and as edited, in the What-if "
                                                             "tab, in a private sandbox: nothing is written to this server")
                                            : QStringLiteral("Give the pattern and valid limits first"));
}

void PolicyEditor::setPreview(const QString &summary, const QStringList &shownKeys)
{
    m_previewSummary->setText(summary);
    m_previewList->clear();
    m_previewList->addItems(shownKeys); // QListWidget items are plain text
}

void PolicyEditor::setEffect(const QString &text)
{
    m_effect->setText(text);
}

void PolicyEditor::setStatus(const QString &text, bool problem)
{
    QPalette pal = palette();
    if (problem)
        pal.setColor(QPalette::WindowText, problemColor(palette()));
    m_status->setPalette(pal);
    m_status->setText(text);
    m_status->setVisible(!text.isEmpty());
}

void PolicyEditor::showConflict(const QString &message, const std::optional<Policy> &theirs)
{
    m_theirs = theirs;
    m_conflictText->setText(message);
    m_theirsText->setText(theirs
                              ? QStringLiteral("Theirs (version %1 by %2 at %3): %4")
                                    .arg(theirs->version)
                                    .arg(theirs->updatedBy, theirs->updatedAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")),
                                         policySummary(*theirs))
                              : QStringLiteral("Theirs: deleted"));
    m_mineText->setText(QStringLiteral("Yours: %1").arg(policySummary(proposed())));
    m_takeTheirs->setText(theirs ? QStringLiteral("Discard mine, take theirs") : QStringLiteral("Discard mine"));
    m_conflict->show();
    updateButtons();
}

void PolicyEditor::clearConflict()
{
    m_theirs.reset();
    m_conflict->hide();
    updateButtons();
}

bool PolicyEditor::hasConflict() const
{
    return !m_conflict->isHidden();
}

} // namespace ratescope::ui
