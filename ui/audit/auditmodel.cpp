#include "auditmodel.h"

#include "auditformat.h"
#include "displayformat.h"
#include "base/glob.h"

#include <QLocale>

namespace ratescope::ui {

AuditModel::AuditModel(QObject *parent)
    : QAbstractTableModel(parent)
    , m_now([] { return QDateTime::currentDateTimeUtc(); })
{
}

void AuditModel::reset(std::vector<AuditEntry> newestFirst, bool more)
{
    beginResetModel();
    m_entries = std::move(newestFirst);
    m_hasOlder = more;
    m_fetching = false;
    endResetModel();
    m_actions.clear();
    noteActions(m_entries, 0, qsizetype(m_entries.size()));
    emit actionsChanged();
}

void AuditModel::addNewer(const std::vector<AuditEntry> &oldestFirst)
{
    if (oldestFirst.empty())
        return;
    beginInsertRows({}, 0, int(oldestFirst.size()) - 1);
    m_entries.insert(m_entries.begin(), oldestFirst.rbegin(), oldestFirst.rend());
    endInsertRows();
    noteActions(m_entries, 0, qsizetype(oldestFirst.size()));
}

void AuditModel::addOlder(std::vector<AuditEntry> newestFirst, bool more)
{
    // Views and testers may call fetchMore() from the insertion signals: it stays closed until
    // the rows are in, or it would ask again for the page being inserted.
    if (!newestFirst.empty()) {
        const int first = int(m_entries.size());
        beginInsertRows({}, first, first + int(newestFirst.size()) - 1);
        m_entries.insert(m_entries.end(), std::make_move_iterator(newestFirst.begin()), std::make_move_iterator(newestFirst.end()));
        endInsertRows();
        noteActions(m_entries, first, qsizetype(m_entries.size()));
    }
    m_fetching = false;
    m_hasOlder = more;
}

void AuditModel::noteActions(const std::vector<AuditEntry> &entries, qsizetype from, qsizetype to)
{
    bool added = false;
    for (qsizetype i = from; i < to; ++i) {
        const QString &a = entries[size_t(i)].action;
        if (!a.isEmpty() && !m_actions.contains(a)) {
            m_actions << a;
            added = true;
        }
    }
    if (added) {
        m_actions.sort();
        emit actionsChanged();
    }
}

QStringList AuditModel::actions() const
{
    return m_actions;
}

int AuditModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_entries.size());
}

int AuditModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AuditModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
        case TimeColumn:
            return QStringLiteral("Time (local)");
        case ActorColumn:
            return QStringLiteral("Who");
        case HostColumn:
            return QStringLiteral("From host");
        case ActionColumn:
            return QStringLiteral("Action");
        case TargetColumn:
            return QStringLiteral("Target");
        case CountColumn:
            return QStringLiteral("Count");
        case ReasonColumn:
            return QStringLiteral("Reason");
        }
    } else if (role == Qt::ToolTipRole) {
        switch (section) {
        case ActorColumn:
            return QStringLiteral("The operator name given (--operator, the console's), then the OS user when it differs");
        case TargetColumn:
            return QStringLiteral("The key, key pattern (match:…) or policy name changed");
        case CountColumn:
            return QStringLiteral("Keys deleted by a reset, requests sent by a burst, 1 for a policy or override change");
        case ReasonColumn:
            return QStringLiteral("Why: the ticket number or sentence given with the change (--reason, the console's reason field)");
        }
    } else if (role == Qt::TextAlignmentRole) {
        return section == CountColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    }
    return {};
}

QString AuditModel::timeText(const QDateTime &time)
{
    return time.isValid() ? time.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) : QStringLiteral("?");
}

QString AuditModel::actorText(const AuditEntry &e)
{
    if (e.osUser.isEmpty() || e.osUser == e.actor)
        return auditText(e.actor);
    return QStringLiteral("%1 · %2").arg(auditText(e.actor), auditText(e.osUser));
}

namespace {

// Tooltips are read as rich text when they look like it: server text goes in escaped.
QString plainTip(const QString &text)
{
    return QStringLiteral("<qt>%1</qt>").arg(text.toHtmlEscaped().replace(QLatin1Char('\n'), QLatin1String("<br>")));
}

} // namespace

QVariant AuditModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= int(m_entries.size()))
        return {};
    const AuditEntry &e = m_entries[size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case TimeColumn:
            return timeText(e.time);
        case ActorColumn:
            return actorText(e);
        case HostColumn:
            return auditText(e.host);
        case ActionColumn:
            return auditText(e.action);
        case TargetColumn:
            return auditText(e.target);
        case CountColumn:
            return formatCount(e.count);
        case ReasonColumn:
            return auditText(e.reason);
        }
        return {};
    case Qt::ToolTipRole:
        switch (index.column()) {
        case TimeColumn:
            return plainTip(
                QStringLiteral("%1 UTC (%2)")
                    .arg(e.time.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz")), formatAgo(e.time.msecsTo(m_now()))));
        case ActorColumn:
            return plainTip(QStringLiteral("Operator: %1\nOS user: %2").arg(auditText(e.actor), auditText(e.osUser)));
        case TargetColumn:
            return plainTip(auditText(e.target));
        case ReasonColumn:
            return e.reason.isEmpty() ? QVariant() : QVariant(plainTip(auditText(e.reason)));
        }
        return {};
    case Qt::TextAlignmentRole:
        return index.column() == CountColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    case EntryRole:
        return index.row();
    }
    return {};
}

bool AuditModel::canFetchMore(const QModelIndex &parent) const
{
    return !parent.isValid() && m_hasOlder && !m_fetching;
}

void AuditModel::fetchMore(const QModelIndex &parent)
{
    if (!canFetchMore(parent))
        return;
    m_fetching = true;
    emit olderWanted();
}

bool AuditFilter::textMatches(const QString &filter, const QString &value)
{
    if (filter.isEmpty())
        return true;
    if (filter.contains(QLatin1Char('*')) || filter.contains(QLatin1Char('?')) || filter.contains(QLatin1Char('[')))
        return globMatch(filter.toUtf8(), value.toUtf8());
    return value.contains(filter, Qt::CaseInsensitive);
}

bool AuditFilter::matches(const AuditEntry &e) const
{
    if (!action.isEmpty() && e.action != action)
        return false;
    if (!actor.isEmpty() && !textMatches(actor, e.actor) && !textMatches(actor, e.osUser))
        return false;
    // The target as stored, or as shown (escaped) for one that is not plain text; or the reason
    // (a ticket number finds what was done for the ticket).
    if (!target.isEmpty() && !textMatches(target, e.target) && !textMatches(target, auditText(e.target)) &&
        (e.reason.isEmpty() || !textMatches(target, e.reason)))
        return false;
    if (from.isValid() && (!e.time.isValid() || e.time < from))
        return false;
    if (to.isValid() && (!e.time.isValid() || e.time > to))
        return false;
    return true;
}

AuditFilterModel::AuditFilterModel(AuditModel *source, QObject *parent)
    : QSortFilterProxyModel(parent)
    , m_source(source)
{
    setSourceModel(source);
    setDynamicSortFilter(true);
}

void AuditFilterModel::setFilter(const AuditFilter &filter)
{
    if (filter == m_filter)
        return;
    m_filter = filter;
    invalidateRowsFilter();
}

bool AuditFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    return !sourceParent.isValid() && m_filter.matches(m_source->entry(sourceRow));
}

bool AuditFilterModel::reachedFilterStart() const
{
    if (!m_filter.from.isValid() || m_source->size() == 0)
        return false;
    // Stream ids are the server's milliseconds, in order; entry times are the writer's clock,
    // so allow some skew before calling everything older out of range.
    const qint64 oldestMs = m_source->oldestId().section(QLatin1Char('-'), 0, 0).toLongLong();
    return oldestMs < m_filter.from.toMSecsSinceEpoch() - 10 * 60 * 1000;
}

bool AuditFilterModel::canFetchMore(const QModelIndex &parent) const
{
    return !parent.isValid() && !reachedFilterStart() && m_source->canFetchMore({});
}

} // namespace ratescope::ui
