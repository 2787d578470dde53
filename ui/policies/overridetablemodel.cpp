#include "overridetablemodel.h"

#include "displayformat.h"
#include "base/keytext.h"

namespace ratescope::ui {

OverrideTableModel::OverrideTableModel(QObject *parent)
    : QAbstractTableModel(parent)
    , m_now(QDateTime::currentDateTimeUtc())
{
}

void OverrideTableModel::setOverrides(std::vector<Override> overrides)
{
    beginResetModel(); // a handful of rows, replaced whole
    m_overrides = std::move(overrides);
    endResetModel();
}

void OverrideTableModel::setNow(const QDateTime &now)
{
    m_now = now;
    if (!m_overrides.empty())
        emit dataChanged(index(0, ExpiresColumn), index(rowCount() - 1, ExpiresColumn), {Qt::DisplayRole, Qt::ToolTipRole});
}

QString OverrideTableModel::countdown(qint64 ms)
{
    if (ms <= 0)
        return QStringLiteral("expired");
    const qint64 s = (ms + 999) / 1000;
    const auto two = [](qint64 v) { return QStringLiteral("%1").arg(v, 2, 10, QLatin1Char('0')); };
    if (s < 60)
        return QStringLiteral("%1 s").arg(s);
    if (s < 3600)
        return QStringLiteral("%1 m %2 s").arg(s / 60).arg(two(s % 60));
    if (s < 86400)
        return QStringLiteral("%1 h %2 m %3 s").arg(s / 3600).arg(two(s % 3600 / 60), two(s % 60));
    return QStringLiteral("%1 d %2 h %3 m").arg(s / 86400).arg(s % 86400 / 3600).arg(two(s % 3600 / 60));
}

int OverrideTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_overrides.size());
}

int OverrideTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant OverrideTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case KeyColumn:
        return QStringLiteral("Key");
    case LimitColumn:
        return QStringLiteral("Temporary limit");
    case SetByColumn:
        return QStringLiteral("Granted by");
    case ExpiresColumn:
        return QStringLiteral("Expires in");
    }
    return {};
}

QVariant OverrideTableModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= int(m_overrides.size()))
        return {};
    const Override &o = m_overrides[size_t(index.row())];
    if (role == Qt::ToolTipRole) {
        switch (index.column()) {
        case KeyColumn: // all of the row: the page hides the columns that do not fit
            return plainToolTip(QStringLiteral("%1\n%2, expires at %3\ngranted by %4 at %5")
                                    .arg(displayKey(o.key), data(index.siblingAtColumn(LimitColumn)).toString(),
                                         o.expiresAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")), o.setBy,
                                         o.setAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))));
        case SetByColumn:
            return plainToolTip(
                QStringLiteral("granted by %1 at %2").arg(o.setBy, o.setAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))));
        case ExpiresColumn:
            return QStringLiteral("expires at %1 (it removes itself; nobody needs to clear it)")
                .arg(o.expiresAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")));
        }
        return {};
    }
    if (role == Qt::TextAlignmentRole && index.column() == ExpiresColumn)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case KeyColumn:
        return displayKey(o.key);
    case LimitColumn:
        return o.windowUs ? formatLimit({Algorithm::SlidingLog, o.limit, o.windowUs, 1})
                          : QStringLiteral("%1 per policy window").arg(formatCount(o.limit));
    case SetByColumn:
        return o.setBy;
    case ExpiresColumn:
        return countdown(m_now.msecsTo(o.expiresAt));
    }
    return {};
}

} // namespace ratescope::ui
