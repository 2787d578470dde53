// Key names as SCAN returned them, packed into one buffer: a page of ten thousand names is
// two allocations, not ten thousand, and freeing it on the GUI thread costs next to nothing.
#pragma once

#include <QByteArray>
#include <QByteArrayView>

#include <vector>

namespace ratescope::ui {

class ScannedNames {
public:
    size_t size() const { return m_ends.size(); }
    bool empty() const { return m_ends.empty(); }
    QByteArrayView at(size_t i) const
    {
        const qsizetype begin = i == 0 ? 0 : qsizetype(m_ends[i - 1]);
        return QByteArrayView(m_bytes.constData() + begin, qsizetype(m_ends[i]) - begin);
    }
    void append(QByteArrayView name)
    {
        m_bytes.append(name);
        m_ends.push_back(size_t(m_bytes.size()));
    }
    void reserve(size_t names, qsizetype bytes)
    {
        m_ends.reserve(names);
        m_bytes.reserve(bytes);
    }

private:
    QByteArray m_bytes;
    std::vector<size_t> m_ends; // where each name ends in m_bytes
};

} // namespace ratescope::ui
