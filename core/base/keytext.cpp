#include "base/keytext.h"

#include <QStringDecoder>

#include <algorithm>
#include <iterator>
#include <utility>

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

// East Asian Wide (W) and Fullwidth (F) ranges, in order (Unicode 15, EastAsianWidth.txt,
// merged where the gaps hold no assigned character).
constexpr std::pair<char32_t, char32_t> kWide[] = {
    {0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},   {0x23F0, 0x23F0},   {0x23F3, 0x23F3},
    {0x25FD, 0x25FE},   {0x2614, 0x2615},   {0x2648, 0x2653},   {0x267F, 0x267F},   {0x2693, 0x2693},   {0x26A1, 0x26A1},
    {0x26AA, 0x26AB},   {0x26BD, 0x26BE},   {0x26C4, 0x26C5},   {0x26CE, 0x26CE},   {0x26D4, 0x26D4},   {0x26EA, 0x26EA},
    {0x26F2, 0x26F3},   {0x26F5, 0x26F5},   {0x26FA, 0x26FA},   {0x26FD, 0x26FD},   {0x2705, 0x2705},   {0x270A, 0x270B},
    {0x2728, 0x2728},   {0x274C, 0x274C},   {0x274E, 0x274E},   {0x2753, 0x2755},   {0x2757, 0x2757},   {0x2795, 0x2797},
    {0x27B0, 0x27B0},   {0x27BF, 0x27BF},   {0x2B1B, 0x2B1C},   {0x2B50, 0x2B50},   {0x2B55, 0x2B55},   {0x2E80, 0x303E},
    {0x3041, 0x33FF},   {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},   {0xA960, 0xA97F},   {0xAC00, 0xD7A3},
    {0xF900, 0xFAFF},   {0xFE10, 0xFE19},   {0xFE30, 0xFE6F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x16FE0, 0x16FE4},
    {0x17000, 0x18CFF}, {0x1AFF0, 0x1B2FF}, {0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A},
    {0x1F200, 0x1F251}, {0x1F260, 0x1F265}, {0x1F300, 0x1F320}, {0x1F32D, 0x1F335}, {0x1F337, 0x1F37C}, {0x1F37E, 0x1F393},
    {0x1F3A0, 0x1F3CA}, {0x1F3CF, 0x1F3D3}, {0x1F3E0, 0x1F3F0}, {0x1F3F4, 0x1F3F4}, {0x1F3F8, 0x1F43E}, {0x1F440, 0x1F440},
    {0x1F442, 0x1F4FC}, {0x1F4FF, 0x1F53D}, {0x1F54B, 0x1F54E}, {0x1F550, 0x1F567}, {0x1F57A, 0x1F57A}, {0x1F595, 0x1F596},
    {0x1F5A4, 0x1F5A4}, {0x1F5FB, 0x1F64F}, {0x1F680, 0x1F6C5}, {0x1F6CC, 0x1F6CC}, {0x1F6D0, 0x1F6D2}, {0x1F6D5, 0x1F6D7},
    {0x1F6DC, 0x1F6DF}, {0x1F6EB, 0x1F6EC}, {0x1F6F4, 0x1F6FC}, {0x1F7E0, 0x1F7EB}, {0x1F7F0, 0x1F7F0}, {0x1F90C, 0x1F93A},
    {0x1F93C, 0x1F945}, {0x1F947, 0x1F9FF}, {0x1FA70, 0x1FAFF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
};

int columnsOf(char32_t c)
{
    const QChar::Category category = QChar::category(c);
    if (category == QChar::Mark_NonSpacing || category == QChar::Mark_Enclosing || category == QChar::Other_Format ||
        isInvisibleFormat(c))
        return 0;
    const auto wide = std::upper_bound(std::begin(kWide), std::end(kWide), c,
                                       [](char32_t v, const std::pair<char32_t, char32_t> &r) { return v < r.first; });
    return wide != std::begin(kWide) && c <= std::prev(wide)->second ? 2 : 1;
}

} // namespace

int displayWidth(const QString &text)
{
    int width = 0;
    for (const char32_t c : text.toUcs4())
        width += columnsOf(c);
    return width;
}

QString padToWidth(const QString &text, int width)
{
    const int shown = displayWidth(text);
    return shown >= width ? text : text + QString(width - shown, QLatin1Char(' '));
}

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

bool naturalLess(QByteArrayView a, QByteArrayView b)
{
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    qsizetype i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (digit(a[i]) && digit(b[j])) {
            // Two runs of digits: by value (leading zeros aside: the longer run is larger, an
            // equal length compares digit by digit).
            qsizetype ie = i, je = j;
            while (ie < a.size() && digit(a[ie]))
                ++ie;
            while (je < b.size() && digit(b[je]))
                ++je;
            qsizetype is = i, js = j;
            while (is + 1 < ie && a[is] == '0')
                ++is;
            while (js + 1 < je && b[js] == '0')
                ++js;
            if (ie - is != je - js)
                return ie - is < je - js;
            for (qsizetype k = 0; k < ie - is; ++k)
                if (a[is + k] != b[js + k])
                    return a[is + k] < b[js + k];
            i = ie;
            j = je;
            continue;
        }
        if (a[i] != b[j])
            return uchar(a[i]) < uchar(b[j]);
        ++i;
        ++j;
    }
    if (a.size() - i != b.size() - j)
        return a.size() - i < b.size() - j;
    return a < b; // equal by value: the bytes decide (a01 before a1)
}

} // namespace ratescope
