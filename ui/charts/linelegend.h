// A legend drawn inside a chart that shows each line as the chart draws it: its colour, its
// dash pattern and (up to a readable width) its thickness, over a stretch long enough for two
// dashes, in groups ("now: ━━ allowed ╍╍ denied") that wrap to the chart's width. For charts
// whose lines differ by more than their colour: QtCharts' own legend draws a line series as a
// stub too short for a dash, so a solid and a dashed line of one colour look the same there.
#pragma once

#include <QFont>
#include <QGraphicsObject>
#include <QPen>

#include <vector>

namespace ratescope::ui {

class LineLegend : public QGraphicsObject {
    Q_OBJECT
public:
    struct Line {
        QPen pen; // the series' own pen
        QString label;
    };
    struct Group {
        QString title; // drawn bold before its lines; may be empty
        std::vector<Line> lines;
    };

    explicit LineLegend(QGraphicsItem *parent = nullptr);

    void setGroups(std::vector<Group> groups);
    const std::vector<Group> &groups() const { return m_groups; }
    void setFont(const QFont &font);
    void setTextColor(const QColor &color);
    // Lays the groups out in rows of at most `width` (a group is kept on one row when it fits),
    // each row centred; returns the height taken.
    qreal layOut(qreal width);
    // Where a line's sample is drawn, in item coordinates (tests look at its pixels).
    QRectF sampleRect(int group, int line) const;

    QRectF boundingRect() const override;
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    struct Placed {
        enum Kind { Title, Sample } kind;
        int group, line;
        QRectF rect; // the whole token: a title, or a sample with its label
    };
    qreal sampleLength() const;
    qreal tokenWidth(int group, int line) const; // line -1: the group's title
    QFont titleFont() const;

    std::vector<Group> m_groups;
    std::vector<Placed> m_placed;
    QFont m_font;
    QColor m_text = Qt::black;
    QSizeF m_size;
};

} // namespace ratescope::ui
