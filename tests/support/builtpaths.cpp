#include "builtpaths.h"

#include <QDir>
#include <QFileInfo>
#include <QFile>

#include <cstdio>
#include <cstdlib>

namespace {

QString iniPath()
{
    // Every executable lives in <build>/tests/<group>/; the file is in <build>/tests/.
    const QString exe = QFileInfo(QStringLiteral("/proc/self/exe")).canonicalFilePath();
    return QFileInfo(exe).dir().absoluteFilePath(QStringLiteral("../testpaths.ini"));
}

QString path(const char *name, bool required)
{
    const QByteArray variable = QByteArray("RATESCOPE_TEST_") + QByteArray(name).toUpper();
    if (qEnvironmentVariableIsSet(variable.constData()))
        return qEnvironmentVariable(variable.constData());
    static const QString ini = iniPath();
    QString value;
    QFile file(ini);
    if (file.open(QIODevice::ReadOnly)) {
        // name=value lines; a value runs to the end of its line, whatever it holds.
        const QByteArray prefix = QByteArray(name) + '=';
        for (const QByteArray &line : file.readAll().split('\n'))
            if (line.startsWith(prefix))
                value = QString::fromUtf8(line.mid(prefix.size()));
    }
    if (value.isEmpty() && required) {
        std::fprintf(stderr, "%s is not in %s (CMake writes it at configure time) and %s is not set\n",
                     name, qPrintable(QDir::toNativeSeparators(ini)), variable.constData());
        std::exit(2);
    }
    return value;
}

} // namespace

namespace BuiltPaths {
QString cli() { return path("cli", true); }
QString gui() { return path("gui", false); }
QString sourceDir() { return path("source", true); }
QString manDir() { return path("man", false); }
}
