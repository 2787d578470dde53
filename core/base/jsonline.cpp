#include "base/jsonline.h"

#include "base/keytext.h"

#include <QLocale>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace ratescope {

void JsonLine::appendString(QByteArray &out, const char *utf8, qsizetype size)
{
    // As Qt's JSON writer escapes: the quote, the backslash and every C0 control; the rest, DEL
    // and all of non-ASCII included, as it is.
    static constexpr char kHex[] = "0123456789abcdef";
    out.reserve(out.size() + size + 2);
    out.append('"');
    const char *run = utf8; // bytes written as they are, not yet appended
    const char *end = utf8 + size;
    for (const char *p = utf8; p < end; ++p) {
        const auto c = static_cast<unsigned char>(*p);
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        out.append(run, p - run);
        run = p + 1;
        switch (c) {
        case '"': out.append("\\\"", 2); break;
        case '\\': out.append("\\\\", 2); break;
        case '\b': out.append("\\b", 2); break;
        case '\f': out.append("\\f", 2); break;
        case '\n': out.append("\\n", 2); break;
        case '\r': out.append("\\r", 2); break;
        case '\t': out.append("\\t", 2); break;
        default: {
            const char escaped[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
            out.append(escaped, sizeof escaped);
        }
        }
    }
    out.append(run, end - run);
    out.append('"');
}

QByteArray &JsonLine::field(const char *name)
{
    for (Field &f : m_fields)
        if (f.name == name) {
            f.value.clear();
            return f.value;
        }
    m_fields.push_back({QByteArray(name), {}});
    return m_fields.back().value;
}

void JsonLine::add(const char *name, const QString &text)
{
    const QByteArray utf8 = text.toUtf8();
    appendString(field(name), utf8.constData(), utf8.size());
}

void JsonLine::add(const char *name, QLatin1StringView text)
{
    add(name, QString(text));
}

void JsonLine::add(const char *name, qint64 number)
{
    field(name) = QByteArray::number(number);
}

void JsonLine::add(const char *name, double number)
{
    field(name) = std::isfinite(number) ? QByteArray::number(number, 'g', QLocale::FloatingPointShortest) : QByteArrayLiteral("null");
}

void JsonLine::addBytes(const char *name, const QByteArray &bytes)
{
    if (isPlainKey(bytes)) { // valid UTF-8: its bytes are the text's
        appendString(field(name), bytes.constData(), bytes.size());
        return;
    }
    add(name, isUtf8(bytes) ? QString::fromUtf8(bytes) : displayKey(bytes));
    const QByteArray base64Name = QByteArray(name) + "_base64";
    const QByteArray base64 = bytes.toBase64();
    appendString(field(base64Name.constData()), base64.constData(), base64.size());
}

void JsonLine::appendTo(QByteArray &out) const
{
    std::vector<const Field *> sorted;
    sorted.reserve(m_fields.size());
    for (const Field &f : m_fields)
        sorted.push_back(&f);
    std::sort(sorted.begin(), sorted.end(), [](const Field *a, const Field *b) { return a->name < b->name; });
    out.append('{');
    for (const Field *f : sorted) {
        if (f != sorted.front())
            out.append(',');
        appendString(out, f->name.constData(), f->name.size());
        out.append(':');
        out.append(f->value);
    }
    out.append('}');
}

QByteArray JsonLine::toJson() const
{
    QByteArray out;
    appendTo(out);
    return out;
}

} // namespace ratescope
