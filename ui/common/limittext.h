// The limit, window and cost a person types into a form, read the same way on every page (the
// Burst form, the What-if specs, the policy editor), with the same words for what is wrong.
// Each field on its own: their combination (a cost above the limit) is LimitSpec's to judge.
#pragma once

#include <QString>

#include <optional>

namespace ratescope::ui {

// A whole number typed by a person: "20000", "20,000", "20 000" and "20_000" alike.
std::optional<qint64> parseCount(const QString &text);

// A field's value, or why it has none.
struct FieldValue {
    std::optional<qint64> value;
    QString problem; // empty when the field reads
};

FieldValue parseLimitField(const QString &text);  // requests per window; empty: needed
FieldValue parseWindowField(const QString &text); // "10s", "1m", "1h30m" in µs; empty: needed
FieldValue parseCostField(const QString &text);   // empty: 1

} // namespace ratescope::ui
