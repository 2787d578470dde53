// Server-supplied text in the console is text: keys, policy names and descriptions, overrides'
// authors and audit actors named like HTML (<img src=...>, <b>) or holding control characters
// render as themselves in every label, tooltip and view of every page, never as markup.
// Real redis-server, offscreen; the whole window with hostile keys open, pinned and listed.
#include "admin/audit.h"
#include "auditpage.h"
#include "redis/connection.h"
#include "connectionprofile.h"
#include "keybrowser.h"
#include "keyview.h"
#include "limiters/limiter.h"
#include "mainwindow.h"
#include "monitorpage.h"
#include "overviewpage.h"
#include "passwordvault.h"
#include "policiespage.h"
#include "admin/policy.h"
#include "profilestore.h"
#include "redis/sandboxserver.h"

#include <QAbstractItemView>
#include <QHeaderView>
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextDocument>

using namespace ratescope;
using namespace ratescope::ui;

namespace {

constexpr qint64 kWindowUs = 3600LL * 1000000;

const QByteArray kImgKey = "<img src=x>";
const QByteArray kBoldKey = "<b>bold</b>:1";
const QByteArray kControlKey = "o:\x1b]0;title\x07";
const QString kPolicyName = QStringLiteral("<b>policy</b>");
const QString kDescription = QStringLiteral("<img src=description>");
const QString kActor = QStringLiteral("<b>root</b>");

// Markup that must never be interpreted: each piece is a tag a rich-text renderer would act on.
const QStringList kMarkup = {QStringLiteral("<img src=x>"), QStringLiteral("<b>bold</b>"), QStringLiteral("<b>policy</b>"),
                             QStringLiteral("<img src=description>"), QStringLiteral("<b>root</b>")};

bool rendersAsRichText(const QString &text, Qt::TextFormat format)
{
    return format == Qt::RichText || ((format == Qt::AutoText || format == Qt::MarkdownText) && Qt::mightBeRichText(text));
}

// "" when the text shows as itself, else what is wrong: markup from the server read as markup.
QString markupProblem(const QString &where, const QString &text, Qt::TextFormat format)
{
    if (!rendersAsRichText(text, format))
        return {};
    for (const QString &m : kMarkup)
        if (text.contains(m))
            return QStringLiteral("%1 renders %2 as markup: %3").arg(where, m, text);
    return {};
}

} // namespace

class TestHostileConsole : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void everyPageShowsServerTextAsText();

private:
    QStringList problemsIn(QWidget *root) const;

    std::unique_ptr<SandboxServer> m_server;
    QTemporaryDir m_dir;
};

void TestHostileConsole::initTestCase()
{
    m_server = std::make_unique<SandboxServer>();
    m_server->start();
    Connection c(m_server->options());
    Policy p;
    p.name = kPolicyName;
    p.match = "<*";
    p.description = kDescription;
    p.spec = {Algorithm::SlidingLog, 10, kWindowUs, 1};
    PolicyStore(c, QStringLiteral("ratescope:")).set(p, 0, kActor);
    Policy control = p;
    control.name = QStringLiteral("controls");
    control.match = "o:*";
    control.description = QString();
    PolicyStore(c, QStringLiteral("ratescope:")).set(control, 0, kActor);
    Limiter limiter(c);
    for (const QByteArray &key : {kImgKey, kBoldKey, kControlKey})
        for (int i = 0; i < 3; ++i)
            limiter.check(key, p.spec);
    Override o;
    o.key = kImgKey;
    o.limit = 5;
    OverrideStore(c, QStringLiteral("ratescope:")).set(o, kWindowUs, kActor);
    AuditEntry forged;
    forged.action = QStringLiteral("<b>reset</b>");
    forged.target = QString::fromUtf8(kImgKey);
    forged.before = QStringLiteral("{\"keys\":[\"<img src=x>\"]}");
    AuditLog(c, QStringLiteral("ratescope:")).append(forged, kActor);
}

QStringList TestHostileConsole::problemsIn(QWidget *root) const
{
    QStringList problems;
    QList<QWidget *> widgets = root->findChildren<QWidget *>();
    widgets.prepend(root);
    for (QWidget *w : widgets) {
        const QString name = QStringLiteral("%1 (%2)").arg(QString::fromLatin1(w->metaObject()->className()), w->objectName());
        if (auto *label = qobject_cast<QLabel *>(w))
            problems << markupProblem(name, label->text(), label->textFormat());
        problems << markupProblem(name + QStringLiteral(" tooltip"), w->toolTip(), Qt::AutoText);
        auto *view = qobject_cast<QAbstractItemView *>(w);
        if (!view || !view->model() || qobject_cast<QHeaderView *>(view)) // a header shares its view's model
            continue;
        // Every cell's tooltip (one level of children: the key tree's groups too).
        QAbstractItemModel *m = view->model();
        const QString cells = QStringLiteral("%1 of %2").arg(QString::fromLatin1(m->metaObject()->className()), name);
        std::function<void(const QModelIndex &, int)> walk = [&](const QModelIndex &parent, int depth) {
            for (int r = 0; r < m->rowCount(parent) && r < 200; ++r)
                for (int col = 0; col < m->columnCount(parent); ++col) {
                    const QModelIndex i = m->index(r, col, parent);
                    problems << markupProblem(cells + QStringLiteral(", cell tooltip"), i.data(Qt::ToolTipRole).toString(), Qt::AutoText);
                    if (col == 0 && depth < 4)
                        walk(i, depth + 1);
                }
        };
        walk(QModelIndex(), 0);
    }
    problems.removeAll(QString());
    problems.removeDuplicates();
    return problems;
}

void TestHostileConsole::everyPageShowsServerTextAsText()
{
    QSettings settings(m_dir.filePath(QStringLiteral("settings.ini")), QSettings::IniFormat);
    ProfileStore store(&settings);
    PasswordVault vault(PasswordVault::Backend::SessionOnly);
    MainWindow window(store, vault);
    MainWindow::StartupView view;
    view.openKeys = {kImgKey, kBoldKey, kControlKey};
    view.pins = {kImgKey, kBoldKey, kControlKey};
    window.setStartupView(view);
    const ConnectionOptions options = m_server->options();
    const ConnectionProfile profile = ConnectionProfile::fromOptions(options, options.toUrl());
    window.addSessionProfile(profile, options);
    QSignalSpy settled(&window, &MainWindow::settled);
    window.connectProfile(profile.name);
    window.resize(1400, 900);
    window.show();
    QVERIFY(settled.wait(30000));

    // The keys panel lists them; the policies and audit pages have read theirs.
    QTRY_VERIFY_WITH_TIMEOUT(window.keyBrowser()->findChildren<QAbstractItemView *>().size() > 0, 5000);
    for (const QString &tab : {QStringLiteral("overview"), QStringLiteral("monitor"), QStringLiteral("burst"), QStringLiteral("policies"),
                               QStringLiteral("audit")}) {
        window.showTab(tab);
        QTest::qWait(300); // bounded: let the page's first reads arrive and draw
    }
    QTRY_VERIFY_WITH_TIMEOUT(window.audit()->findChildren<QAbstractItemView *>().constFirst()->model()->rowCount() > 0, 10000);

    const QStringList problems = problemsIn(&window);
    for (const QString &p : problems)
        qWarning("%s", qPrintable(p));
    QVERIFY2(problems.isEmpty(), qPrintable(QStringLiteral("%1 places render server text as markup").arg(problems.size())));

    // And they are there to be seen, as text: the key views' titles show the keys themselves.
    int titles = 0;
    for (int i = 0; i < window.tabs()->count(); ++i)
        if (auto *v = qobject_cast<KeyView *>(window.tabs()->widget(i)))
            for (QLabel *l : v->findChildren<QLabel *>())
                titles += l->text().contains(QString::fromUtf8(kImgKey)) || l->text().contains(QString::fromUtf8(kBoldKey)) ||
                          l->text().contains(QStringLiteral("\"o:\\x1b]0;title\\a\""));
    QVERIFY2(titles >= 3, qPrintable(QString::number(titles)));
}

QTEST_MAIN(TestHostileConsole)
#include "tst_hostileconsole.moc"
