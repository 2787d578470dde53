// The prefix under which Ratescope keeps its records in Redis ("ratescope:" unless
// configured): policies, overrides, the audit stream, the events channel. One type, so that
// the text people type (--namespace) and the key bytes made of it are converted in one place.
#pragma once

#include <QByteArray>
#include <QString>

namespace ratescope {

class MetadataNamespace {
public:
    static constexpr const char *kDefault = "ratescope:";

    MetadataNamespace()
        : MetadataNamespace(QString::fromLatin1(kDefault))
    {
    }
    // Implicit: a prefix given as text or bytes is one. Validation is requireValidNamespace's (inputcheck.h).
    MetadataNamespace(const QString &prefix)
        : m_text(prefix)
        , m_bytes(prefix.toUtf8())
    {
    }
    MetadataNamespace(const QByteArray &prefix)
        : m_text(QString::fromUtf8(prefix))
        , m_bytes(prefix)
    {
    }
    MetadataNamespace(const char *prefix)
        : MetadataNamespace(QByteArray(prefix))
    {
    }

    const QString &text() const { return m_text; }
    const QByteArray &bytes() const { return m_bytes; }
    bool isEmpty() const { return m_bytes.isEmpty(); }
    // The key of one record: "<prefix><name>", e.g. key("policies").
    QByteArray key(const QByteArray &name) const { return m_bytes + name; }
    // Whether a key lies under the prefix (an empty namespace holds none).
    bool holds(const QByteArray &key) const { return !m_bytes.isEmpty() && key.startsWith(m_bytes); }
    // Whether a key is one of Ratescope's records: the policies hash, the audit stream, an override.
    bool isRecord(const QByteArray &k) const
    {
        return holds(k) && (k == key("policies") || k == key("audit") || k.startsWith(key("override:")));
    }

private:
    QString m_text;
    QByteArray m_bytes;
};

} // namespace ratescope
