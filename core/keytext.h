// How a Redis key (arbitrary bytes) is shown to a person: as itself when it is printable UTF-8,
// otherwise quoted and escaped the way redis-cli does ("bin\x00\xff\nkey"), so that no key can
// hide bytes, forge a line, move the cursor or reorder text with bidirectional controls.
#pragma once

#include <QByteArray>
#include <QString>

namespace ratescope {

// True when the key shows as itself: valid UTF-8, no control characters (C0, DEL, C1), no
// bidirectional or zero-width format characters, and not starting with '"' (which would read
// as an escaped form).
bool isPlainKey(const QByteArray &key);

// The key as itself when plain; else "..." with \\ \" \n \r \t \a \b escapes, printable
// characters as they are, and every other byte as \xNN (lowercase hex, as redis-cli prints).
QString displayKey(const QByteArray &key);

} // namespace ratescope
