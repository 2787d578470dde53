// A sharded limiter's shards side by side: each shard's used as a bar against its share of
// the group's limit, so that the busiest shard (and the skew) shows at a glance.
#pragma once

#include <QChartView>

#include <optional>
#include <vector>

namespace ratescope::ui {

class ShardChart : public QChartView {
    Q_OBJECT
public:
    explicit ShardChart(QWidget *parent = nullptr);

    struct Shard {
        QString label;              // the shard's number
        std::optional<qint64> used; // nullopt: not known (no limits, or unreadable)
        qint64 share = 0;           // its share of the group limit (0: none)
    };
    void show(const QString &title, const std::vector<Shard> &shards);

    QString title() const;
    int barCount() const { return m_bars; }
    std::vector<qint64> usedValues() const { return m_used; }

protected:
    void changeEvent(QEvent *event) override;

private:
    int m_bars = 0;
    std::vector<qint64> m_used;
};

} // namespace ratescope::ui
