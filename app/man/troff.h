// Man pages in troff (man(7) macros), written by the executables themselves from the option
// lists that print --help, so a page cannot drift from the help (tests/cli/tst_manpages.cpp compares them).
// help2man cannot do this: it reads one --help output and knows nothing of subcommands.
#pragma once

#include <QCommandLineOption>
#include <QString>
#include <QStringList>

namespace ratescope::man {

// Text as troff prints it literally: backslashes escaped, '-' as the minus sign that options
// need, anything outside ASCII as a named character, and no line starting with a control
// character ('.' or '\'').
inline QString escape(const QString &text)
{
    QString out;
    out.reserve(text.size() + 16);
    bool lineStart = true;
    for (const char32_t c : text.toUcs4()) {
        if (lineStart && (c == U'.' || c == U'\''))
            out += QStringLiteral("\\&");
        lineStart = c == U'\n';
        if (c == U'\\')
            out += QStringLiteral("\\e");
        else if (c == U'-')
            out += QStringLiteral("\\-");
        else if (c > 0x7e || (c < 0x20 && c != U'\n'))
            out += QStringLiteral("\\[u%1]").arg(QString::number(uint(c), 16).toUpper().rightJustified(4, QLatin1Char('0')));
        else
            out += QChar(char16_t(c));
    }
    return out;
}

// ".TH" for a page of section 1; no date, so a rebuild of the same version gives the same page.
inline QString header(const QString &name, const QString &version, const QString &summary)
{
    return QStringLiteral(".TH \"%1\" \"1\" \"\" \"Ratescope %2\" \"User Commands\"\n"
                          ".SH NAME\n%3 \\- %4\n")
        .arg(escape(name.toUpper()), escape(version), escape(name), escape(summary));
}

// One option as a tagged paragraph: "\fB\-\-name\fR \fIVALUE\fR" and its description. The
// option names are the only \fB...\fR words on a .TP tag line (tests/man reads them back).
inline QString option(const QCommandLineOption &o)
{
    QStringList names;
    for (const QString &n : o.names())
        names << QStringLiteral("\\fB%1\\fR").arg(escape((n.size() == 1 ? QStringLiteral("-") : QStringLiteral("--")) + n));
    QString tag = names.join(QStringLiteral(", "));
    if (!o.valueName().isEmpty())
        tag += QStringLiteral(" \\fI%1\\fR").arg(escape(o.valueName()));
    return QStringLiteral(".TP\n%1\n%2\n").arg(tag, escape(o.description()));
}

inline QString options(const QList<QCommandLineOption> &list)
{
    QString text;
    for (const QCommandLineOption &o : list)
        if (!(o.flags() & QCommandLineOption::HiddenFromHelp))
            text += option(o);
    return text;
}

} // namespace ratescope::man
