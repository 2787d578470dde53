#include "notupdating.h"

#include <QColor>
#include <QPalette>
#include <QWidget>

namespace ratescope::ui {

void showNotUpdating(QWidget *line, bool on)
{
    QPalette amber;
    if (on) {
        amber.setColor(QPalette::Window, QColor(0xfc, 0xef, 0xc7));
        amber.setColor(QPalette::WindowText, QColor(0x3d, 0x30, 0x00));
    }
    line->setPalette(amber); // default-constructed: inherits the parent's again
    line->setAutoFillBackground(on);
}

} // namespace ratescope::ui
