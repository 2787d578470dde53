// Recognising limiter keys from a sample of their contents: Ratescope's own formats and
// those other services write (docs/key-formats.md). One round of sample commands per key,
// then classify() reads their replies.
#pragma once

#include "formats/keykind.h"
#include "formats/keyshapes.h"

namespace ratescope {

// Appends the commands that tell a key of this Redis type apart and returns how many (none
// for a type that is never a limiter); classify() below reads their replies, in that order.
size_t appendSampleCommands(std::vector<Command> &out, const QByteArray &key, const QByteArray &type);
std::vector<Command> sampleCommands(const QByteArray &key, const QByteArray &type); // the same, alone
// What a key is, from its type and the replies to its sample commands. `nowUs` is the server's
// clock; `declaredUnit` a policy's score unit; `declaredFormat` a policy's format
// (formatreaders.h): keys of its shape are read that way; `declaredWindowUs` its window: a
// counter window <base>:<id> of it is recognised whatever its length.
KeyKind classify(const QByteArray &key, const QByteArray &type, const std::vector<Reply> &samples, qint64 nowUs,
                 ScoreUnit declaredUnit = ScoreUnit::Auto, const QString &declaredFormat = {}, qint64 declaredWindowUs = 0);

} // namespace ratescope
