#include "fitwidth.h"

#include <QAbstractItemView>
#include <QEvent>
#include <QHash>
#include <QHeaderView>
#include <QLineEdit>
#include <QStyle>

#include <algorithm>
#include <memory>

namespace ratescope::ui {

int fitColumns(QHeaderView *header, int available, int keyMin, const std::vector<FittedColumn> &order)
{
    int used = 0;
    bool full = false;
    for (const FittedColumn &c : order) {
        full = full || keyMin + used + c.width > available;
        header->setSectionHidden(c.column, full);
        if (!full) {
            header->resizeSection(c.column, c.width);
            used += c.width;
        }
    }
    return used;
}

namespace {

class ResizeWatcher : public QObject {
public:
    ResizeWatcher(QWidget *viewport, std::function<void()> fit)
        : QObject(viewport)
        , m_fit(std::move(fit))
    {
        viewport->installEventFilter(this);
    }

protected:
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (event->type() == QEvent::Resize && !m_fitting) {
            m_fitting = true; // a scroll bar coming or going resizes the viewport again
            m_fit();
            m_fitting = false;
        }
        return QObject::eventFilter(watched, event);
    }

private:
    std::function<void()> m_fit;
    bool m_fitting = false;
};

} // namespace

void fitOnResize(QAbstractItemView *view, std::function<void()> fit)
{
    new ResizeWatcher(view->viewport(), std::move(fit));
}

void keepColumnsFitted(QAbstractItemView *view, QHeaderView *header, int first, int firstMin, std::vector<ColumnCap> order)
{
    struct State {
        QHash<int, int> preferred; // widths dragged by hand
        bool fitting = false;
    };
    auto state = std::make_shared<State>();
    auto fit = [view, header, first, firstMin, order = std::move(order), state] {
        const int available = view->viewport()->width();
        if (available <= 0 || state->fitting)
            return;
        std::vector<FittedColumn> shown;
        for (const ColumnCap &c : order)
            shown.push_back({c.column, state->preferred.value(c.column, std::min(columnContentWidth(view, header, c.column), c.cap))});
        state->fitting = true;
        const int used = fitColumns(header, available, firstMin, shown);
        header->resizeSection(first, std::max(firstMin, available - used));
        state->fitting = false;
    };
    QObject::connect(header, &QHeaderView::sectionResized, view, [state](int column, int, int size) {
        if (!state->fitting)
            state->preferred[column] = size;
    });
    // New rows may be wider (a table of a few rows: each is measured).
    if (QAbstractItemModel *model = view->model()) {
        QObject::connect(model, &QAbstractItemModel::modelReset, view, fit);
        QObject::connect(model, &QAbstractItemModel::layoutChanged, view, fit);
        QObject::connect(model, &QAbstractItemModel::rowsInserted, view, fit);
    }
    fitOnResize(view, fit);
}

int columnContentWidth(const QAbstractItemView *view, const QHeaderView *header, int column, int rowsAtMost)
{
    // The title's width: the header's own hint, which it gives only for a section shown.
    int width = header->sectionSizeHint(column);
    if (header->isSectionHidden(column) && header->model()) {
        const QString title = header->model()->headerData(column, header->orientation(), Qt::DisplayRole).toString();
        const int margin = header->style()->pixelMetric(QStyle::PM_HeaderMargin, nullptr, header);
        width = header->fontMetrics().horizontalAdvance(title) + 4 * margin;
    }
    const QAbstractItemModel *model = view->model();
    const int rows = model ? std::min(model->rowCount(), rowsAtMost) : 0;
    for (int r = 0; r < rows; ++r)
        width = std::max(width, view->sizeHintForIndex(model->index(r, column)).width());
    return width + 1; // a table's grid line takes a pixel of the cell
}

int placeholderWidth(const QLineEdit *edit)
{
    const QFontMetrics fm = edit->fontMetrics();
    const int around = edit->sizeHint().width() - 17 * fm.horizontalAdvance(QLatin1Char('x')); // QLineEdit's hint: 17 x
    return fm.horizontalAdvance(edit->placeholderText()) + around;
}

void keepPlaceholdersWhole(std::initializer_list<QLineEdit *> edits)
{
    for (QLineEdit *e : edits)
        e->setMinimumWidth(placeholderWidth(e));
}

} // namespace ratescope::ui
