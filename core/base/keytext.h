// How a Redis key (arbitrary bytes) is shown to a person: as itself when it is printable UTF-8,
// otherwise quoted and escaped the way redis-cli does ("bin\x00\xff\nkey"), so that no key can
// hide bytes, forge a line, move the cursor or reorder text with bidirectional controls.
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QString>

namespace ratescope {

// True when the key shows as itself: valid UTF-8, no control characters (C0, DEL, C1), no
// bidirectional or zero-width format characters, and not starting with '"' (which would read
// as an escaped form).
bool isPlainKey(const QByteArray &key);

// The key as itself when plain; else "..." with \\ \" \n \r \t \a \b escapes, printable
// characters as they are, and every other byte as \xNN (lowercase hex, as redis-cli prints).
QString displayKey(const QByteArray &key);

// Server-supplied or user-supplied text for a terminal or a label (names, descriptions,
// operators, members, error messages): as it is, except that control characters (C0, DEL, C1)
// and bidirectional or zero-width format characters become \xNN escapes of their UTF-8 bytes,
// so the text cannot move the cursor, retitle a terminal, forge a line or reorder what follows.
QString escapeControls(const QString &text);

// How many terminal columns the text takes: East Asian wide and fullwidth characters (CJK,
// Hangul, most emoji) two, combining marks and invisible format characters none, the rest one.
// For text shown already escaped (displayKey, escapeControls), so tables align by what is seen.
int displayWidth(const QString &text);
// The text followed by spaces up to `width` columns (displayWidth); as it is when wider.
QString padToWidth(const QString &text, int width);

// The bytes that separate a key's segments: : / { } | . , ; = @ - _ and space. "api:{acme}:3"
// has the segments api, acme and 3; a hash tag's braces are separators too.
inline bool isKeySeparator(char c)
{
    switch (c) {
    case ':': case '/': case '{': case '}': case '|': case '.': case ',':
    case ';': case '=': case '@': case '-': case '_': case ' ':
        return true;
    default:
        return false;
    }
}

// True when `id` appears in the key as whole segments: at the start or after a separator,
// and at the end or before one. "acme" is in "api:acme", "login:acme:/search", "rl:{acme}:3",
// not in "api:acmecorp" or "api:xacme". Bytes compare exactly (case matters, as in Redis); an
// id may hold separators itself ("acme-eu" is in "api:acme-eu:1"). An empty id is in no key.
bool keyHoldsSegment(const QByteArray &key, const QByteArray &id);

// Bytes for a message (a server's error reply, a key inside a sentence): valid UTF-8 as it is,
// and each byte that is not part of valid UTF-8 as \xNN, as displayKey writes it, never U+FFFD
// (so 'u:\xff' and 'u:\xfe' stay two keys). Control characters are left to escapeControls.
QString escapeInvalidUtf8(const QByteArray &bytes);

// True when the bytes are valid UTF-8 (shortest form, no surrogates), i.e. survive a round trip
// through QString unchanged.
bool isUtf8(const QByteArray &bytes);

// Natural order of names, as a person sorts them: runs of digits compare by their value
// (`user2` before `user10`, `w:9` before `w:10`), everything else byte by byte. Names equal
// by value (`a01`, `a1`) fall back to their bytes, so the order is strict and total.
bool naturalLess(QByteArrayView a, QByteArrayView b);

// Puts arbitrary bytes into a JSON object the way the CLI's --json output carries keys and
// members: `name` holds the text when the bytes are valid UTF-8, otherwise the escaped form of
// displayKey; `name`_base64 adds the exact bytes whenever the key is not plain (isPlainKey), so
// that keys with control characters or a NUL can be given back with --base64-keys.
void insertBytes(QJsonObject &object, const QString &name, const QByteArray &bytes);

} // namespace ratescope
