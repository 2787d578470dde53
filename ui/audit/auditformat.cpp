#include "auditformat.h"

#include "base/keytext.h"

#include <cmath>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>

namespace ratescope::ui {

namespace {

QString jsonString(const QString &s)
{
    const QByteArray bytes = s.toUtf8();
    if (!isPlainKey(bytes))
        return displayKey(bytes); // quoted, escaped
    QString out = s;
    out.replace(QLatin1Char('\\'), QLatin1String("\\\\")).replace(QLatin1Char('"'), QLatin1String("\\\""));
    return QLatin1Char('"') + out + QLatin1Char('"');
}

QString jsonNumber(double d)
{
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9007199254740992.0)
        return QString::number(qint64(d));
    return QString::number(d, 'g', 15);
}

// JSON text with every string passed through jsonString: QJsonDocument would let bidi
// controls and C1 characters through as they are.
void writeJson(const QJsonValue &v, int indent, bool pretty, QString &out)
{
    const QString pad = pretty ? QString(indent * 2, QLatin1Char(' ')) : QString();
    const QString inner = pretty ? QString((indent + 1) * 2, QLatin1Char(' ')) : QString();
    const QString nl = pretty ? QStringLiteral("\n") : QString();
    const QString sep = pretty ? QStringLiteral(": ") : QStringLiteral(":");
    switch (v.type()) {
    case QJsonValue::Null:
    case QJsonValue::Undefined:
        out += QLatin1String("null");
        break;
    case QJsonValue::Bool:
        out += v.toBool() ? QLatin1String("true") : QLatin1String("false");
        break;
    case QJsonValue::Double:
        out += jsonNumber(v.toDouble());
        break;
    case QJsonValue::String:
        out += jsonString(v.toString());
        break;
    case QJsonValue::Array: {
        const QJsonArray a = v.toArray();
        if (a.isEmpty()) {
            out += QLatin1String("[]");
            break;
        }
        out += QLatin1Char('[') + nl;
        for (qsizetype i = 0; i < a.size(); ++i) {
            out += inner;
            writeJson(a[i], indent + 1, pretty, out);
            out += (i + 1 < a.size() ? QStringLiteral(",") : QString()) + nl;
        }
        out += pad + QLatin1Char(']');
        break;
    }
    case QJsonValue::Object: {
        const QJsonObject o = v.toObject();
        if (o.isEmpty()) {
            out += QLatin1String("{}");
            break;
        }
        out += QLatin1Char('{') + nl;
        qsizetype i = 0;
        for (auto it = o.begin(); it != o.end(); ++it, ++i) {
            out += inner + jsonString(it.key()) + sep;
            writeJson(it.value(), indent + 1, pretty, out);
            out += (i + 1 < o.size() ? QStringLiteral(",") : QString()) + nl;
        }
        out += pad + QLatin1Char('}');
        break;
    }
    }
}

QString compactJson(const QJsonValue &v)
{
    QString out;
    writeJson(v, 0, false, out);
    return out;
}

bool parseJson(const QString &text, QJsonValue *out)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8(), &error);
    if (error.error != QJsonParseError::NoError || doc.isNull())
        return false;
    *out = doc.isObject() ? QJsonValue(doc.object()) : QJsonValue(doc.array());
    return true;
}

void flatten(const QJsonValue &v, const QString &path, QHash<QString, QString> &fields, QStringList &order)
{
    if (v.isObject() && !v.toObject().isEmpty()) {
        const QJsonObject o = v.toObject();
        for (auto it = o.begin(); it != o.end(); ++it)
            flatten(it.value(), path.isEmpty() ? it.key() : path + QLatin1Char('.') + it.key(), fields, order);
        return;
    }
    const QString name = path.isEmpty() ? QStringLiteral("(value)") : path;
    if (!order.contains(name))
        order << name;
    // Records keep their times (updated_at, set_at, expires_at) as milliseconds since the epoch:
    // shown as a time, the number after it.
    if (name.endsWith(QLatin1String("_at")) && v.isDouble() && v.toDouble() >= 1e12 && v.toDouble() < 1e14) {
        const qint64 ms = qint64(v.toDouble());
        fields.insert(name, QStringLiteral("%1 UTC (%2)")
                                .arg(QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz")))
                                .arg(ms));
        return;
    }
    fields.insert(name, compactJson(v));
}

QByteArray csvCell(const QString &text, bool neutralise = true)
{
    QString s = text;
    // =, +, -, @ (and a leading tab or CR) start a formula in spreadsheet applications.
    if (neutralise && !s.isEmpty() && QStringLiteral("=+-@\t\r").contains(s.front()))
        s.prepend(QLatin1Char('\''));
    s.replace(QLatin1Char('"'), QLatin1String("\"\""));
    return '"' + s.toUtf8() + '"';
}

QString csvJson(const QString &text)
{
    QJsonValue v;
    if (text.isEmpty())
        return {};
    return parseJson(text, &v) ? compactJson(v) : auditText(text);
}

} // namespace

QString auditText(const QString &value)
{
    return displayKey(value.toUtf8());
}

QString prettyAuditJson(const QString &json)
{
    if (json.isEmpty())
        return {};
    QJsonValue v;
    if (parseJson(json, &v)) {
        QString out;
        writeJson(v, 0, true, out);
        return out;
    }
    QStringList lines;
    for (const QString &line : json.split(QLatin1Char('\n')))
        lines << auditText(line);
    return lines.join(QLatin1Char('\n'));
}

std::vector<FieldChange> changedFields(const QString &beforeJson, const QString &afterJson)
{
    QHash<QString, QString> before, after;
    QStringList order;
    auto load = [&order](const QString &text, QHash<QString, QString> &fields) {
        if (text.isEmpty())
            return;
        QJsonValue v;
        if (parseJson(text, &v))
            flatten(v, QString(), fields, order);
        else
            flatten(QJsonValue(text), QString(), fields, order);
    };
    load(beforeJson, before);
    load(afterJson, after);
    std::vector<FieldChange> changes;
    for (const QString &field : order) {
        const QString b = before.value(field), a = after.value(field);
        if (b != a)
            changes.push_back({field, b, a});
    }
    return changes;
}

QByteArray auditCsvHeader()
{
    return "time_utc,id,actor,os_user,host,action,target,count,before,after,reason\r\n";
}

QByteArray auditCsvLine(const AuditEntry &e)
{
    QByteArrayList cells;
    cells << csvCell(e.time.toUTC().toString(Qt::ISODateWithMs), false) << csvCell(e.id, false) << csvCell(auditText(e.actor))
          << csvCell(auditText(e.osUser)) << csvCell(auditText(e.host)) << csvCell(auditText(e.action)) << csvCell(auditText(e.target))
          << QByteArray::number(e.count) << csvCell(csvJson(e.before)) << csvCell(csvJson(e.after))
          << csvCell(auditText(e.reason));
    return cells.join(',') + "\r\n";
}

} // namespace ratescope::ui
