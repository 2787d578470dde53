// Trace files for what-if (load/simulator.h): the CSV trace reader (time,key[,cost] rows,
// RFC 4180 quoting, µs, ms or ISO 8601 times) in each time unit, and the burst timeline
// reader, on the input as the file. The file is an in-memory one (memfd) opened as a QFile,
// the way the CLI hands over a file it opened itself.
#include "fuzzsupport.h"

#include "limiters/algorithm.h"
#include "load/simulator.h"

#include <QFile>
#include <QSet>

#include <sys/mman.h>
#include <unistd.h>

using namespace ratescope;

namespace {

// The input as an open file, rewritten for each run.
int inputFile(const uint8_t *data, size_t size)
{
    static const int fd = memfd_create("fuzz-trace", 0);
    if (fd < 0 || ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != ssize_t(size)) || lseek(fd, 0, SEEK_SET) != 0) {
        std::perror("fuzz_csvtrace: memfd");
        std::abort();
    }
    return fd;
}

// Up to `cap` requests of the reader, checked against TraceReader's promises: grouped by key,
// each key's requests in time order, times and costs within bounds.
void drain(TraceReader &reader, qint64 cap, bool csv)
{
    std::vector<TraceRequest> batch;
    QSet<QByteArray> done;
    QByteArray key;
    qint64 lastUs = -1, total = 0;
    while (total < cap) {
        batch.clear();
        if (!reader.next(batch, 500))
            break;
        fuzz::check(!batch.empty() && batch.size() <= 500, "next() broke its batch size");
        for (const TraceRequest &r : batch) {
            fuzz::check(r.timeUs >= 0 && r.timeUs <= kMaxNowUs, "a time out of range");
            fuzz::check(r.cost >= 0 && r.cost <= kMaxLimit, "a cost out of range");
            fuzz::check(!r.key.isEmpty() || !csv, "an empty key");
            if (r.key != key) {
                fuzz::check(!done.contains(r.key), "a key's requests are not together", r.key);
                if (!key.isNull())
                    done.insert(key);
                key = r.key;
                lastUs = -1;
            }
            fuzz::check(r.timeUs >= lastUs, "a key's requests are not in time order", r.key);
            lastUs = r.timeUs;
        }
        total += qint64(batch.size());
        const double progress = reader.progress();
        fuzz::check(progress >= 0 && progress <= 1, "progress out of 0..1");
    }
    reader.description();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (TraceTimeUnit unit : {TraceTimeUnit::Auto, TraceTimeUnit::Milliseconds, TraceTimeUnit::Iso8601}) {
        QFile file;
        if (!file.open(inputFile(data, size), QIODevice::ReadOnly, QFileDevice::DontCloseHandle))
            std::abort();
        try {
            const std::unique_ptr<TraceReader> reader = openCsvTrace(file, QStringLiteral("trace.csv"), unit, 1000);
            drain(*reader, qint64(size) + 1, true); // a row is at least 4 bytes: every request
        } catch (const Error &) {
        }
    }
    QFile file;
    if (!file.open(inputFile(data, size), QIODevice::ReadOnly, QFileDevice::DontCloseHandle))
        std::abort();
    try {
        const std::unique_ptr<TraceReader> reader =
            openBurstTimelineTrace(file, QStringLiteral("timeline.csv"), QByteArrayLiteral("burst:key"), 1732459200000000LL);
        drain(*reader, 20000, false); // a timeline may stand for many more requests than its bytes
    } catch (const Error &) {
    }
    return 0;
}
