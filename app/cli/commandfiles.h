// The files a command line names: outputs (--timeline, --decisions) checked before anything
// runs and written without destroying what they replace; inputs (--trace) opened by their
// exact bytes. The rules are docs/cli.md's "Files".
#pragma once

#include <QByteArray>
#include <QFile>
#include <QString>

#include <sys/types.h>

namespace ratescope::cli {

// A path for messages: 'as itself' when it is printable UTF-8, else quoted and escaped as keys
// are ("t\xff.csv").
QString displayPath(const QByteArray &path);

// One field of a CSV row the commands write (a key: bytes as they are): RFC 4180, quoted
// only when it holds a comma, a quote or a line break.
QByteArray csvField(const QByteArray &bytes);

// A file a command reads, opened by the path's bytes: a path that is not UTF-8 names the file
// it names (a QString path would carry U+FFFD instead). Opened when constructed.
class InputFile {
public:
    // Throws UsageError "--OPTION: cannot read PATH: why" (a missing file, a folder, no right).
    InputFile(const QString &option, const QByteArray &path);
    QFile &file() { return m_file; }
    const QString &option() const { return m_option; }
    const QByteArray &path() const { return m_path; }
    // The file's own name (its last path component), as messages and descriptions show it.
    QString name() const;
    dev_t device() const { return m_device; }
    ino_t inode() const { return m_inode; }

private:
    QString m_option;
    QByteArray m_path;
    QFile m_file;
    dev_t m_device = 0;
    ino_t m_inode = 0;
};

// Where a command writes what an option names:
// - "-" is standard output, and so is a path naming the regular file or pipe standard output
//   already is (/dev/stdout): the command's own report then goes to standard error;
// - a character device or a FIFO is written in place (/dev/null, a named pipe), never replaced;
// - a regular file, or a new one, is written whole or not at all: into a temporary file in its
//   folder, renamed over it by commit() with its mode (and owner and group) kept, removed by
//   discard() or the destructor. A symbolic link is followed: the file it names is replaced,
//   the link stays;
// - anything else, and whatever cannot be written (an empty path, a missing or unwritable
//   folder, a read-only file, a folder, a socket), is refused when constructed, so before
//   anything runs and before anything is sent.
//
// Hand-written rather than QSaveFile, which keeps an existing file's permissions as this does,
// but takes a QString path (a path that is not UTF-8 cannot be given exactly), renames its
// temporary file over a device or a FIFO (as root, /dev/full became a regular file), and
// resolves /dev/stdout to a "pipe:[N]" that does not exist.
class OutputTarget {
public:
    // Throws UsageError "--OPTION: PATH ..." saying why the path cannot be written.
    OutputTarget(const QString &option, const QByteArray &path);
    ~OutputTarget();
    OutputTarget(const OutputTarget &) = delete;
    OutputTarget &operator=(const OutputTarget &) = delete;

    bool isStandardOutput() const { return m_kind == Kind::StandardOutput; }
    // Throws UsageError when writing here would overwrite the input (the same file, by device
    // and inode: another name, a link or a symbolic link to it count too).
    void requireDistinctFrom(const InputFile &input) const;
    // Opens for writing: standard output, the device or FIFO itself (a FIFO's open waits for
    // its reader, as a shell's redirection does), or the temporary file. Throws UsageError.
    QIODevice &open();
    // What was written becomes the target's. False, with errorString(), when it could not be:
    // a regular file then keeps its old content.
    bool commit();
    // A cancelled or failed run: the temporary file is removed, the target is left as it was
    // (what a device, a FIFO or standard output was given is gone already).
    void discard();
    QString errorString() const { return m_error; }
    // "--decisions 'out.csv'", for messages.
    QString describe() const;

private:
    enum class Kind { StandardOutput, InPlace, Replace };
    [[noreturn]] void refuse(const QString &why) const;

    QString m_option;
    QByteArray m_path;
    Kind m_kind = Kind::Replace;
    QByteArray m_final;     // Replace: the file renamed over (symbolic links resolved)
    QByteArray m_temporary; // Replace, while open: the temporary file beside it
    bool m_exists = false;  // the target exists (device and inode are known)
    dev_t m_device = 0;
    ino_t m_inode = 0;
    mode_t m_mode = 0; // Replace: the mode the file gets (the old file's, else 0666 less the umask)
    uid_t m_owner = 0;
    gid_t m_group = 0;
    QFile m_file;
    bool m_open = false;
    QString m_error;
};

} // namespace ratescope::cli
