#include "monitorlegendmodel.h"

#include "displayformat.h"

#include <QBrush>
#include <QFont>
#include <QGuiApplication>
#include <QPalette>

namespace ratescope::ui {

MonitorLegendModel::MonitorLegendModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

int MonitorLegendModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int MonitorLegendModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant MonitorLegendModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const LegendRow &r = m_rows[size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case KeyColumn:
            return r.shownKey;
        case KindColumn:
            return r.kind;
        case CurrentColumn:
            return r.current;
        case StatusColumn:
            return r.status;
        }
        break;
    case Qt::ToolTipRole:
        if (index.column() == KeyColumn)
            return plainToolTip(r.shownKey);
        if (index.column() == StatusColumn && !r.status.isEmpty())
            return plainToolTip(r.status);
        break;
    case Qt::DecorationRole:
        if (index.column() == KeyColumn)
            return r.drawn ? r.color : QGuiApplication::palette().color(QPalette::Disabled, QPalette::WindowText);
        break;
    case Qt::ForegroundRole:
        if (!r.drawn && index.column() != KindColumn)
            return QBrush(QGuiApplication::palette().color(QPalette::PlaceholderText));
        break;
    case Qt::FontRole:
        if (r.denied && index.column() == StatusColumn) {
            QFont f;
            f.setBold(true);
            return f;
        }
        break;
    case Qt::TextAlignmentRole:
        if (index.column() == CurrentColumn)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        break;
    case KeyRole:
        return r.key;
    }
    return {};
}

QVariant MonitorLegendModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case KeyColumn:
        return QStringLiteral("Key");
    case KindColumn:
        return QStringLiteral("Algorithm");
    case CurrentColumn:
        return QStringLiteral("Remaining / limit");
    case StatusColumn:
        return QStringLiteral("Now");
    }
    return {};
}

void MonitorLegendModel::append(const LegendRow &row)
{
    const int at = int(m_rows.size());
    beginInsertRows({}, at, at);
    m_rows.push_back(row);
    endInsertRows();
}

void MonitorLegendModel::remove(int row)
{
    beginRemoveRows({}, row, row);
    m_rows.erase(m_rows.begin() + row);
    endRemoveRows();
}

void MonitorLegendModel::update(int row, const LegendRow &value)
{
    LegendRow &r = m_rows[size_t(row)];
    const bool whole = r.drawn != value.drawn || r.denied != value.denied || r.color != value.color || r.shownKey != value.shownKey;
    int first = ColumnCount, last = -1;
    auto changed = [&](int column, bool differs) {
        if (differs || whole) {
            first = std::min(first, column);
            last = std::max(last, column);
        }
    };
    changed(KeyColumn, false);
    changed(KindColumn, r.kind != value.kind);
    changed(CurrentColumn, r.current != value.current);
    changed(StatusColumn, r.status != value.status);
    r = value;
    if (last >= 0)
        emit dataChanged(index(row, first), index(row, last));
}

} // namespace ratescope::ui
