// Widgets that fit the width they get. Columns that follow a view's width, as the keys panel
// and the Lookup table fit theirs: the first column (the key) keeps a readable width, the
// others are shown in the order they are needed while they fit, and the rest hidden (the row's
// tooltip has what they held); no horizontal scroll bar at any width. And fields wide enough
// to show what to type in them (their placeholder) whole.
#pragma once

#include <functional>
#include <initializer_list>
#include <vector>

class QAbstractItemView;
class QHeaderView;
class QLineEdit;

namespace ratescope::ui {

struct FittedColumn {
    int column = 0;
    int width = 0; // the width it is shown at
};

// Shows each of `order` (the most needed first) at its width while keyMin + the widths shown
// so far + its own fit in `available`, hides it and every one after it once one does not.
// Returns the width the shown columns take (the key column not included).
int fitColumns(QHeaderView *header, int available, int keyMin, const std::vector<FittedColumn> &order);

// Calls fit each time the view's viewport is resized (after the page holding the view is, so a
// page's own resizeEvent comes too early), never from within fit itself.
void fitOnResize(QAbstractItemView *view, std::function<void()> fit);

// Keeps a table's columns fitted to its width from now on, for a table with a few rows (a page's
// policies, its overrides): `first` at least firstMin pixels and given what is left, then each
// of `order` (the most needed first) at the width its title and cells need, at most its cap,
// while it fits; the rest hidden (the row's tooltip should tell what they hold). Fitted again
// when the table is resized or rows come (not when a cell changes: a countdown would make its
// column twitch); a width dragged by hand is kept.
struct ColumnCap {
    int column = 0;
    int cap = 0; // pixels
};
void keepColumnsFitted(QAbstractItemView *view, QHeaderView *header, int first, int firstMin, std::vector<ColumnCap> order);

// The width a column needs to show its title and its cells whole (the first rowsAtMost rows).
int columnContentWidth(const QAbstractItemView *view, const QHeaderView *header, int column, int rowsAtMost = 500);

// The width a line edit needs to show its placeholder whole: the text, and what the edit keeps
// around its text (frame, margins, the clear button), as its own size hint counts them.
int placeholderWidth(const QLineEdit *edit);
// Sets each edit's minimum width to placeholderWidth.
void keepPlaceholdersWhole(std::initializer_list<QLineEdit *> edits);

} // namespace ratescope::ui
