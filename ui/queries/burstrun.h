// One burst or boundary test fired from the console, on threads of its own: the core's
// BurstEngine (or BoundaryScenario) with its own connections, then the run's one audit entry,
// written by the run itself so that closing the console mid-run can never lose it.
#pragma once

#include "backgroundrun.h"
#include "load/boundaryscenario.h"
#include "load/burst.h"

#include <QString>

#include <memory>
#include <optional>
#include <vector>

namespace ratescope::ui {

// The boundary test of one algorithm on its scratch key.
struct BoundaryRun {
    LimitSpec spec;
    QByteArray key;
    std::optional<BoundaryResult> result;
    QString error; // why there is no result
    qint64 sent = 0;
};

// What a run came back with.
struct BurstOutcome {
    std::optional<BurstSummary> summary; // a burst that got as far as sending
    std::vector<BoundaryRun> boundary;   // a boundary test: one per algorithm, in order
    QString error;                       // nothing was sent: why (bad input, no connection)
    QString auditError;                  // empty when every audit entry was written
    int auditEntries = 0;                // written by this run
};

// The live counts the engine reported last, for the chart (coalesced: the GUI takes whatever
// accumulated since it last looked).
struct BurstSnapshot {
    qint64 elapsedUs = 0;
    qint64 sent = 0, allowed = 0, denied = 0, errors = 0;
    std::vector<BurstSlice> newSlices; // since the previous snapshot
    int boundaryDone = 0;              // boundary test: algorithms finished so far
};

// Lives on the GUI thread; the work runs on a thread of its own (BackgroundRun), so a run that
// outlasts the page (a stalled server) ends by itself, audited.
class BurstRun : public BackgroundRun {
    Q_OBJECT
public:
    // ns: the metadata namespace of the audit stream.
    BurstRun(ConnectionOptions options, QString ns, QObject *parent = nullptr);

    // The operator's name its audit entry carries beside the OS user (empty: the OS user).
    void setOperatorName(const QString &name) { m_operator = name; }
    void startBurst(const BurstConfig &config);
    // The window-boundary test on each spec in turn, each on a scratch key of its own.
    void startBoundary(const std::vector<LimitSpec> &specs);
    // cancel(): no new requests go out; those in flight are still counted, then the run ends as
    // usual. A boundary test ends after the algorithm under way (it takes about a window).

    // A scratch key for the boundary test, named so it cannot collide with a service's key:
    // "ratescope-scratch:boundary:<algorithm>:<random hex>".
    static QByteArray scratchKey(Algorithm algorithm);

    // Takes what accumulated since the last call (GUI thread).
    BurstSnapshot takeSnapshot();

signals:
    // progressed(): call takeSnapshot()
    void finished(const ratescope::ui::BurstOutcome &outcome);

private:
    struct Progress;

    ConnectionOptions m_options;
    QString m_ns;
    QString m_operator;
    std::shared_ptr<Progress> m_progress;
};

} // namespace ratescope::ui

Q_DECLARE_METATYPE(ratescope::ui::BurstOutcome)
