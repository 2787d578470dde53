#include "commandfiles.h"

#include "base/errors.h"
#include "base/keytext.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ratescope::cli {

namespace {

QString errnoText(int error)
{
    return QString::fromLocal8Bit(std::strerror(error));
}

// "." for a bare name, "/" for a file at the root.
QByteArray folderOf(const QByteArray &path)
{
    const qsizetype slash = path.lastIndexOf('/');
    if (slash < 0)
        return QByteArrayLiteral(".");
    return slash == 0 ? QByteArrayLiteral("/") : path.left(slash);
}

QByteArray nameOf(const QByteArray &path)
{
    return path.mid(path.lastIndexOf('/') + 1);
}

} // namespace

QString displayPath(const QByteArray &path)
{
    return isPlainKey(path) ? QLatin1Char('\'') + QString::fromUtf8(path) + QLatin1Char('\'') : displayKey(path);
}

QByteArray csvField(const QByteArray &bytes)
{
    if (!bytes.contains(',') && !bytes.contains('"') && !bytes.contains('\n') && !bytes.contains('\r'))
        return bytes;
    QByteArray quoted = bytes;
    quoted.replace("\"", "\"\"");
    return '"' + quoted + '"';
}

// ---- InputFile ---------------------------------------------------------------------------

InputFile::InputFile(const QString &option, const QByteArray &path)
    : m_option(option)
    , m_path(path)
{
    if (path.isEmpty())
        throw UsageError(QStringLiteral("--%1: the path is empty").arg(option));
    const int fd = ::open(path.constData(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        throw UsageError(QStringLiteral("--%1: cannot read %2: %3").arg(option, displayPath(path), errnoText(errno)));
    struct stat st = {};
    if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        const int error = S_ISDIR(st.st_mode) ? EISDIR : errno;
        ::close(fd);
        throw UsageError(QStringLiteral("--%1: cannot read %2: %3").arg(option, displayPath(path), errnoText(error)));
    }
    m_device = st.st_dev;
    m_inode = st.st_ino;
    if (!m_file.open(fd, QIODevice::ReadOnly, QFileDevice::AutoCloseHandle)) {
        ::close(fd);
        throw UsageError(QStringLiteral("--%1: cannot read %2: %3").arg(option, displayPath(path), m_file.errorString()));
    }
}

QString InputFile::name() const
{
    const QByteArray name = nameOf(m_path);
    return isPlainKey(name) ? QString::fromUtf8(name) : displayKey(name);
}

// ---- OutputTarget ------------------------------------------------------------------------

OutputTarget::OutputTarget(const QString &option, const QByteArray &path)
    : m_option(option)
    , m_path(path)
{
    if (path.isEmpty())
        throw UsageError(QStringLiteral("--%1: the path is empty (give a file, or - for standard output)").arg(option));
    if (path == "-") {
        m_kind = Kind::StandardOutput;
        return;
    }
    struct stat st = {};
    if (::stat(path.constData(), &st) == 0) {
        m_exists = true;
        m_device = st.st_dev;
        m_inode = st.st_ino;
        // Standard output itself under another name: written through it, or replacing the
        // file would leave the shell's redirection writing into a file no longer there.
        struct stat out = {};
        if ((S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode)) && ::fstat(STDOUT_FILENO, &out) == 0 && out.st_dev == st.st_dev &&
            out.st_ino == st.st_ino) {
            m_kind = Kind::StandardOutput;
            return;
        }
        if (S_ISDIR(st.st_mode))
            refuse(QStringLiteral("is a folder"));
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
            if (::access(path.constData(), W_OK) != 0)
                refuse(QStringLiteral("cannot be written: %1").arg(errnoText(errno)));
            m_kind = Kind::InPlace;
            return;
        }
        if (!S_ISREG(st.st_mode))
            refuse(QStringLiteral("is not a regular file, a character device or a FIFO"));
        // A regular file, replaced whole: through a symbolic link, the file it names.
        char *resolved = ::realpath(path.constData(), nullptr);
        if (!resolved)
            refuse(QStringLiteral("cannot be resolved: %1").arg(errnoText(errno)));
        m_final = resolved;
        std::free(resolved);
        // No write permission at all is a file someone protected: refused even for root,
        // whom access() would let through.
        if ((st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0)
            refuse(QStringLiteral("is read-only (mode %1)").arg(st.st_mode & 07777, 4, 8, QLatin1Char('0')));
        if (::access(m_final.constData(), W_OK) != 0)
            refuse(QStringLiteral("cannot be written: %1").arg(errnoText(errno)));
        // Only root can give the new file another user's ownership: anyone else would take
        // the file over by replacing it.
        if (st.st_uid != ::geteuid() && ::geteuid() != 0)
            refuse(QStringLiteral("belongs to another user: replacing it would make it yours"));
        m_mode = st.st_mode & 07777;
        m_owner = st.st_uid;
        m_group = st.st_gid;
    } else {
        const int error = errno;
        struct stat link = {};
        if (error == ENOENT && ::lstat(path.constData(), &link) == 0)
            refuse(QStringLiteral("is a symbolic link to nothing"));
        if (error != ENOENT)
            refuse(QStringLiteral("cannot be written: %1").arg(errnoText(error)));
        if (path.endsWith('/'))
            refuse(QStringLiteral("names a folder that does not exist"));
        m_final = path;
        const mode_t umask = ::umask(0); // read it: before anything runs, no other thread yet
        ::umask(umask);
        m_mode = 0666 & ~umask;
    }
    // The temporary file is made beside the target, so the folder must take new files.
    const QByteArray folder = folderOf(m_final);
    struct stat dir = {};
    if (::stat(folder.constData(), &dir) != 0)
        refuse(errno == ENOENT ? QStringLiteral("is in a folder that does not exist (%1)").arg(displayPath(folder))
                               : QStringLiteral("is in a folder that cannot be used (%1: %2)").arg(displayPath(folder), errnoText(errno)));
    if (!S_ISDIR(dir.st_mode))
        refuse(QStringLiteral("is in %1, which is not a folder").arg(displayPath(folder)));
    if (::access(folder.constData(), W_OK | X_OK) != 0)
        refuse(
            QStringLiteral("cannot be written: no new file can be made in its folder %1 (%2)").arg(displayPath(folder), errnoText(errno)));
    m_kind = Kind::Replace;
}

OutputTarget::~OutputTarget()
{
    discard();
}

void OutputTarget::refuse(const QString &why) const
{
    throw UsageError(QStringLiteral("%1 %2").arg(describe(), why));
}

QString OutputTarget::describe() const
{
    return QStringLiteral("--%1 %2").arg(m_option, displayPath(m_path));
}

void OutputTarget::requireDistinctFrom(const InputFile &input) const
{
    dev_t device = m_device;
    ino_t inode = m_inode;
    bool known = m_exists;
    if (m_kind == Kind::StandardOutput) {
        struct stat out = {};
        known = ::fstat(STDOUT_FILENO, &out) == 0;
        device = out.st_dev;
        inode = out.st_ino;
    }
    if (known && device == input.device() && inode == input.inode())
        refuse(QStringLiteral("is the --%1 file: it would be overwritten").arg(input.option()));
}

QIODevice &OutputTarget::open()
{
    if (m_open)
        return m_file;
    m_error.clear();
    int fd = -1;
    switch (m_kind) {
    case Kind::StandardOutput:
        if (!m_file.open(STDOUT_FILENO, QIODevice::WriteOnly, QFileDevice::DontCloseHandle))
            refuse(QStringLiteral("cannot be written: %1").arg(m_file.errorString()));
        m_open = true;
        return m_file;
    case Kind::InPlace: {
        fd = ::open(m_path.constData(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
            refuse(QStringLiteral("cannot be written: %1").arg(errnoText(errno)));
        struct stat st = {};
        if (::fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
            ::close(fd);
            refuse(QStringLiteral("is no longer a character device or a FIFO"));
        }
        break;
    }
    case Kind::Replace: {
        // ".NAME.XXXXXX" beside it (hidden, and named after what it will become); a name too
        // long for that gets a shorter one.
        QByteArray pattern = folderOf(m_final) + "/." + nameOf(m_final) + ".XXXXXX";
        fd = ::mkostemp(pattern.data(), O_CLOEXEC);
        if (fd < 0 && errno == ENAMETOOLONG) {
            pattern = folderOf(m_final) + "/.ratescope-XXXXXX";
            fd = ::mkostemp(pattern.data(), O_CLOEXEC);
        }
        if (fd < 0)
            refuse(QStringLiteral("cannot be written: no temporary file in its folder (%1)").arg(errnoText(errno)));
        m_temporary = pattern;
        int failed = ::fchmod(fd, m_mode) != 0 ? errno : 0;
        if (!failed && m_exists && (m_owner != ::geteuid() || m_group != ::getegid()) && ::fchown(fd, m_owner, m_group) != 0) {
            // The owner is ours (checked when constructed), the group may not be one of ours:
            // then the file keeps its mode and takes our group, as an editor's save does.
            if (m_owner != ::geteuid())
                failed = errno;
        }
        if (failed) {
            ::close(fd);
            ::unlink(m_temporary.constData());
            m_temporary.clear();
            refuse(QStringLiteral("cannot be written: %1").arg(errnoText(failed)));
        }
        break;
    }
    }
    if (!m_file.open(fd, QIODevice::WriteOnly, QFileDevice::AutoCloseHandle)) {
        ::close(fd);
        if (!m_temporary.isEmpty())
            ::unlink(m_temporary.constData());
        m_temporary.clear();
        refuse(QStringLiteral("cannot be written: %1").arg(m_file.errorString()));
    }
    m_open = true;
    return m_file;
}

bool OutputTarget::commit()
{
    if (!m_open) {
        m_error = QStringLiteral("not open");
        return false;
    }
    m_open = false;
    bool ok = m_file.flush() && m_file.error() == QFileDevice::NoError;
    if (!ok)
        m_error = m_file.errorString();
    if (ok && m_kind == Kind::Replace && ::fsync(m_file.handle()) != 0) { // on disk before it replaces anything
        ok = false;
        m_error = errnoText(errno);
    }
    m_file.close();
    if (m_kind == Kind::Replace) {
        if (ok && ::rename(m_temporary.constData(), m_final.constData()) != 0) {
            ok = false;
            m_error = errnoText(errno);
        }
        if (!ok)
            ::unlink(m_temporary.constData());
        m_temporary.clear();
    }
    return ok;
}

void OutputTarget::discard()
{
    if (!m_open)
        return;
    m_open = false;
    m_file.close();
    if (!m_temporary.isEmpty())
        ::unlink(m_temporary.constData());
    m_temporary.clear();
}

} // namespace ratescope::cli
