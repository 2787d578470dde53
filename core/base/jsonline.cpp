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

void JsonLine::start(const char *name)
{
    for (Field &f : m_fields)
        if (f.name && std::strcmp(f.name, name) == 0)
            f.name = nullptr; // as QJsonObject::insert: the last value counts
    m_fields.push_back({name, m_values.size(), m_values.size()});
}

void JsonLine::end()
{
    m_fields.back().to = m_values.size();
}

void JsonLine::add(const char *name, const QString &text)
{
    start(name);
    const QByteArray utf8 = text.toUtf8();
    appendString(m_values, utf8.constData(), utf8.size());
    end();
}

void JsonLine::add(const char *name, QLatin1StringView text)
{
    add(name, QString(text));
}

void JsonLine::add(const char *name, qint64 number)
{
    start(name);
    m_values.append(QByteArray::number(number));
    end();
}

void JsonLine::add(const char *name, double number)
{
    start(name);
    m_values.append(std::isfinite(number) ? QByteArray::number(number, 'g', QLocale::FloatingPointShortest) : QByteArrayLiteral("null"));
    end();
}

void JsonLine::addBytes(const char *name, const QByteArray &bytes)
{
    if (isPlainKey(bytes)) { // valid UTF-8: its bytes are the text's
        start(name);
        appendString(m_values, bytes.constData(), bytes.size());
        end();
        return;
    }
    add(name, isUtf8(bytes) ? QString::fromUtf8(bytes) : displayKey(bytes));
    m_ownNames.push_back(QByteArray(name) + "_base64");
    start(m_ownNames.back().constData()); // its bytes stay where they are when the vector grows
    const QByteArray base64 = bytes.toBase64();
    appendString(m_values, base64.constData(), base64.size());
    end();
}

void JsonLine::appendTo(QByteArray &out) const
{
    const Field *sorted[32];
    std::vector<const Field *> many;
    const Field **begin = sorted;
    size_t n = 0;
    if (m_fields.size() > std::size(sorted)) {
        many.resize(m_fields.size());
        begin = many.data();
    }
    for (const Field &f : m_fields)
        if (f.name)
            begin[n++] = &f;
    std::sort(begin, begin + n, [](const Field *a, const Field *b) { return std::strcmp(a->name, b->name) < 0; });
    out.append('{');
    for (size_t i = 0; i < n; ++i) {
        if (i > 0)
            out.append(',');
        appendString(out, begin[i]->name, qsizetype(std::strlen(begin[i]->name)));
        out.append(':');
        out.append(m_values.constData() + begin[i]->from, begin[i]->to - begin[i]->from);
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
