#include "editorfields.h"

#include <QFormLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace ratescope::ui {

QColor problemColor(const QPalette &palette)
{
    return palette.color(QPalette::Window).lightness() < 128 ? QColor(0xff, 0x8a, 0x80) : QColor(0xb3, 0x26, 0x1e);
}

QLabel *plainLabel(const QString &text)
{
    auto *l = new QLabel(text);
    l->setTextFormat(Qt::PlainText); // names, globs and keys come from the server
    l->setWordWrap(true);
    return l;
}

QLabel *problemLabelFor(QWidget *parent)
{
    QLabel *l = plainLabel();
    QPalette pal = l->palette();
    pal.setColor(QPalette::WindowText, problemColor(parent->palette()));
    l->setPalette(pal);
    l->hide();
    return l;
}

void addFieldRow(QFormLayout *form, const QString &label, QWidget *field, QLabel *problem)
{
    auto *box = new QWidget;
    auto *v = new QVBoxLayout(box);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(2);
    v->addWidget(field);
    if (problem)
        v->addWidget(problem);
    form->addRow(label, box);
}

} // namespace ratescope::ui
