#include "shardchart.h"

#include "chartpalette.h"
#include "themedchartview.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QEvent>
#include <QStackedBarSeries>
#include <QValueAxis>

#include <algorithm>

namespace ratescope::ui {

ShardChart::ShardChart(QWidget *parent)
    : QChartView(new QChart, parent)
{
    setRenderHint(QPainter::Antialiasing);
    chart()->legend()->setAlignment(Qt::AlignBottom);
    applyChartPalette(chart(), palette());
}

void ShardChart::show(const QString &title, const std::vector<Shard> &shards)
{
    QChart *c = chart();
    c->removeAllSeries();
    for (QAbstractAxis *a : c->axes())
        c->removeAxis(a);
    c->setTitle(title);
    auto *used = new QBarSet(QStringLiteral("used"));
    auto *room = new QBarSet(QStringLiteral("left of its share"));
    QStringList labels;
    qint64 top = 1;
    m_used.clear();
    for (const Shard &s : shards) {
        labels << s.label;
        const qint64 u = s.used.value_or(0);
        *used << double(u);
        *room << double(std::max<qint64>(0, s.share - u));
        m_used.push_back(u);
        top = std::max({top, u, s.share});
    }
    m_bars = int(shards.size());
    auto *series = new QStackedBarSeries;
    series->append(used);
    series->append(room);
    c->addSeries(series);
    auto *x = new QBarCategoryAxis;
    x->append(labels);
    x->setTitleText(QStringLiteral("shard"));
    auto *y = new QValueAxis;
    setNiceRange(y, 0, std::max(1.0, double(top) * 1.05), 5); // 0/25/50/75/100/125, not 0/27/55/82/110
    y->setLabelFormat(QStringLiteral("%d"));
    y->setTitleText(QStringLiteral("requests in the window"));
    c->addAxis(x, Qt::AlignBottom);
    c->addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
    applyChartPalette(c, palette());
    // Used in the console's first colour, the room left faint: a full shard is all colour.
    used->setColor(seriesColor(0));
    QColor faint = seriesColor(0);
    faint.setAlpha(45);
    room->setColor(faint);
    room->setBorderColor(faint);
}

QString ShardChart::title() const
{
    return chart()->title();
}

void ShardChart::changeEvent(QEvent *event)
{
    QChartView::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        applyChartPalette(chart(), palette());
}

} // namespace ratescope::ui
