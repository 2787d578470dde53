// One flat JSON object, written exactly as QJsonDocument(object).toJson(QJsonDocument::Compact)
// writes the same QJsonObject (names in order, strings escaped alike, numbers alike), without
// building one. For output of many rows: `keys --json` writes a line per key, and building and
// writing a QJsonObject per row took two thirds of the command's own time.
#pragma once

#include <QByteArray>
#include <QString>

#include <vector>

namespace ratescope {

class JsonLine {
public:
    // `name` is ASCII (the names of our own fields). A name given twice keeps the last value,
    // as QJsonObject::insert does.
    void add(const char *name, const QString &text);
    void add(const char *name, QLatin1StringView text);
    void add(const char *name, qint64 number);
    void add(const char *name, int number) { add(name, qint64(number)); }
    void add(const char *name, double number);
    // Arbitrary bytes as insertBytes (keytext.h) puts them: `name` holds the text, or the
    // escaped form of displayKey when the bytes are not UTF-8; `name`_base64 the exact bytes
    // whenever the key is not plain.
    void addBytes(const char *name, const QByteArray &bytes);

    // The object, "{...}", appended to `out`.
    void appendTo(QByteArray &out) const;
    QByteArray toJson() const;

    // A JSON string of UTF-8 text, quotes included, appended to `out`.
    static void appendString(QByteArray &out, const char *utf8, qsizetype size);

private:
    // Starts the value of `name` (a literal, or a name kept in m_ownNames): appended to
    // m_values until the next field starts.
    void start(const char *name);
    void end();

    struct Field {
        const char *name = nullptr; // nullptr: given again later
        qsizetype from = 0, to = 0; // its value in m_values
    };
    std::vector<Field> m_fields;
    QByteArray m_values;
    std::vector<QByteArray> m_ownNames; // names made here (`name`_base64)
};

} // namespace ratescope
