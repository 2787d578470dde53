#include "hotmodel.h"

#include "displayformat.h"
#include "base/keytext.h"
#include "usagebardelegate.h"

#include <QBrush>
#include <QColor>

#include <algorithm>
#include <cmath>

namespace ratescope::ui {

namespace {

QString rateText(double rate)
{
    if (rate < 10)
        return QString::number(rate, 'f', rate < 0.995 && rate > 0 ? 2 : 1);
    return formatCount(std::llround(rate));
}

QString algorithmText(const HotLimiter &l)
{
    // A counter window says nothing of its algorithm: the policy does.
    if (!l.kind.algorithm() && l.spec)
        return QStringLiteral("%1 (counters)").arg(algorithmName(l.spec->algorithm));
    return l.kind.label();
}

} // namespace

HotLimiterModel::HotLimiterModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

void HotLimiterModel::setLimiters(std::vector<HotLimiter> limiters)
{
    beginResetModel();
    m_rows = std::move(limiters);
    m_maxRate = 0;
    for (const HotLimiter &l : m_rows)
        m_maxRate = std::max(m_maxRate, l.rate().value_or(0));
    endResetModel();
}

void HotLimiterModel::clear()
{
    setLimiters({});
}

int HotLimiterModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int HotLimiterModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant HotLimiterModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const HotLimiter &l = m_rows[size_t(index.row())];
    const auto rate = l.rate();
    const auto fill = l.fill();
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case Key:
            return displayKey(l.key);
        case Algorithm:
            return algorithmText(l);
        case Rate:
            return rate ? rateText(*rate) : QStringLiteral("–");
        case Used:
            return l.usage ? formatUsage(l.usage->usedNow, l.usage->decision.limit) : QStringLiteral("–");
        case Fill:
            if (!fill)
                return QStringLiteral("–");
            return QStringLiteral("%1 %%2").arg(std::llround(*fill * 100)).arg(l.denyingNow() ? QStringLiteral(" · denying") : QString());
        case Master:
            return l.master;
        }
        return {};
    case Qt::TextAlignmentRole:
        return index.column() == Rate || index.column() == Fill ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
               : index.column() == Used                         ? QVariant(Qt::AlignCenter)
                                                                : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    case Qt::ForegroundRole:
        if (l.denyingNow() && (index.column() == Key || index.column() == Fill))
            return QBrush(QColor(0xc0, 0x39, 0x2b));
        return {};
    case Qt::ToolTipRole: {
        QString tip = displayKey(l.key) + QLatin1Char('\n') + l.kind.label();
        if (!l.master.isEmpty())
            tip += QStringLiteral(" on %1").arg(l.master);
        if (!l.policy.isEmpty())
            tip += QStringLiteral("\npolicy %1: %2").arg(l.policy, formatLimit(*l.spec));
        else
            tip += QStringLiteral("\nno policy: used, limit and fill need one");
        if (l.usage)
            tip += QStringLiteral("\nused %1 of %2").arg(formatCount(l.usage->usedNow), formatCount(l.usage->decision.limit));
        if (l.admitted)
            tip += QStringLiteral("\n%1 admitted in %2").arg(formatCount(*l.admitted), formatSpan(l.spanUs));
        else
            tip += QStringLiteral("\nrate not known without limits (token bucket, GCRA)");
        if (l.usage && !l.usage->decision.allowed)
            tip += QStringLiteral("\ndenying now: retry in %1").arg(formatSpan(l.usage->decision.retryAfterUs));
        return plainToolTip(tip);
    }
    case UsageBarDelegate::ShortTextRole:
        if (index.column() == Used && l.usage)
            return formatUsageShort(l.usage->usedNow, l.usage->decision.limit);
        return {};
    case KeyBytesRole:
        return l.key;
    case FractionRole:
        if (index.column() == Used && fill)
            return *fill;
        if (index.column() == Rate && rate && m_maxRate > 0)
            return *rate / m_maxRate;
        return {};
    case DenyingRole:
        return l.denyingNow();
    case SortRole:
        switch (index.column()) {
        case Rate:
            return rate.value_or(-1);
        case Used:
            return l.usage ? double(l.usage->usedNow) : -1.0;
        case Fill:
            return fill.value_or(-1);
        default:
            return data(index, Qt::DisplayRole);
        }
    }
    return {};
}

QVariant HotLimiterModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::DisplayRole) {
        static const char *names[] = {"Limiter", "Algorithm", "Admitted / s", "Used / limit", "Fill", "Master"};
        return section >= 0 && section < ColumnCount ? QString::fromLatin1(names[section]) : QVariant();
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case Rate:
            return QStringLiteral("Requests admitted per second between the pass's two reads (the bar: against the busiest)");
        case Used:
            return QStringLiteral("How full the limiter is now, with the limits of the policy that matches it");
        case Fill:
            return QStringLiteral("Used / limit; above 100 % when it is over its limit");
        case Master:
            return QStringLiteral("The master that holds the key");
        default:
            return {};
        }
    }
    return {};
}

HotMasterModel::HotMasterModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

void HotMasterModel::setMasters(std::vector<HotMaster> masters, bool denyingKnown)
{
    beginResetModel();
    m_rows = std::move(masters);
    m_denyingKnown = denyingKnown;
    m_total = 0;
    for (const HotMaster &m : m_rows)
        m_total += m.rate;
    endResetModel();
}

void HotMasterModel::clear()
{
    setMasters({}, true);
}

int HotMasterModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int HotMasterModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant HotMasterModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const HotMaster &m = m_rows[size_t(index.row())];
    const double share = m_total > 0 ? m.rate / m_total : 0;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case Address:
            return m.address;
        case Keys:
            return formatCount(m.keys);
        case Limiters:
            return formatCount(m.limiters);
        case Rate:
            return rateText(m.rate);
        case Share:
            return QStringLiteral("%1 %").arg(std::llround(share * 100));
        case Denying:
            return m_denyingKnown ? formatCount(m.denying) : QStringLiteral("–");
        }
        return {};
    case Qt::TextAlignmentRole:
        return index.column() == Address ? QVariant(Qt::AlignLeft | Qt::AlignVCenter) : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case FractionRole:
        return index.column() == Share && m_total > 0 ? QVariant(share) : QVariant();
    }
    return {};
}

QVariant HotMasterModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char *names[] = {"Master", "Keys", "Limiters", "Admitted / s", "Share of traffic", "Denying now"};
    return section >= 0 && section < ColumnCount ? QString::fromLatin1(names[section]) : QVariant();
}

} // namespace ratescope::ui
