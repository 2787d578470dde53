#include "linelegend.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>

namespace ratescope::ui {

namespace {

// A sample's pen: the line's own, no thicker than 3 px (a dash scales with the width: wider, and
// fewer dashes fit in the sample), with square ends cut at the dash.
QPen samplePen(QPen pen)
{
    pen.setWidthF(std::clamp(pen.widthF(), 1.5, 3.0));
    pen.setCapStyle(Qt::FlatCap);
    return pen;
}

} // namespace

LineLegend::LineLegend(QGraphicsItem *parent)
    : QGraphicsObject(parent)
{
    setAcceptedMouseButtons(Qt::NoButton);
    setZValue(10); // over the plot's background, as QtCharts' legend is
}

void LineLegend::setGroups(std::vector<Group> groups)
{
    m_groups = std::move(groups);
    update();
}

void LineLegend::setFont(const QFont &font)
{
    m_font = font;
    update();
}

void LineLegend::setTextColor(const QColor &color)
{
    m_text = color;
    update();
}

QFont LineLegend::titleFont() const
{
    QFont bold = m_font;
    bold.setBold(true);
    return bold;
}

qreal LineLegend::sampleLength() const
{
    // Room for two dashes and a half of Qt::DashLine at the widest sample pen (4 + 2 widths each).
    return std::max<qreal>(40, 2.4 * QFontMetricsF(m_font).height());
}

qreal LineLegend::tokenWidth(int group, int line) const
{
    const Group &g = m_groups[size_t(group)];
    if (line < 0)
        return QFontMetricsF(titleFont()).horizontalAdvance(g.title);
    const QFontMetricsF fm(m_font);
    return sampleLength() + fm.height() * 0.3 + fm.horizontalAdvance(g.lines[size_t(line)].label);
}

qreal LineLegend::layOut(qreal width)
{
    prepareGeometryChange();
    m_placed.clear();
    const QFontMetricsF fm(m_font);
    const qreal rowHeight = fm.height() + 4;
    const qreal gap = fm.height() * 0.7, groupGap = fm.height() * 1.6;
    struct Row {
        size_t first; // index in m_placed
        qreal width;
    };
    std::vector<Row> rows{{0, 0}};
    qreal x = 0, y = 0;
    auto breakRow = [&] {
        rows.back().width = x;
        rows.push_back({m_placed.size(), 0});
        x = 0;
        y += rowHeight;
    };
    for (int g = 0; g < int(m_groups.size()); ++g) {
        const Group &group = m_groups[size_t(g)];
        // The group's tokens: its title (line -1), then its lines.
        std::vector<int> tokens;
        if (!group.title.isEmpty())
            tokens.push_back(-1);
        for (int l = 0; l < int(group.lines.size()); ++l)
            tokens.push_back(l);
        qreal whole = 0;
        for (size_t i = 0; i < tokens.size(); ++i)
            whole += tokenWidth(g, tokens[i]) + (i ? gap : 0);
        if (x > 0 && x + groupGap + whole > width)
            breakRow(); // a group starts a row rather than be split, when it fits in one
        for (size_t i = 0; i < tokens.size(); ++i) {
            const qreal w = tokenWidth(g, tokens[i]);
            const qreal before = i ? gap : groupGap;
            if (x > 0 && x + before + w > width)
                breakRow();
            else if (x > 0)
                x += before;
            m_placed.push_back({tokens[i] < 0 ? Placed::Title : Placed::Sample, g, tokens[i], QRectF(x, y, w, rowHeight)});
            x += w;
        }
    }
    rows.back().width = x;
    for (size_t r = 0; r < rows.size(); ++r) {
        const size_t end = r + 1 < rows.size() ? rows[r + 1].first : m_placed.size();
        const qreal shift = std::max<qreal>(0, (width - rows[r].width) / 2);
        for (size_t i = rows[r].first; i < end; ++i)
            m_placed[i].rect.translate(shift, 0);
    }
    m_size = QSizeF(width, m_placed.empty() ? 0 : y + rowHeight);
    update();
    return m_size.height();
}

QRectF LineLegend::sampleRect(int group, int line) const
{
    for (const Placed &p : m_placed)
        if (p.kind == Placed::Sample && p.group == group && p.line == line) {
            const qreal w = samplePen(m_groups[size_t(group)].lines[size_t(line)].pen).widthF();
            return QRectF(p.rect.left(), p.rect.center().y() - w / 2, sampleLength(), w);
        }
    return {};
}

QRectF LineLegend::boundingRect() const
{
    return QRectF(QPointF(0, 0), m_size);
}

void LineLegend::paint(QPainter *painter, const QStyleOptionGraphicsItem *, QWidget *)
{
    painter->setRenderHint(QPainter::Antialiasing);
    const qreal length = sampleLength();
    const qreal space = QFontMetricsF(m_font).height() * 0.3;
    for (const Placed &p : m_placed) {
        const Group &g = m_groups[size_t(p.group)];
        painter->setPen(m_text);
        if (p.kind == Placed::Title) {
            painter->setFont(titleFont());
            painter->drawText(p.rect, Qt::AlignLeft | Qt::AlignVCenter, g.title);
            continue;
        }
        const Line &line = g.lines[size_t(p.line)];
        painter->setFont(m_font);
        painter->drawText(p.rect.adjusted(length + space, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter, line.label);
        painter->setPen(samplePen(line.pen));
        const qreal y = p.rect.center().y();
        painter->drawLine(QPointF(p.rect.left(), y), QPointF(p.rect.left() + length, y));
    }
}

} // namespace ratescope::ui
