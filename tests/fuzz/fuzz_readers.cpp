// Other libraries' limiters (formats/readers/, formatReaders()): each reader's recognition of a
// key, the names of its window keys, and the decoding of the state it reads into a usage and
// into the JSON people read. Input, as lines:
//   format   a reader's name (formatReaders(); another text picks one by its first byte)
//   declared 1 when a policy declares the format
//   now      the server's clock in µs
//   limits   "limit window_us cost" (invalid: 10 per minute, cost 1)
//   key
// then RESP: the reply to the reader's sample command, then the replies to its read().
#include "fuzzsupport.h"

#include "formats/formatreaders.h"
#include "formats/usage.h"

using namespace ratescope;

namespace {

const FormatReader &pickReader(const QByteArray &name)
{
    const std::vector<const FormatReader *> &all = formatReaders();
    if (const FormatReader *f = findFormatReader(QString::fromUtf8(name)))
        return *f;
    return *all[name.isEmpty() ? 0 : size_t(uchar(name[0])) % all.size()];
}

LimitSpec limits(const QByteArray &line, Algorithm family)
{
    const QList<QByteArray> f = line.split(' ');
    LimitSpec spec;
    spec.algorithm = family;
    spec.limit = fuzz::number(f.value(0), 10);
    spec.windowUs = fuzz::number(f.value(1), 60000000);
    spec.cost = fuzz::number(f.value(2), 1);
    try {
        spec.validate();
        return spec;
    } catch (const UsageError &) {
        return {family, 10, 60000000, 1};
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const fuzz::Lines in = fuzz::splitLines(fuzz::bytes(data, size), 5);
    const FormatReader &reader = pickReader(in.lines[0]);
    const bool declared = in.lines[1] == "1";
    const qint64 nowUs = std::clamp<qint64>(fuzz::number(in.lines[2], 1732459200000000LL), 0, kMaxNowUs);
    const LimitSpec spec = limits(in.lines[3], reader.family().value_or(Algorithm::FixedWindow));
    const QByteArray &key = in.lines[4];
    std::vector<Reply> replies = fuzz::parseReplies(in.rest);
    const Reply sample = replies.empty() ? Reply::nil() : replies.front();
    if (!replies.empty())
        replies.erase(replies.begin());

    const QByteArray what = reader.name().toUtf8() + ' ' + key;
    try {
        reader.windowKeysGlob(key, declared);
        reader.limiterNameOf(key, nowUs);
        reader.probeKeys(key);
        KeyKind kind;
        if (!reader.match(key, sample, nowUs, declared, kind)) {
            const std::optional<KeyKind> named = reader.nameKind(key, &spec, declared);
            if (!named)
                return 0;
            kind = *named;
        }
        kind.format = KeyFormat::Library;
        kind.reader = &reader;
        kind.label();
        kind.algorithm();
        reader.keys(kind, nowUs);
        const LimitSpec asRead = limitsAsRead(kind, spec);
        const std::vector<Command> commands = reader.read(kind, &asRead, nowUs);
        replies.resize(commands.size()); // missing replies are nil
        try {
            fuzz::checkUsage(reader.usage(kind, replies, asRead, nowUs), what);
        } catch (const Error &) {
        }
        reader.state(kind, replies, nowUs);
    } catch (const Error &) {
    }
    return 0;
}
