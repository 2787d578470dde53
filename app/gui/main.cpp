// ratescope: the desktop console. --demo starts a private sandbox with live traffic.
#include "quitonsignal.h"
#include "troff.h"

#include "redis/connectionoptions.h"
#include "connectioneventlog.h"
#include "demosession.h"
#include "base/duration.h"
#include "base/errors.h"
#include "base/keytext.h"
#include "burstpage.h"
#include "hotpage.h"
#include "keybrowser.h"
#include "mainwindow.h"
#include "monitorpage.h"
#include "passwordvault.h"
#include "profilestore.h"
#include "resetdialog.h"
#include "whatifpage.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QIcon>
#include <QPainter>
#include <QProcess>
#include <QRegularExpression>
#include <QSize>
#include <QTimer>

#include <cstdio>
#include <memory>

using namespace ratescope;
using namespace ratescope::ui;

namespace {

constexpr int kExitUsage = 2;
constexpr int kExitConnection = 3;
constexpr int kScreenshotTimeoutMs = 60000;

void print(FILE *stream, const QString &text)
{
    std::fputs(text.toLocal8Bit().constData(), stream);
    std::fflush(stream);
}

QStringList arguments(int argc, char **argv)
{
    QStringList args;
    for (int i = 0; i < argc; ++i)
        args << QString::fromLocal8Bit(argv[i]);
    return args;
}

bool haveDisplay()
{
    return !qEnvironmentVariableIsEmpty("DISPLAY") || !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") ||
           !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
}

// --burst's words, as `ratescope-cli burst` takes them: KEY and the options the Burst tab has.
// Values go into the tab's fields as typed, where they are checked as typed ones are.
std::optional<BurstPage::Prefill> parseBurst(const QString &text, QString &error)
{
    const QStringList words = QProcess::splitCommand(text);
    QCommandLineParser p;
    p.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    const QStringList valued{QStringLiteral("algo"),     QStringLiteral("limit"), QStringLiteral("window"),
                             QStringLiteral("cost"),     QStringLiteral("requests"), QStringLiteral("duration"),
                             QStringLiteral("rate"),     QStringLiteral("connections"), QStringLiteral("pipeline")};
    for (const QString &name : valued)
        p.addOption(QCommandLineOption(name, QString(), QStringLiteral("V")));
    if (!p.parse(QStringList{QStringLiteral("burst")} + words)) {
        error = p.errorText();
        return std::nullopt;
    }
    if (p.positionalArguments().size() != 1) {
        error = QStringLiteral("give one KEY, then options (e.g. 'test:api --requests 20000 --connections 8')");
        return std::nullopt;
    }
    BurstPage::Prefill f;
    f.key = p.positionalArguments().first().toLocal8Bit();
    if (p.isSet(QStringLiteral("algo"))) {
        try {
            f.algorithm = parseAlgorithm(p.value(QStringLiteral("algo")));
        } catch (const Error &e) {
            error = e.message();
            return std::nullopt;
        }
    } else if (p.isSet(QStringLiteral("limit")) || p.isSet(QStringLiteral("window"))) {
        error = QStringLiteral("--limit and --window go with --algo (without them, the limits in force at the key)");
        return std::nullopt;
    }
    f.limit = p.value(QStringLiteral("limit"));
    f.window = p.value(QStringLiteral("window"));
    f.cost = p.value(QStringLiteral("cost"));
    f.requests = p.value(QStringLiteral("requests"));
    f.duration = p.value(QStringLiteral("duration"));
    f.rate = p.value(QStringLiteral("rate"));
    if (f.requests.isEmpty() && f.duration.isEmpty())
        f.requests = QStringLiteral("1000"); // the tab's own default
    for (const auto &[name, field, most] : {std::tuple{QStringLiteral("connections"), &f.connections, BurstConfig::kMaxConnections},
                                            std::tuple{QStringLiteral("pipeline"), &f.pipeline, BurstConfig::kMaxPipeline}}) {
        if (!p.isSet(name))
            continue;
        bool ok = false;
        *field = p.value(name).toInt(&ok);
        if (!ok || *field < 1 || *field > most) {
            error = QStringLiteral("--%1 must be a whole number from 1 to %2").arg(name).arg(most);
            return std::nullopt;
        }
    }
    return f;
}

// The window as grabbed, with the dialogs open over it drawn where a desktop centres them.
QPixmap grabWithDialogs(QWidget &window)
{
    QPixmap shot = window.grab();
    QPainter painter(&shot);
    for (QDialog *dialog : window.findChildren<QDialog *>()) {
        if (!dialog->isVisible() || !dialog->isWindow())
            continue;
        const QPixmap d = dialog->grab();
        const QPoint at((shot.width() / shot.devicePixelRatio() - dialog->width()) / 2,
                        (shot.height() / shot.devicePixelRatio() - dialog->height()) / 2);
        painter.fillRect(QRect(at, dialog->size()).translated(3, 3), QColor(0, 0, 0, 60)); // its shadow
        painter.drawPixmap(at, d);
        painter.setPen(dialog->palette().color(QPalette::Dark));
        painter.drawRect(QRect(at, dialog->size()).adjusted(0, 0, -1, -1));
    }
    return shot;
}

} // namespace

int main(int argc, char **argv)
{
    // Parsed before QApplication exists, so --help and --version work without a display.
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Admin console and live monitor for rate limiters that keep their state in Redis."));
    const QCommandLineOption url(QStringLiteral("url"),
                                 QStringLiteral("Connect to this server (redis://, rediss://, "
                                                "unix://, redis-sentinel://, redis-cluster://)."),
                                 QStringLiteral("URL"));
    const QCommandLineOption profile(QStringLiteral("profile"), QStringLiteral("Connect with a saved connection profile."),
                                     QStringLiteral("NAME"));
    const QCommandLineOption demo(QStringLiteral("demo"),
                                  QStringLiteral("Start a private sandbox redis-server with policies and simulated traffic, "
                                                 "and connect to it. It is stopped when the console exits."));
    const QCommandLineOption readOnly(QStringLiteral("read-only"),
                                      QStringLiteral("Refuse every change (reset, override, burst) for the whole session."));
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                        QStringLiteral("Render the main window (and a dialog open over it) once its data has "
                                                       "loaded, save it as FILE (PNG) and exit."),
                                        QStringLiteral("FILE"));
    const QCommandLineOption openKey(QStringLiteral("open-key"),
                                     QStringLiteral("Open KEY in a tab of its own once connected (repeatable)."), QStringLiteral("KEY"));
    const QCommandLineOption pin(QStringLiteral("pin"), QStringLiteral("Pin KEY to the monitor once connected (repeatable)."),
                                 QStringLiteral("KEY"));
    const QCommandLineOption tab(QStringLiteral("tab"),
                                 QStringLiteral("The tab shown first: overview, monitor, burst, policies, whatif, hot, audit, "
                                                "lookup, or a KEY (opened if it is not). With --demo, whatif runs the demo's "
                                                "comparison once its traffic has filled a window."),
                                 QStringLiteral("TAB"));
    const QCommandLineOption lookup(QStringLiteral("lookup"),
                                    QStringLiteral("Look ID up on the Lookup tab once connected (every limiter whose key holds it "
                                                   "as a segment), and show that tab unless --tab names another."),
                                    QStringLiteral("ID"));
    const QCommandLineOption editPolicy(QStringLiteral("edit-policy"),
                                        QStringLiteral("Open policy NAME in the Policies tab's editor once connected, and show "
                                                       "that tab unless --tab names another."),
                                        QStringLiteral("NAME"));
    const QCommandLineOption burst(QStringLiteral("burst"),
                                   QStringLiteral("Fire a test burst once connected and show the Burst tab with its results: ARGS "
                                                  "as ratescope-cli burst takes them, KEY first ('test:api --requests 20000 "
                                                  "--connections 8 --pipeline 16'; --algo, --limit and --window, else the limits "
                                                  "in force at KEY). A KEY that exists is asked about first, as Start does."),
                                   QStringLiteral("ARGS"));
    const QCommandLineOption boundaryTest(QStringLiteral("boundary-test"),
                                          QStringLiteral("Run the Burst tab's boundary test once connected (fixed window against "
                                                         "sliding log, 100 per 1 s, on scratch keys) and show its result."));
    const QCommandLineOption reset(QStringLiteral("reset"),
                                   QStringLiteral("Open the reset dialog on the keys matching PATTERN once connected (a SCAN "
                                                  "MATCH glob, as a group's Reset does): its preview; nothing is deleted unless "
                                                  "the dialog is confirmed."),
                                   QStringLiteral("PATTERN"));
    const QCommandLineOption screenshotAfter(QStringLiteral("screenshot-after"),
                                             QStringLiteral("With --screenshot: keep running this long after the data has loaded "
                                                            "(e.g. 60s, so the monitor has a minute of history), then render."),
                                             QStringLiteral("DURATION"));
    const QCommandLineOption windowSize(QStringLiteral("window-size"),
                                        QStringLiteral("The main window's size in pixels, e.g. 1024x700 (default 1280x800; "
                                                       "640x480 to 7680x4320): how a smaller desk, or a screenshot of one, looks."),
                                        QStringLiteral("WxH"));
    const QCommandLineOption monitorInterval(QStringLiteral("monitor-interval"),
                                             QStringLiteral("How often the Monitor reads its pinned keys: 100ms, 250ms (the "
                                                            "default), 500ms, 1s, 2s, 5s or 10s."),
                                             QStringLiteral("DURATION"));
    const QCommandLineOption hotEvery(QStringLiteral("hot-every"),
                                      QStringLiteral("The Hot tab measures rates over DURATION (250ms to 1m) and passes again "
                                                     "as soon as a pass ends, while it is shown (its Every interval box)."),
                                      QStringLiteral("DURATION"));
    const QCommandLineOption eventLog(QStringLiteral("event-log"),
                                      QStringLiteral("Append a line to FILE (- for standard output) at each change of the "
                                                     "connection's state: connecting, connected (and how long it was away, or "
                                                     "the new master it followed), lost, each attempt to reconnect, closed. "
                                                     "JSON Lines; never a password."),
                                      QStringLiteral("FILE"));
    const QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")}, QStringLiteral("Show this help."));
    const QCommandLineOption version({QStringLiteral("v"), QStringLiteral("version")}, QStringLiteral("Show the version."));
    // The man page: the frame's prose with these very options (packaging/Packaging.cmake).
    QCommandLineOption helpMan(QStringLiteral("help-man"), QStringLiteral("Print the man page (troff)."));
    helpMan.setFlags(QCommandLineOption::HiddenFromHelp);
    QList<QCommandLineOption> options{url,        profile,         demo,       readOnly,        openKey,  pin,      tab,  lookup,
                                      editPolicy, burst,           boundaryTest, reset,         screenshot, screenshotAfter,
                                      windowSize, monitorInterval, hotEvery,   eventLog,        help,     version};
    options.append(helpMan); // hidden: neither in --help nor in the page
    parser.addOptions(options);
    if (!parser.parse(arguments(argc, argv))) {
        print(stderr, QStringLiteral("ratescope: %1\nTry ratescope --help.\n").arg(parser.errorText()));
        return kExitUsage;
    }
    if (parser.isSet(help)) {
        // Without an application object Qt cannot know the program's name.
        print(stdout, parser.helpText().replace(QStringLiteral("<executable_name>"), QStringLiteral("ratescope")));
        return 0;
    }
    if (parser.isSet(helpMan)) {
        QFile frame(QStringLiteral(":/man/ratescope.1.in"));
        if (!frame.open(QIODevice::ReadOnly)) {
            print(stderr, QStringLiteral("ratescope: the man page's frame is missing from this build\n"));
            return 1;
        }
        QString page = QString::fromUtf8(frame.readAll());
        QString summary = parser.applicationDescription().chopped(1); // without its full stop
        summary[0] = summary[0].toLower();
        page.replace(QStringLiteral("%%HEADER%%\n"), man::header(QStringLiteral("ratescope"), QStringLiteral(RATESCOPE_VERSION), summary));
        page.replace(QStringLiteral("%%OPTIONS%%\n"), man::options(options));
        print(stdout, page);
        return 0;
    }
    if (parser.isSet(version)) {
        print(stdout, QStringLiteral("ratescope %1\n").arg(QStringLiteral(RATESCOPE_VERSION)));
        return 0;
    }
    if (!parser.positionalArguments().isEmpty()) {
        print(stderr,
              QStringLiteral("ratescope: unexpected argument '%1'\nTry ratescope --help.\n").arg(parser.positionalArguments().first()));
        return kExitUsage;
    }
    if (int(parser.isSet(url)) + int(parser.isSet(profile)) + int(parser.isSet(demo)) > 1) {
        print(stderr, QStringLiteral("ratescope: --url, --profile and --demo choose the server: give one of them\n"));
        return kExitUsage;
    }
    qint64 screenshotDelayMs = 300; // a moment after the data is in, so the last rows' columns are painted too
    if (parser.isSet(screenshotAfter)) {
        try {
            screenshotDelayMs = std::max<qint64>(300, parseDurationUs(parser.value(screenshotAfter)) / 1000);
        } catch (const Error &e) {
            print(stderr, QStringLiteral("ratescope: --screenshot-after: %1\n").arg(e.message()));
            return kExitUsage;
        }
    }
    std::optional<QSize> size;
    if (parser.isSet(windowSize)) {
        static const QRegularExpression form(QRegularExpression::anchoredPattern(QStringLiteral("([0-9]{1,5})x([0-9]{1,5})")));
        const QRegularExpressionMatch m = form.match(parser.value(windowSize));
        const int w = m.hasMatch() ? m.captured(1).toInt() : 0, h = m.hasMatch() ? m.captured(2).toInt() : 0;
        if (w < 640 || h < 480 || w > 7680 || h > 4320) {
            print(stderr, QStringLiteral("ratescope: --window-size must be WIDTHxHEIGHT in pixels, from 640x480 to 7680x4320, not '%1'\n")
                              .arg(escapeControls(parser.value(windowSize))));
            return kExitUsage;
        }
        size = QSize(w, h);
    }
    std::optional<int> monitorMs;
    if (parser.isSet(monitorInterval)) {
        const QString text = parser.value(monitorInterval);
        qint64 us = -1;
        try {
            us = parseDurationUs(text);
        } catch (const Error &) {
        }
        QStringList choices;
        for (int ms : MonitorPage::intervalChoicesMs())
            choices << formatDurationUs(qint64(ms) * 1000);
        if (us % 1000 != 0 || !MonitorPage::intervalChoicesMs().contains(int(us / 1000))) {
            print(stderr, QStringLiteral("ratescope: --monitor-interval must be one of %1, not '%2'\n")
                              .arg(choices.join(QStringLiteral(", ")), escapeControls(text)));
            return kExitUsage;
        }
        monitorMs = int(us / 1000);
    }
    std::optional<qint64> hotUs;
    if (parser.isSet(hotEvery)) {
        const QString text = parser.value(hotEvery);
        qint64 us = -1;
        try {
            us = parseDurationUs(text);
        } catch (const Error &) {
        }
        if (us < 250000 || us > 60000000) {
            print(stderr, QStringLiteral("ratescope: --hot-every must be a duration from 250ms to 1m, not '%1'\n").arg(escapeControls(text)));
            return kExitUsage;
        }
        hotUs = us;
    }
    std::optional<BurstPage::Prefill> burstPrefill;
    if (parser.isSet(burst) && parser.isSet(boundaryTest)) {
        print(stderr, QStringLiteral("ratescope: --burst and --boundary-test both run on the Burst tab: give one of them\n"));
        return kExitUsage;
    }
    if (parser.isSet(burst)) {
        QString why;
        burstPrefill = parseBurst(parser.value(burst), why);
        if (!burstPrefill) {
            print(stderr, QStringLiteral("ratescope: --burst: %1\n").arg(escapeControls(why)));
            return kExitUsage;
        }
    } else if (parser.isSet(boundaryTest)) {
        burstPrefill = BurstPage::Prefill{};
        burstPrefill->boundary = true;
    }
    if (parser.isSet(reset) && parser.value(reset).isEmpty()) {
        print(stderr, QStringLiteral("ratescope: --reset needs a pattern (api:trial:*)\n"));
        return kExitUsage;
    }
    std::optional<ConnectionOptions> urlOptions;
    if (parser.isSet(url)) {
        try {
            urlOptions = ConnectionOptions::fromUrl(parser.value(url));
        } catch (const Error &e) {
            print(stderr, QStringLiteral("ratescope: %1\n").arg(e.message()));
            return kExitUsage;
        }
    }
    if (!haveDisplay()) {
        if (!parser.isSet(screenshot)) {
            print(stderr, QStringLiteral("ratescope: no display (neither DISPLAY nor "
                                         "WAYLAND_DISPLAY is set). Start it in a desktop session,\n"
                                         "or render a picture without one: ratescope --demo "
                                         "--screenshot ratescope.png\n"));
            return 1;
        }
        qputenv("QT_QPA_PLATFORM", "offscreen"); // a screenshot needs no screen
    }
    // Opened before anything connects, so that its first line is the first attempt.
    ConnectionEventLog events;
    if (parser.isSet(eventLog) && !events.open(parser.value(eventLog))) {
        print(stderr, QStringLiteral("ratescope: --event-log: cannot open '%1': %2\n")
                          .arg(escapeControls(parser.value(eventLog)), events.errorString()));
        return kExitUsage;
    }

    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("Ratescope"));
    QApplication::setApplicationName(QStringLiteral("ratescope"));
    QApplication::setApplicationDisplayName(QStringLiteral("Ratescope"));
    QApplication::setApplicationVersion(QStringLiteral(RATESCOPE_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("ratescope"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/ratescope/ratescope.png")));
    QuitOnSignal quitOnSignal;

    // The demo's server and traffic outlive the window (declared first, destroyed last).
    std::unique_ptr<DemoSession> session;
    if (parser.isSet(demo)) {
        session = std::make_unique<DemoSession>();
        try {
            session->start();
        } catch (const Error &e) {
            print(stderr, QStringLiteral("ratescope: cannot start the demo: %1\n").arg(e.message()));
            return kExitConnection;
        }
        print(stdout, QStringLiteral("Demo: private redis-server (pid %1) at %2, data in %3; it "
                                     "stops when Ratescope exits.\n")
                          .arg(session->serverPid())
                          .arg(session->options().toUrl(), session->serverDir()));
    }

    ProfileStore profiles;
    PasswordVault vault;
    MainWindow window(profiles, vault);
    if (size)
        window.resize(*size);
    if (parser.isSet(readOnly))
        window.setReadOnly(true);
    if (parser.isSet(eventLog))
        window.setEventLog(&events);
    if (monitorMs)
        window.monitor()->setIntervalMs(*monitorMs);
    if (hotUs) {
        window.hot()->setIntervalUs(*hotUs);
        window.hot()->setAutoRefresh(true);
    }
    // Key names are taken as the bytes given (a key is bytes, not text).
    MainWindow::StartupView startup;
    for (const QString &key : parser.values(openKey))
        startup.openKeys << key.toLocal8Bit();
    for (const QString &key : parser.values(pin))
        startup.pins << key.toLocal8Bit();
    startup.tab = parser.value(tab);
    startup.lookup = parser.value(lookup);
    startup.editPolicy = parser.value(editPolicy);
    startup.burst = burstPrefill;
    startup.resetPattern = parser.value(reset).toLocal8Bit();
    window.setStartupView(startup);
    if (session) {
        window.addSessionProfile(session->profile(), session->options());
        window.connectProfile(session->profile().name);
        // The What-if view comes prefilled, on the API keys' logs; shown first, it runs once
        // the traffic has filled a window.
        const DemoSession::WhatIfPreset preset = DemoSession::whatIfPreset();
        const bool whatIfFirst = startup.tab.compare(QLatin1String("whatif"), Qt::CaseInsensitive) == 0 ||
                                 startup.tab.compare(QLatin1String("what-if"), Qt::CaseInsensitive) == 0;
        window.whatIf()->previewPolicy(preset.now, preset.proposed, false);
        if (whatIfFirst)
            window.whatIf()->runAfter(int(preset.now.spec.windowUs / 1000) + 1000);
    } else if (urlOptions) {
        window.addSessionProfile(ConnectionProfile::fromOptions(*urlOptions, urlOptions->toUrl()), *urlOptions);
        window.connectProfile(urlOptions->toUrl());
    } else if (parser.isSet(profile) && !window.connectProfile(parser.value(profile))) {
        print(stderr, QStringLiteral("ratescope: no saved profile named '%1'\n").arg(parser.value(profile)));
        return kExitUsage;
    }

    if (parser.isSet(screenshot)) {
        const QString file = parser.value(screenshot);
        auto save = [&window, file](bool complete) {
            const QPixmap shot = grabWithDialogs(window);
            if (!shot.save(file, "PNG")) {
                print(stderr, QStringLiteral("ratescope: cannot write %1\n").arg(file));
                QApplication::exit(1);
                return;
            }
            const qint64 listingMs = window.keyBrowser()->listingMs();
            print(stdout, QStringLiteral("Screenshot: %1 (%2 keys listed%3)\n")
                              .arg(QDir::current().absoluteFilePath(file))
                              .arg(window.keyBrowser()->model()->keyCount())
                              .arg(listingMs >= 0 ? QStringLiteral(" in %1 s").arg(double(listingMs) / 1000, 0, 'f', 3) : QString()));
            if (!complete)
                print(stderr, QStringLiteral("ratescope: the data had not loaded within %1 s; the "
                                             "screenshot shows what there was\n")
                                  .arg(kScreenshotTimeoutMs / 1000));
            QApplication::exit(complete ? 0 : 1);
        };
        QObject::connect(&window, &MainWindow::settled, &window, [save, screenshotDelayMs] {
            QTimer::singleShot(int(std::min<qint64>(screenshotDelayMs, 24LL * 3600 * 1000)), [save] { save(true); });
        });
        QTimer::singleShot(int(std::min<qint64>(kScreenshotTimeoutMs + screenshotDelayMs, 24LL * 3600 * 1000)), &window,
                           [save] { save(false); });
    }
    window.show();
    return app.exec();
}
