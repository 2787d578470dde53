#include "overrideeditor.h"

#include "editorfields.h"

#include "displayformat.h"
#include "base/duration.h"
#include "base/errors.h"
#include "base/keytext.h"
#include "policyeditor.h"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace ratescope::ui {

namespace {

constexpr qint64 kMinuteUs = 60LL * 1000000;

} // namespace

OverrideEditor::OverrideEditor(QWidget *parent)
    : QWidget(parent)
{
    m_title = plainLabel(QStringLiteral("Temporary limit for one key"));
    QFont titleFont = m_title->font();
    titleFont.setBold(true);
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.2);
    m_title->setFont(titleFont);
    m_key = new QLineEdit;
    m_key->setPlaceholderText(QStringLiteral("the limiter key exactly, e.g. api:acme"));
    m_inForce = plainLabel();
    m_inForce->setWordWrap(false); // a wrapped label in a form row gets clipped: one line, it is short
    m_limit = new QLineEdit;
    m_window = new QLineEdit;
    m_window->setPlaceholderText(QStringLiteral("empty: keep the policy's window"));
    m_expiry = new QComboBox;
    m_expiry->addItem(QStringLiteral("15 minutes"), 15 * kMinuteUs);
    m_expiry->addItem(QStringLiteral("1 hour"), 60 * kMinuteUs);
    m_expiry->addItem(QStringLiteral("2 hours"), 120 * kMinuteUs);
    m_expiry->addItem(QStringLiteral("1 day"), 1440 * kMinuteUs);
    m_expiry->addItem(QStringLiteral("Custom…"), 0);
    m_expiry->setCurrentIndex(1);
    m_customExpiry = new QLineEdit;
    m_customExpiry->setPlaceholderText(QStringLiteral("e.g. 45m, 3h, 2d"));
    m_customExpiry->setEnabled(false);
    m_keyProblem = problemLabelFor(this);
    m_limitProblem = problemLabelFor(this);
    m_windowProblem = problemLabelFor(this);
    m_expiryProblem = problemLabelFor(this);

    auto *form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
    auto addField = [form](const QString &label, QWidget *field, QLabel *problem) { addFieldRow(form, label, field, problem); };
    addField(QStringLiteral("Key"), m_key, m_keyProblem);
    form->addRow(QStringLiteral("In force now"), m_inForce);
    addField(QStringLiteral("Temporary limit"), m_limit, m_limitProblem);
    addField(QStringLiteral("Window"), m_window, m_windowProblem);
    auto *expiryRow = new QWidget;
    auto *eh = new QHBoxLayout(expiryRow);
    eh->setContentsMargins(0, 0, 0, 0);
    eh->addWidget(m_expiry);
    eh->addWidget(m_customExpiry, 1);
    addField(QStringLiteral("Expires after"), expiryRow, m_expiryProblem);

    m_status = plainLabel();
    m_status->hide();
    m_save = new QPushButton(QStringLiteral("Grant"));
    m_save->setDefault(true);
    m_clear = new QPushButton(QStringLiteral("Clear override"));
    m_close = new QPushButton(QStringLiteral("Close"));
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_clear);
    buttons->addStretch();
    buttons->addWidget(m_close);
    buttons->addWidget(m_save);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_title);
    layout->addLayout(form);
    layout->addWidget(m_status);
    layout->addStretch();
    layout->addLayout(buttons);

    for (QLineEdit *e : {m_limit, m_window, m_customExpiry})
        connect(e, &QLineEdit::textChanged, this, &OverrideEditor::revalidate);
    connect(m_key, &QLineEdit::textChanged, this, [this] {
        revalidate();
        emit keyChanged(key());
    });
    connect(m_expiry, &QComboBox::currentIndexChanged, this, [this] {
        m_customExpiry->setEnabled(m_expiry->currentData().toLongLong() == 0);
        revalidate();
    });
    connect(m_save, &QPushButton::clicked, this, &OverrideEditor::saveRequested);
    connect(m_clear, &QPushButton::clicked, this, &OverrideEditor::clearRequested);
    connect(m_close, &QPushButton::clicked, this, &OverrideEditor::closeRequested);
}

void OverrideEditor::edit(const QByteArray &key, const std::optional<LimitSpec> &inForce, const QString &inForceFrom)
{
    m_fixedKey = key;
    m_title->setText(key.isEmpty() ? QStringLiteral("Grant a key a temporary limit")
                                   : QStringLiteral("Temporary limit for %1").arg(displayKey(key)));
    {
        const QSignalBlocker block(m_key);
        m_key->setText(key.isEmpty() ? QString() : displayKey(key));
    }
    // A key from the keyspace is taken as its exact bytes; its escaped form is not editable.
    m_key->setReadOnly(!key.isEmpty());
    m_limit->clear();
    m_window->clear();
    setInForce(inForce, inForceFrom);
    setStatus({}, false);
    revalidate();
}

void OverrideEditor::setInForce(const std::optional<LimitSpec> &inForce, const QString &from)
{
    m_inForce->setText(inForce ? QStringLiteral("%1, %2 (%3)").arg(algorithmName(inForce->algorithm), formatLimit(*inForce), from)
                               : QStringLiteral("no policy covers this key"));
    // A starting point the operator changes; never over what they typed.
    if (inForce && m_limit->text().isEmpty())
        m_limit->setText(QString::number(inForce->limit));
}

QByteArray OverrideEditor::key() const
{
    return m_fixedKey.isEmpty() ? m_key->text().toUtf8() : m_fixedKey;
}

std::optional<qint64> OverrideEditor::forUs() const
{
    const qint64 picked = m_expiry->currentData().toLongLong();
    if (picked > 0)
        return picked;
    try {
        const qint64 us = parseDurationUs(m_customExpiry->text().trimmed());
        if (us >= 1000 && us <= kMaxWindowUs)
            return us;
    } catch (const UsageError &) {
    }
    return std::nullopt;
}

QStringList OverrideEditor::problems() const
{
    QStringList all;
    for (QLabel *l : {m_keyProblem, m_limitProblem, m_windowProblem, m_expiryProblem})
        if (!l->text().isEmpty())
            all << l->text();
    return all;
}

std::optional<Override> OverrideEditor::proposed() const
{
    if (!problems().isEmpty())
        return std::nullopt;
    Override o;
    o.key = key();
    o.limit = m_limit->text().trimmed().toLongLong();
    o.windowUs = m_window->text().trimmed().isEmpty() ? 0 : parseDurationUs(m_window->text().trimmed());
    return o;
}

void OverrideEditor::revalidate()
{
    auto show = [](QLabel *l, const QString &text) {
        l->setText(text);
        l->setVisible(!text.isEmpty());
    };
    show(m_keyProblem, key().isEmpty() ? QStringLiteral("an override needs a key") : QString());
    bool ok = false;
    const qint64 limit = m_limit->text().trimmed().toLongLong(&ok);
    show(m_limitProblem, !ok ? QStringLiteral("the limit must be a whole number")
                         : (limit < 1 || limit > kMaxLimit)
                             ? QStringLiteral("override limit must be between 1 and %1, not %2").arg(kMaxLimit).arg(limit)
                             : QString());
    QString windowProblem;
    if (!m_window->text().trimmed().isEmpty()) {
        try {
            const qint64 w = parseDurationUs(m_window->text().trimmed());
            if (w < kMinWindowUs || w > kMaxWindowUs)
                windowProblem = QStringLiteral("override window must be between 1ms and 366d");
        } catch (const UsageError &e) {
            windowProblem = e.message();
        }
    }
    show(m_windowProblem, windowProblem);
    show(m_expiryProblem, forUs() ? QString() : QStringLiteral("an override must last between 1ms and 366d, e.g. 45m"));
    const bool valid = problems().isEmpty();
    m_save->setEnabled(m_writable && valid);
    m_save->setToolTip(!m_writable ? m_whyNot : valid ? QString() : QStringLiteral("Correct the fields marked first"));
    m_clear->setEnabled(m_writable && !key().isEmpty());
    m_clear->setToolTip(m_writable ? QStringLiteral("Remove the override now; the policy's limits apply again") : m_whyNot);
}

void OverrideEditor::setWritable(bool writable, const QString &why)
{
    m_writable = writable;
    m_whyNot = why;
    revalidate();
}

void OverrideEditor::setStatus(const QString &text, bool problem)
{
    QPalette pal = palette();
    if (problem)
        pal.setColor(QPalette::WindowText, problemColor(palette()));
    m_status->setPalette(pal);
    m_status->setText(text);
    m_status->setVisible(!text.isEmpty());
}

} // namespace ratescope::ui
