// A refusal from the server in words an operator can act on, the same on every page: NOPERM
// names the user, the command and what to ask for ("user 'support' may not run UNLINK; ask for
// +unlink or use a profile with write access"). Other texts come back as they are.
#pragma once

#include <QString>

namespace ratescope::ui {

// user: the connection's ACL user (empty: "default"), unless the server's text names one.
// keys: what the refused keys are, for a refusal by key pattern ("these keys", "the audit trail").
QString explainRefusal(const QString &serverText, const QString &user, const QString &keys = QStringLiteral("these keys"));

} // namespace ratescope::ui
