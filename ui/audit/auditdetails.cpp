#include "auditdetails.h"

#include "auditformat.h"
#include "auditmodel.h"
#include "displayformat.h"
#include "fitwidth.h"

#include <QFontDatabase>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QTableWidget>
#include <QTextDocumentFragment>
#include <QTextOption>
#include <QVBoxLayout>

#include <algorithm>

namespace ratescope::ui {

namespace {

QLabel *plainLabel(QWidget *parent)
{
    auto *l = new QLabel(parent);
    l->setTextFormat(Qt::PlainText); // server text: never rich text
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return l;
}

// A hyphen is no place to wrap JSON: "acme-corporation-eu-west-1" broken after "acme-" reads as a
// word split by the layout. Shown with a word joiner (U+2060, invisible) after each hyphen, and
// copied without them: what is copied is the state as recorded.
constexpr QChar kWordJoiner(0x2060);

QString shownJson(QString json)
{
    return json.replace(QLatin1Char('-'), QStringLiteral("-") + kWordJoiner);
}

QString recordedJson(QString shown)
{
    return shown.remove(kWordJoiner);
}

class JsonView : public QPlainTextEdit {
public:
    using QPlainTextEdit::QPlainTextEdit;

protected:
    QMimeData *createMimeDataFromSelection() const override
    {
        auto *data = new QMimeData;
        data->setText(recordedJson(textCursor().selection().toPlainText()));
        return data;
    }
};

QPlainTextEdit *jsonView(QWidget *parent)
{
    auto *e = new JsonView(parent);
    e->setReadOnly(true);
    // Wrapped to the pane's width, a long value (a description, a list of keys) anywhere if it
    // must: beside the trail at 1024 px a pane is about 200 px wide, and scrolling each line
    // sideways to read it hid the rest of the state.
    e->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    e->setWordWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    e->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    e->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    return e;
}

QString countText(const AuditEntry &e)
{
    if (e.action == QLatin1String("reset"))
        return formatKeys(e.count) + QStringLiteral(" deleted");
    if (e.action == QLatin1String("burst"))
        return formatCount(e.count) + (e.count == 1 ? QStringLiteral(" request sent") : QStringLiteral(" requests sent"));
    if (e.action.startsWith(QLatin1String("policy.")) || e.action.startsWith(QLatin1String("override.")))
        return e.count == 0 ? QStringLiteral("nothing changed") : QString(); // one policy or override: nothing to add
    return QStringLiteral("count %1").arg(formatCount(e.count));
}

} // namespace

AuditDetails::AuditDetails(QWidget *parent)
    : QWidget(parent)
    , m_now([] { return QDateTime::currentDateTimeUtc(); })
{
    m_headline = plainLabel(this);
    QFont big = m_headline->font();
    big.setBold(true);
    big.setPointSizeF(big.pointSizeF() * 1.15);
    m_headline->setFont(big);
    m_facts = plainLabel(this);
    m_facts->setWordWrap(true);

    m_changesTitle = new QLabel(QStringLiteral("<b>Changed fields</b>"), this);
    m_changes = new QTableWidget(0, 3, this);
    m_changes->setHorizontalHeaderLabels({QStringLiteral("Field"), QStringLiteral("Before"), QStringLiteral("After")});
    m_changes->verticalHeader()->hide();
    m_changes->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_changes->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
    m_changes->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_changes->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    m_changes->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_changes->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_changes->setShowGrid(false);
    m_changes->setWordWrap(false);
    m_changes->setAlternatingRowColors(true);
    // The columns share the width (below); a value too long for its cell is elided, whole in
    // its tooltip, never scrolled to sideways.
    m_changes->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    const int em = fontMetrics().horizontalAdvance(QLatin1Char('m'));
    m_changes->horizontalHeader()->resizeSection(0, 7 * em);
    // Before and after share what the field's name leaves, so that neither is pushed out of view;
    // the name gives up width first in a narrow pane (a third of it at most), and no column
    // insists on more than 3 em, so the three always fit.
    m_changes->horizontalHeader()->setMinimumSectionSize(3 * em);
    m_changes->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    m_changes->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
    fitOnResize(m_changes, [this, em] {
        m_changes->horizontalHeader()->resizeSection(0, std::clamp(m_changes->viewport()->width() / 3, 3 * em, 7 * em));
    });

    m_before = jsonView(this);
    m_after = jsonView(this);

    m_states = new QWidget(this);
    auto *grid = new QGridLayout(m_states);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->addWidget(m_changesTitle, 0, 0);
    m_beforeTitle = new QLabel(this);
    m_afterTitle = new QLabel(this);
    grid->addWidget(m_beforeTitle, 0, 1);
    grid->addWidget(m_afterTitle, 0, 2);
    grid->addWidget(m_changes, 1, 0);
    grid->addWidget(m_before, 1, 1);
    grid->addWidget(m_after, 1, 2);
    grid->setColumnStretch(0, 5);
    grid->setColumnStretch(1, 4);
    grid->setColumnStretch(2, 4);
    grid->setRowStretch(1, 1);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 4, 0, 0);
    layout->addWidget(m_headline);
    layout->addWidget(m_facts);
    layout->addWidget(m_states, 1);
    layout->addStretch(0);
    clear();
}

void AuditDetails::clear()
{
    m_headline->setText(QStringLiteral("No entry selected"));
    m_facts->setText(QStringLiteral("Select an entry to see who made the change, from where, and the state before and after it."));
    m_changes->setRowCount(0);
    m_before->clear();
    m_after->clear();
    m_states->hide();
}

void AuditDetails::showEntry(const AuditEntry &e)
{
    m_headline->setText(QStringLiteral("%1 · %2").arg(auditText(e.action), auditText(e.target)));
    QStringList who;
    who << QStringLiteral("By %1").arg(auditText(e.actor));
    if (!e.osUser.isEmpty() && e.osUser != e.actor)
        who << QStringLiteral("OS user %1").arg(auditText(e.osUser));
    who << QStringLiteral("on host %1").arg(auditText(e.host));
    const qint64 ago = e.time.secsTo(m_now());
    const QString when = QStringLiteral("%1 local (%2 UTC%3)")
                             .arg(AuditModel::timeText(e.time), e.time.toUTC().toString(QStringLiteral("HH:mm:ss")),
                                  ago >= 0 ? QStringLiteral(", ") + formatAgo(ago * 1000) : QString());
    const QString count = countText(e);
    m_facts->setText(QStringLiteral("%1 · %2\n%3entry %4%5")
                         .arg(who.join(QStringLiteral(", ")), when, count.isEmpty() ? QString() : count + QStringLiteral(" · "), e.id,
                              e.reason.isEmpty() ? QString() : QStringLiteral("\nReason: ") + auditText(e.reason)));
    // A burst records what was asked for and what came of it, not a state before and after.
    const bool run = e.action == QLatin1String("burst");
    const QString beforeName = run ? QStringLiteral("Parameters") : QStringLiteral("Before");
    const QString afterName = run ? QStringLiteral("Results") : QStringLiteral("After");
    m_beforeTitle->setText(QStringLiteral("<b>%1</b>").arg(beforeName));
    m_afterTitle->setText(QStringLiteral("<b>%1</b>").arg(afterName));
    m_changes->setHorizontalHeaderLabels({QStringLiteral("Field"), beforeName, afterName});

    const std::vector<FieldChange> changes = changedFields(e.before, e.after);
    m_changes->setRowCount(int(changes.size()));
    const QString absent = QStringLiteral("—");
    for (int r = 0; r < int(changes.size()); ++r) {
        const FieldChange &c = changes[size_t(r)];
        m_changes->setItem(r, 0, new QTableWidgetItem(c.field));
        for (const auto &[column, text] : {std::pair{1, c.before}, std::pair{2, c.after}}) {
            auto *item = new QTableWidgetItem(text.isEmpty() ? absent : text);
            item->setToolTip(plainToolTip(text)); // the whole value, where the cell elides it
            m_changes->setItem(r, column, item);
        }
    }
    m_changesTitle->setText(changes.empty() ? QStringLiteral("<b>Changed fields</b> (none)")
                                            : QStringLiteral("<b>Changed fields</b> (%1)").arg(changes.size()));
    m_before->setPlainText(e.before.isEmpty() ? QStringLiteral("(none)") : shownJson(prettyAuditJson(e.before)));
    m_after->setPlainText(e.after.isEmpty() ? QStringLiteral("(none)") : shownJson(prettyAuditJson(e.after)));
    m_states->show();
}

QString AuditDetails::headline() const
{
    return m_headline->text();
}

QString AuditDetails::facts() const
{
    return m_facts->text();
}

QString AuditDetails::beforeText() const
{
    return recordedJson(m_before->toPlainText());
}

QString AuditDetails::afterText() const
{
    return recordedJson(m_after->toPlainText());
}

} // namespace ratescope::ui
