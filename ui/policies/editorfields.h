// The pieces both editors of the Policies tab are built from: plain-text labels (names, globs
// and keys come from the server), a problem note under a field in a colour that reads on light
// and dark palettes, and a form row holding a field with its note.
#pragma once

#include <QColor>
#include <QPalette>
#include <QString>

class QFormLayout;
class QLabel;
class QWidget;

namespace ratescope::ui {

QColor problemColor(const QPalette &palette);
QLabel *plainLabel(const QString &text = {});
// Hidden until it has something to say.
QLabel *problemLabelFor(QWidget *parent);
// "label: field" with the problem note (if any) right under the field.
void addFieldRow(QFormLayout *form, const QString &label, QWidget *field, QLabel *problem);

} // namespace ratescope::ui
