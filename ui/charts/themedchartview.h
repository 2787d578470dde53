// The base of the console's QtCharts views: the chart follows the widget's palette (light or
// dark), with round tick steps on its value axes.
#pragma once

#include <QChartView>

class QValueAxis;

namespace ratescope::ui {

// The axis from `from` to at least `to`, in round steps (1, 2 or 5 times a power of ten) giving
// about `ticks` ticks: steps a person reads at a glance.
void setNiceRange(QValueAxis *axis, double from, double to, int ticks);

// Follows the widget's palette (light or dark) for the chart's background, text and grid.
class ThemedChartView : public QChartView {
    Q_OBJECT
public:
    explicit ThemedChartView(QWidget *parent = nullptr);

protected:
    void changeEvent(QEvent *event) override;
    void applyPalette();
    // After a theme change (which shows every legend marker again): hide what should be hidden.
    virtual void legendChanged() {}
    QValueAxis *addValueAxis(Qt::Alignment alignment, const QString &title);
};

} // namespace ratescope::ui
