#include "whatifkeymodel.h"

#include "displayformat.h"
#include "base/keytext.h"

#include <QDateTime>

namespace ratescope::ui {

namespace {

// Times after 2001 are wall-clock times (a log's); smaller ones are a file's own clock.
constexpr qint64 kEpochLikeUs = 1000000000LL * 1000000;

} // namespace

WhatIfKeyModel::WhatIfKeyModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

void WhatIfKeyModel::setResult(const QStringList &specNames, std::vector<WhatIfKey> keys, qint64 traceStartUs)
{
    beginResetModel();
    m_specNames = specNames;
    m_keys = std::move(keys);
    for (WhatIfKey &k : m_keys)
        k.specs.resize(size_t(m_specNames.size()));
    m_startUs = traceStartUs;
    endResetModel();
}

void WhatIfKeyModel::clear()
{
    setResult(m_specNames, {}, 0);
}

int WhatIfKeyModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_keys.size());
}

int WhatIfKeyModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : FirstSpecColumn + int(m_specNames.size()) * kColumnsPerSpec;
}

QVariant WhatIfKeyModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const WhatIfKey &k = m_keys[size_t(index.row())];
    const int column = index.column();
    if (role == KeyRole)
        return k.key;
    if (column == KeyColumn) {
        if (role == Qt::DisplayRole)
            return displayKey(k.key);
        if (role == SortRole)
            return displayKey(k.key);
        if (role == Qt::ToolTipRole)
            return plainToolTip(displayKey(k.key));
        return {};
    }
    if (role == Qt::TextAlignmentRole)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (column == RequestsColumn) {
        if (role == Qt::DisplayRole)
            return formatCount(k.requests);
        if (role == SortRole)
            return k.requests;
        return {};
    }
    const int spec = (column - FirstSpecColumn) / kColumnsPerSpec;
    const WhatIfKey::PerSpec &s = k.specs[size_t(spec)];
    const bool deniedColumn = (column - FirstSpecColumn) % kColumnsPerSpec == 0;
    if (deniedColumn) {
        if (role == Qt::DisplayRole)
            return s.denied ? formatCount(s.denied) : QStringLiteral("–");
        if (role == SortRole)
            return s.denied;
        if (role == Qt::ToolTipRole && s.denied)
            return QStringLiteral("%1 of %2 requests denied (%3 %); longest denied stretch %4")
                .arg(formatCount(s.denied), formatCount(k.requests))
                .arg(k.requests ? 100.0 * double(s.denied) / double(k.requests) : 0.0, 0, 'f', 1)
                .arg(formatSpan(s.longestDeniedUs));
        return {};
    }
    if (role == Qt::DisplayRole) {
        if (!s.firstDenialUs)
            return QStringLiteral("–");
        return QStringLiteral("+%1").arg(formatSpan(std::max<qint64>(0, *s.firstDenialUs - m_startUs)));
    }
    if (role == SortRole)
        return s.firstDenialUs ? *s.firstDenialUs : std::numeric_limits<qint64>::max(); // never denied: last
    if (role == Qt::ToolTipRole && s.firstDenialUs && *s.firstDenialUs >= kEpochLikeUs)
        return QDateTime::fromMSecsSinceEpoch(*s.firstDenialUs / 1000, Qt::UTC).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz 'UTC'"));
    return {};
}

QVariant WhatIfKeyModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= columnCount())
        return QAbstractTableModel::headerData(section, orientation, role);
    if (section == KeyColumn || section == RequestsColumn) {
        if (role == Qt::DisplayRole)
            return section == KeyColumn ? QStringLiteral("Key") : QStringLiteral("Requests");
        if (role == Qt::ToolTipRole && section == RequestsColumn)
            return QStringLiteral("The key's requests in the trace");
        return {};
    }
    const int spec = (section - FirstSpecColumn) / kColumnsPerSpec;
    const bool denied = (section - FirstSpecColumn) % kColumnsPerSpec == 0;
    const QString name = m_specNames.value(spec);
    if (role == Qt::DisplayRole)
        return denied ? QStringLiteral("%1: denied").arg(name) : QStringLiteral("%1: first denial").arg(name);
    if (role == Qt::ToolTipRole)
        return denied ? QStringLiteral("Requests of this key that %1 would have denied").arg(name)
                      : QStringLiteral("When %1 would have denied this key first, from the start of the trace").arg(name);
    return {};
}

} // namespace ratescope::ui
