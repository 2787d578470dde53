// RESP from a server (redis/resp.h): the incremental parser fed the input whole and in pieces,
// the replies it builds (debugString, toInteger, a limiter script's decision), and the command
// encoder. Input: bytes as a server would send them.
//
// Properties: fed in any pieces, the parser gives the same replies, and the same error, as fed
// at once; each reply written back as RESP parses to itself; a command encoded parses back to
// its arguments.
#include "fuzzsupport.h"

#include "limiters/decision.h"

using namespace ratescope;

namespace {

struct Parsed {
    std::vector<Reply> replies;
    bool failed = false;
    bool idle = true;
};

// Feeds `input` in pieces of `step` bytes (0: at once), taking replies as they complete.
Parsed parse(const QByteArray &input, qsizetype step)
{
    Parsed out;
    RespParser parser;
    try {
        for (qsizetype at = 0; at < input.size() || (at == 0 && input.isEmpty());) {
            const qsizetype n = step > 0 ? std::min(step, input.size() - at) : input.size();
            parser.feed(input.constData() + at, size_t(n));
            at += n;
            while (std::optional<Reply> r = parser.next())
                out.replies.push_back(std::move(*r));
            if (input.isEmpty())
                break;
        }
        out.idle = parser.idle();
    } catch (const ProtocolError &) {
        out.failed = true;
    }
    return out;
}

void use(const Reply &r)
{
    r.debugString();
    try {
        r.toInteger();
    } catch (const Error &) {
    }
    try {
        const Decision d = Decision::fromReply(r);
        fuzz::check(r.isArray() && r.size() == 6, "a decision from what is no six integers");
        (void)d;
    } catch (const Error &) {
    }
    try {
        r[0];
        r[r.size()];
        fuzz::fail("operator[] past the end did not throw");
    } catch (const UnexpectedReplyError &) {
    }
    for (const Reply &e : r.elements())
        use(e);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray input = fuzz::bytes(data, size);
    const Parsed whole = parse(input, 0);
    for (qsizetype step : {1, 3}) {
        const Parsed pieces = parse(input, step);
        fuzz::check(pieces.failed == whole.failed && pieces.replies == whole.replies, "pieces parse differently from the whole");
    }
    for (const Reply &r : whole.replies) {
        use(r);
        QByteArray again;
        fuzz::encodeReply(again, r);
        const Parsed back = parse(again, 0);
        fuzz::check(!back.failed && back.idle && back.replies.size() == 1 && back.replies[0] == r, "a reply does not round-trip",
                    again.left(200));
    }
    // The input's lines as a command's arguments, encoded and parsed back as one array.
    Command command;
    for (const QByteArray &arg : input.split('\n'))
        command << arg;
    const Parsed encoded = parse(encodeCommand(command), 0);
    fuzz::check(!encoded.failed && encoded.replies.size() == 1 && encoded.replies[0].isArray() &&
                    encoded.replies[0].size() == size_t(command.size()),
                "an encoded command does not parse back");
    for (qsizetype i = 0; i < command.size(); ++i)
        fuzz::check(encoded.replies[0][size_t(i)].bytes() == command[i] && encoded.replies[0][size_t(i)].type() == Reply::Type::String,
                    "an encoded argument does not parse back", command[i].left(200));
    return 0;
}
