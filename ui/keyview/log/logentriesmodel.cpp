#include "logentriesmodel.h"

#include "displayformat.h"

#include <QDateTime>

namespace ratescope::ui {

LogEntriesModel::LogEntriesModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

void LogEntriesModel::setPage(std::vector<LogEntry> entries, qint64 offset, qint64 total, qint64 nowUs)
{
    // A page replaces the previous one whole: rows are positions in a range that slid meanwhile.
    beginResetModel();
    m_entries = std::move(entries);
    m_offset = offset;
    m_total = total;
    m_nowUs = nowUs;
    endResetModel();
}

int LogEntriesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_entries.size());
}

int LogEntriesModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LogEntriesModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount)
        return {};
    const LogEntry &e = m_entries[size_t(index.row())];
    if (role == TimeUsRole)
        return e.timeUs;
    if (role == Qt::TextAlignmentRole)
        return index.column() == Age ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && index.column() == Time)
        return QStringLiteral("%1 µs since the epoch").arg(e.timeUs);
    if (role == Qt::ToolTipRole && index.column() == Member) // whole, where a narrow column elides it
        return plainToolTip(QString::fromUtf8(e.member));
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case Time:
        return QDateTime::fromMSecsSinceEpoch(e.timeUs / 1000).toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"));
    case Age:
        // Entries newer than the clock drawn against (another writer's clock ahead) show as such.
        // Rounded to the ms the time column shows.
        return m_nowUs >= e.timeUs ? formatSpan((m_nowUs - e.timeUs + 500) / 1000 * 1000)
                                   : QStringLiteral("in %1").arg(formatSpan((e.timeUs - m_nowUs + 500) / 1000 * 1000));
    case Member:
        return QString::fromUtf8(e.member);
    case Cost:
        return e.cost;
    }
    return {};
}

QVariant LogEntriesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (role != Qt::DisplayRole)
        return {};
    if (orientation == Qt::Vertical)
        return section >= 0 && section < rowCount() ? QVariant(m_offset + section + 1) : QVariant();
    switch (section) {
    case Time:
        return tr("Admitted at (local time)");
    case Age:
        return tr("Age");
    case Member:
        return tr("Member");
    case Cost:
        return tr("Cost");
    }
    return {};
}

} // namespace ratescope::ui
