#include "policytablemodel.h"

#include "displayformat.h"
#include "base/keytext.h"

namespace ratescope::ui {

PolicyTableModel::PolicyTableModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

void PolicyTableModel::setPolicies(std::vector<Policy> policies)
{
    beginResetModel(); // a handful of rows, replaced whole
    m_policies = std::move(policies);
    endResetModel();
}

int PolicyTableModel::rowOf(const QString &name) const
{
    for (size_t i = 0; i < m_policies.size(); ++i)
        if (m_policies[i].name == name)
            return int(i);
    return -1;
}

int PolicyTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_policies.size());
}

int PolicyTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant PolicyTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NameColumn:
        return QStringLiteral("Policy");
    case MatchColumn:
        return QStringLiteral("Keys");
    case AlgorithmColumn:
        return QStringLiteral("Algorithm");
    case LimitColumn:
        return QStringLiteral("Limit");
    case EnforcedColumn:
        return QStringLiteral("Enforced");
    }
    return {};
}

QVariant PolicyTableModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= int(m_policies.size()))
        return {};
    const Policy &p = m_policies[size_t(index.row())];
    if (role == Qt::ToolTipRole) {
        // All of the row first: a narrow page hides the columns that do not fit.
        QString tip = QStringLiteral("%1: %2, %3 · %4\n")
                          .arg(data(index.siblingAtColumn(MatchColumn)).toString(), data(index.siblingAtColumn(LimitColumn)).toString(),
                               data(index.siblingAtColumn(AlgorithmColumn)).toString(),
                               p.enforced ? QStringLiteral("enforced") : QStringLiteral("declared, not enforced"));
        if (!p.description.isEmpty())
            tip += p.description + QLatin1Char('\n');
        tip += QStringLiteral("version %1").arg(p.version);
        if (p.updatedAt.isValid())
            tip += QStringLiteral(", changed by %1 at %2")
                       .arg(p.updatedBy, p.updatedAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")));
        // Descriptions and names come from the server: escaped, so a tooltip never renders them.
        return QStringLiteral("<qt>%1</qt>").arg(tip.toHtmlEscaped().replace(QLatin1Char('\n'), QLatin1String("<br>")));
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case NameColumn:
        return p.name;
    case MatchColumn:
        return displayKey(p.match); // a pattern is bytes like a key: shown the same, escaped
    case AlgorithmColumn:
        return p.scoreUnit == ScoreUnit::Auto ? algorithmLabel(p.spec)
                                              : QStringLiteral("%1 (%2)").arg(algorithmName(p.spec.algorithm), scoreUnitName(p.scoreUnit));
    case LimitColumn:
        return formatLimit(p.spec);
    case EnforcedColumn:
        return p.enforced ? QStringLiteral("yes") : QStringLiteral("no, declared");
    }
    return {};
}

} // namespace ratescope::ui
