#include "lockicon.h"

#include <QPainter>
#include <QPainterPath>
#include <QPixmap>

namespace ratescope::ui {

namespace {

QPixmap padlock(int size, bool closed, const QColor &color)
{
    QPixmap pm(size, size);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    const qreal s = size / 16.0;
    QPen pen(color, 1.6 * s);
    pen.setCapStyle(Qt::RoundCap);
    p.setPen(pen);
    p.setBrush(Qt::NoBrush);
    // The shackle: closed, it enters the body on both sides; open, it swings up on the right.
    QPainterPath shackle;
    const qreal left = 5 * s, right = 11 * s, top = 2.5 * s, body = 7.5 * s;
    shackle.moveTo(left, body);
    shackle.lineTo(left, 5.5 * s);
    shackle.arcTo(QRectF(left, top, right - left, 6 * s), 180, -180);
    shackle.lineTo(right, closed ? body : 5 * s);
    if (!closed)
        shackle.translate(0, -1.5 * s);
    p.drawPath(shackle);
    p.setPen(Qt::NoPen);
    p.setBrush(color);
    p.drawRoundedRect(QRectF(3 * s, body, 10 * s, 7 * s), 1.5 * s, 1.5 * s);
    return pm;
}

} // namespace

QIcon lockIcon()
{
    QIcon icon;
    for (int size : {16, 24, 32}) {
        icon.addPixmap(padlock(size, true, QColor(0xb0, 0x6a, 0x00)), QIcon::Normal, QIcon::On);
        icon.addPixmap(padlock(size, false, QColor(0x70, 0x70, 0x70)), QIcon::Normal, QIcon::Off);
    }
    return icon;
}

} // namespace ratescope::ui
