#include "base/keytext.h"

#include <QStringDecoder>

namespace ratescope {

namespace {

// Characters that change how the text around them is laid out or read without being seen:
// bidirectional embeddings, overrides and isolates, marks, zero-width characters, and the
// line and paragraph separators (U+2028, U+2029), which terminals and labels may break on.
bool isInvisibleFormat(char32_t c)
{
    return (c >= 0x200B && c <= 0x200F) || (c >= 0x2028 && c <= 0x202E) || (c >= 0x2060 && c <= 0x2069) || c == 0x061C || c == 0xFEFF ||
           c == 0x00AD;
}

bool isControl(char32_t c)
{
    return c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0);
}

// Decodes one UTF-8 sequence at `at`; returns its length, or 0 when the bytes there are not a
// valid, shortest-form sequence of a scalar value.
int decodeUtf8(const QByteArray &bytes, qsizetype at, char32_t *out)
{
    const auto b = [&](qsizetype i) { return uchar(bytes[i]); };
    const uchar lead = b(at);
    int length = 0;
    char32_t c = 0, min = 0;
    if (lead < 0x80) {
        *out = lead;
        return 1;
    } else if ((lead & 0xE0) == 0xC0) {
        length = 2, c = lead & 0x1F, min = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
        length = 3, c = lead & 0x0F, min = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
        length = 4, c = lead & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (at + length > bytes.size())
        return 0;
    for (int i = 1; i < length; ++i) {
        if ((b(at + i) & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (b(at + i) & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *out = c;
    return length;
}

bool isShownAsIs(char32_t c)
{
    return !isControl(c) && !isInvisibleFormat(c);
}

} // namespace

bool keyHoldsSegment(const QByteArray &key, const QByteArray &id)
{
    if (id.isEmpty())
        return false;
    for (qsizetype at = key.indexOf(id); at >= 0; at = key.indexOf(id, at + 1)) {
        const qsizetype end = at + id.size();
        if ((at == 0 || isKeySeparator(key[at - 1])) && (end == key.size() || isKeySeparator(key[end])))
            return true;
    }
    return false;
}

bool isPlainKey(const QByteArray &key)
{
    if (key.startsWith('"'))
        return false;
    for (qsizetype i = 0; i < key.size();) {
        char32_t c = 0;
        const int n = decodeUtf8(key, i, &c);
        if (n == 0 || !isShownAsIs(c))
            return false;
        i += n;
    }
    return true;
}

QString displayKey(const QByteArray &key)
{
    if (isPlainKey(key))
        return QString::fromUtf8(key);
    QString out = QStringLiteral("\"");
    for (qsizetype i = 0; i < key.size();) {
        char32_t c = 0;
        const int n = decodeUtf8(key, i, &c);
        switch (n == 1 ? c : 0xFFFFFFFF) {
        case '\\':
            out += QLatin1String("\\\\");
            break;
        case '"':
            out += QLatin1String("\\\"");
            break;
        case '\n':
            out += QLatin1String("\\n");
            break;
        case '\r':
            out += QLatin1String("\\r");
            break;
        case '\t':
            out += QLatin1String("\\t");
            break;
        case '\a':
            out += QLatin1String("\\a");
            break;
        case '\b':
            out += QLatin1String("\\b");
            break;
        default:
            if (n > 0 && isShownAsIs(c)) {
                out += QString::fromUtf8(key.constData() + i, n);
            } else {
                // Invalid, control or invisible: every byte of it (one byte when invalid) as \xNN.
                for (int j = 0; j < std::max(n, 1); ++j)
                    out += QStringLiteral("\\x%1").arg(uchar(key[i + j]), 2, 16, QLatin1Char('0'));
            }
        }
        i += std::max(n, 1);
    }
    out += QLatin1Char('"');
    return out;
}

QString escapeInvalidUtf8(const QByteArray &bytes)
{
    QString out;
    out.reserve(bytes.size());
    qsizetype run = 0; // the start of the valid bytes not yet copied
    for (qsizetype i = 0; i < bytes.size();) {
        char32_t c = 0;
        const int n = decodeUtf8(bytes, i, &c);
        if (n > 0) {
            i += n;
            continue;
        }
        out += QString::fromUtf8(bytes.constData() + run, i - run);
        out += QStringLiteral("\\x%1").arg(uchar(bytes[i]), 2, 16, QLatin1Char('0'));
        run = ++i;
    }
    out += QString::fromUtf8(bytes.constData() + run, bytes.size() - run);
    return out;
}

QString escapeControls(const QString &text)
{
    const QByteArray bytes = text.toUtf8();
    QString out;
    out.reserve(text.size());
    for (qsizetype i = 0; i < bytes.size();) {
        char32_t c = 0;
        const int n = std::max(decodeUtf8(bytes, i, &c), 1); // toUtf8 never yields invalid bytes
        if (isShownAsIs(c)) {
            out += QString::fromUtf8(bytes.constData() + i, n);
        } else {
            for (int j = 0; j < n; ++j)
                out += QStringLiteral("\\x%1").arg(uchar(bytes[i + j]), 2, 16, QLatin1Char('0'));
        }
        i += n;
    }
    return out;
}

bool isUtf8(const QByteArray &bytes)
{
    for (qsizetype i = 0; i < bytes.size();) {
        char32_t c = 0;
        const int n = decodeUtf8(bytes, i, &c);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

void insertBytes(QJsonObject &object, const QString &name, const QByteArray &bytes)
{
    object.insert(name, isUtf8(bytes) ? QString::fromUtf8(bytes) : displayKey(bytes));
    if (!isPlainKey(bytes)) // also text with a NUL, which no command line can carry
        object.insert(name + QStringLiteral("_base64"), QString::fromLatin1(bytes.toBase64()));
}

} // namespace ratescope
