// The key browser's model and the other table models under QAbstractItemModelTester: groups,
// counts and full names for awkward keys, SCAN's duplicates, incremental insertion, sorting
// with persistent indexes (a 200,000-key group kept in natural order by background rounds),
// lazy columns; and the display formats. No server needed.
#include "base/keytext.h"
#include "displayformat.h"
#include "keytreemodel.h"
#include "policytablemodel.h"
#include "usagebardelegate.h"

#include <QAbstractItemModelTester>
#include <QItemSelectionModel>
#include <QRandomGenerator>
#include <QSet>
#include <QSignalSpy>
#include <QTest>
#include <QTreeView>

using namespace ratescope;
using namespace ratescope::ui;

namespace {

// Every key the model holds, by walking it as a view would.
QSet<QByteArray> keysIn(const KeyTreeModel &m, const QModelIndex &parent = {})
{
    QSet<QByteArray> keys;
    for (int r = 0; r < m.rowCount(parent); ++r) {
        const QModelIndex i = m.index(r, 0, parent);
        if (i.data(KeyTreeModel::IsGroupRole).toBool())
            keys += keysIn(m, i);
        else
            keys.insert(i.data(KeyTreeModel::KeyRole).toByteArray());
    }
    return keys;
}

QModelIndex child(const KeyTreeModel &m, const QModelIndex &parent, const QString &displayPrefix)
{
    for (int r = 0; r < m.rowCount(parent); ++r) {
        const QModelIndex i = m.index(r, 0, parent);
        if (i.data().toString().startsWith(displayPrefix))
            return i;
    }
    return {};
}

} // namespace

class TestKeyTreeModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void groupsAndCounts();
    void awkwardNames_data();
    void awkwardNames();
    void duplicatesFromScan();
    void randomPagesUnderTester();
    void sortKeepsPersistentIndexes();
    void sortOneGroup();
    void bigGroupKeptInNaturalOrder();
    void orderedGroupTakesNewKeysInPlace();
    void pacedOrderWaitsForTheListing();
    void roundReadInSlicesFollowsChanges();
    void bigGroupHoldsItsRowsWhilePaced();
    void lazyColumns();
    void usageShortWhereItDoesNotFit();
    void shardGroupRows();
    void trimDetailsKeepsVisible();
    void memoryPerKey();
    void policyTableUnderTester();
    void formats_data();
    void formats();
};

void TestKeyTreeModel::groupsAndCounts()
{
    KeyTreeModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.clear(":");
    m.addKeys({"demo:api:acme", "demo:api:globex", "demo:login:acme", "ratescope:policies", "plain"});
    QCOMPARE(m.keyCount(), 5);
    QCOMPARE(m.rowCount(), 3); // demo, ratescope, plain
    const QModelIndex demo = child(m, {}, QStringLiteral("demo"));
    QVERIFY(demo.isValid());
    QCOMPARE(demo.data().toString(), QStringLiteral("demo (3)"));
    QCOMPARE(demo.data(KeyTreeModel::KeyCountRole).toLongLong(), 3);
    QCOMPARE(demo.data(KeyTreeModel::PatternRole).toByteArray(), QByteArray("demo:*"));
    const QModelIndex api = child(m, demo, QStringLiteral("api"));
    QCOMPARE(api.data().toString(), QStringLiteral("api (2)"));
    QCOMPARE(m.rowCount(api), 2);
    const QModelIndex acme = m.index(0, 0, api);
    QCOMPARE(acme.data().toString(), QStringLiteral("acme"));
    QCOMPARE(acme.data(KeyTreeModel::KeyRole).toByteArray(), QByteArray("demo:api:acme"));
    QCOMPARE(m.parent(acme), api);
    QVERIFY(m.flags(acme) & Qt::ItemNeverHasChildren);
    // Counts go up as later pages arrive, and the view hears about it.
    QSignalSpy changed(&m, &QAbstractItemModel::dataChanged);
    m.addKeys({"demo:api:initech"});
    QCOMPARE(demo.data().toString(), QStringLiteral("demo (4)"));
    QCOMPARE(api.data().toString(), QStringLiteral("api (3)"));
    QVERIFY(changed.size() >= 2);
}

void TestKeyTreeModel::awkwardNames_data()
{
    QTest::addColumn<QByteArray>("separator");
    QTest::addColumn<QByteArrayList>("keys");
    QTest::newRow("empty segments") << QByteArray(":") << QByteArrayList{"a::b", ":a", "a:", "::", ":", "a"};
    QTest::newRow("key equals a group") << QByteArray(":") << QByteArrayList{"a:b", "a:b:c", "a"};
    QTest::newRow("multi-byte separator") << QByteArray("::") << QByteArrayList{"ns::x::y", "ns::x", "ns:x", "::ns"};
    QTest::newRow("binary and utf-8") << QByteArray(":") << QByteArrayList{QByteArray("bin:\x00\xff:k", 7), "ü:ñ:ß", "sp ace:ta\tb"};
    QTest::newRow("no separator in keys") << QByteArray("/") << QByteArrayList{"a:b", "c:d"};
}

void TestKeyTreeModel::awkwardNames()
{
    QFETCH(QByteArray, separator);
    QFETCH(QByteArrayList, keys);
    KeyTreeModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.clear(separator);
    m.addKeys(keys);
    const QSet<QByteArray> expected(keys.begin(), keys.end());
    QCOMPARE(m.keyCount(), expected.size());
    QCOMPARE(keysIn(m), expected);
    m.sortByName();
    QCOMPARE(keysIn(m), expected);
}

void TestKeyTreeModel::duplicatesFromScan()
{
    KeyTreeModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.clear(":");
    m.addKeys({"x:1", "x:2", "x:1", "y:1"}); // repeated within a page
    m.addKeys({"x:2", "x:3", "y:1"});        // and across pages
    QCOMPARE(m.keyCount(), 4);
    QCOMPARE(child(m, {}, QStringLiteral("x")).data().toString(), QStringLiteral("x (3)"));
}

void TestKeyTreeModel::randomPagesUnderTester()
{
    KeyTreeModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.clear(":");
    QRandomGenerator rng(42);
    QSet<QByteArray> all;
    for (int page = 0; page < 12; ++page) {
        QByteArrayList keys;
        for (int i = 0; i < 80; ++i) {
            QByteArray k;
            const int depth = int(rng.bounded(4));
            for (int d = 0; d < depth; ++d)
                k += "g" + QByteArray::number(rng.bounded(5)) + ":";
            k += "k" + QByteArray::number(rng.bounded(400));
            keys << k;
            all.insert(k);
        }
        m.addKeys(keys);
    }
    QCOMPARE(m.keyCount(), all.size());
    QCOMPARE(keysIn(m), all);
    // Each group's count is the number of keys below it.
    std::function<qint64(const QModelIndex &)> check = [&](const QModelIndex &parent) -> qint64 {
        qint64 n = 0;
        for (int r = 0; r < m.rowCount(parent); ++r) {
            const QModelIndex i = m.index(r, 0, parent);
            if (i.data(KeyTreeModel::IsGroupRole).toBool()) {
                const qint64 below = check(i);
                if (i.data(KeyTreeModel::KeyCountRole).toLongLong() != below)
                    return -1000000;
                n += below;
            } else {
                ++n;
            }
        }
        return n;
    };
    QCOMPARE(check({}), qint64(all.size()));
    m.clear(":");
    QCOMPARE(m.rowCount(), 0);
}

void TestKeyTreeModel::sortKeepsPersistentIndexes()
{
    KeyTreeModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.clear(":");
    m.addKeys({"b:z", "b:a", "a:m", "c"});
    m.addKeys({"b:c"});
    const QModelIndex b = child(m, {}, QStringLiteral("b"));
    const QPersistentModelIndex z = child(m, b, QStringLiteral("z"));
    QVERIFY(z.isValid());
    m.sortByName();
    QCOMPARE(m.index(0, 0).data().toString(), QStringLiteral("a (1)"));
    QCOMPARE(m.index(1, 0).data().toString(), QStringLiteral("b (3)"));
    QCOMPARE(m.index(2, 0).data().toString(), QStringLiteral("c"));
    const QModelIndex sortedB = m.index(1, 0);
    QCOMPARE(m.index(0, 0, sortedB).data().toString(), QStringLiteral("a"));
    QCOMPARE(m.index(2, 0, sortedB).data().toString(), QStringLiteral("z"));
    QVERIFY(z.isValid());
    QCOMPARE(z.row(), 2);
    QCOMPARE(z.data(KeyTreeModel::KeyRole).toByteArray(), QByteArray("b:z"));
}

void TestKeyTreeModel::sortOneGroup()
{
    KeyTreeModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.clear(":");
    m.addKeys({"g:c"}); // pages in scan order: c, a, b and z, y
    m.addKeys({"g:a", "h:z"});
    m.addKeys({"g:b", "h:y"});
    const QModelIndex g = child(m, {}, QStringLiteral("g"));
    const QModelIndex h = child(m, {}, QStringLiteral("h"));
    const QPersistentModelIndex c = child(m, g, QStringLiteral("c"));
    QCOMPARE(c.row(), 0);
    const QPersistentModelIndex z = child(m, h, QStringLiteral("z"));
    const int zRow = z.row();
    QVERIFY(!m.sortGroup(g, 2)); // too big for the limit given: left alone
    QVERIFY(m.sortGroup(g, 100));
    QCOMPARE(m.index(0, 0, g).data().toString(), QStringLiteral("a"));
    QCOMPARE(c.row(), 2);
    QCOMPARE(z.row(), zRow); // other groups untouched
    QCOMPARE(m.index(0, 0, h).data().toString(), QStringLiteral("z"));
    // A later page appends; the group sorts again on request.
    m.addKeys({"g:0"});
    QCOMPARE(m.index(3, 0, g).data().toString(), QStringLiteral("0"));
    QVERIFY(m.sortGroup(g, 100));
    QCOMPARE(m.index(0, 0, g).data().toString(), QStringLiteral("0"));
    QVERIFY(m.sortGroup({}, 100)); // the top level
}

namespace {

// The names of a group's rows as shown, top to bottom.
QByteArrayList rowNames(const KeyTreeModel &m, const QModelIndex &parent)
{
    QByteArrayList names;
    for (int r = 0; r < m.rowCount(parent); ++r)
        names << m.index(r, 0, parent).data(KeyTreeModel::KeyRole).toByteArray();
    return names;
}

bool inNaturalOrder(const QByteArrayList &names)
{
    for (qsizetype i = 1; i < names.size(); ++i)
        if (!naturalLess(names[i - 1], names[i]))
            return false;
    return true;
}

} // namespace

void TestKeyTreeModel::bigGroupKeptInNaturalOrder()
{
    // One group of 200,000 keys (c0 .. c199999: numeric segments, so c2 sorts before c10) and a
    // sub-group of 1,000, arriving shuffled in pages of 2,000 as SCAN returns them; the model is
    // kept in order, sorted by background rounds while pages still come. Selection, the current
    // index and an expanded group are persistent indexes: they follow their rows.
    constexpr int kKeys = 200000;
    KeyTreeModel m;
    m.setKeptInOrder(true);
    m.setOrderIntervalMs(20);
    m.clear(":");
    QByteArrayList all;
    for (int i = 0; i < kKeys; ++i)
        all << "big:c" + QByteArray::number(i);
    for (int i = 0; i < 1000; ++i)
        all << "big:sub:k" + QByteArray::number(i);
    QRandomGenerator rng(34);
    std::shuffle(all.begin(), all.end(), rng);
    QItemSelectionModel selection(&m);
    QPersistentModelIndex c10, c2;
    // The tester from the first pages on (it walks every row at each change: a few pages do).
    auto tester = std::make_unique<QAbstractItemModelTester>(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    for (qsizetype at = 0; at < all.size(); at += 2000) {
        m.addKeys(all.mid(at, 2000));
        if (at == 20000)
            tester.reset();
        if (!c10.isValid() && m.findKey("big:c10") != KeyTreeModel::kNoKey && m.findKey("big:c2") != KeyTreeModel::kNoKey) {
            c10 = m.indexOfKey(m.findKey("big:c10"));
            c2 = m.indexOfKey(m.findKey("big:c2"));
            selection.setCurrentIndex(c10, QItemSelectionModel::Select | QItemSelectionModel::Rows);
        }
        QCoreApplication::processEvents(); // rounds come back between pages
    }
    tester = std::make_unique<QAbstractItemModelTester>(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(c10.isValid());
    QTRY_VERIFY_WITH_TIMEOUT(m.isInOrder(), 30000);
    QCOMPARE(m.keyCount(), kKeys + 1000);
    const QModelIndex big = m.index(0, 0);
    QCOMPARE(big.data().toString(), QStringLiteral("big (201,000)"));
    QCOMPARE(m.rowCount(big), kKeys + 1);
    const QModelIndex sub = m.index(0, 0, big);
    QCOMPARE(sub.data().toString(), QStringLiteral("sub (1,000)"));
    const QByteArrayList keys = rowNames(m, big).mid(1);
    QCOMPARE(keys.size(), kKeys);
    QVERIFY(inNaturalOrder(keys));
    QCOMPARE(keys.first(), QByteArray("big:c0"));
    QCOMPARE(keys[2], QByteArray("big:c2"));
    QCOMPARE(keys[10], QByteArray("big:c10"));
    QCOMPARE(keys.last(), QByteArray("big:c199999"));
    const QByteArrayList subKeys = rowNames(m, sub);
    QCOMPARE(subKeys.size(), 1000);
    QVERIFY(inNaturalOrder(subKeys));
    QCOMPARE(subKeys[9], QByteArray("big:sub:k9"));
    QCOMPARE(subKeys[10], QByteArray("big:sub:k10"));
    // The selection and the current index moved with their key.
    QCOMPARE(c10.row(), 1 + 10);
    QCOMPARE(c2.row(), 1 + 2);
    QCOMPARE(selection.currentIndex(), QModelIndex(c10));
    QVERIFY(selection.isRowSelected(c10.row(), big));
    QCOMPARE(selection.selectedRows().size(), 1);
}

void TestKeyTreeModel::orderedGroupTakesNewKeysInPlace()
{
    // A key that comes later (a limiter used again) takes its place in a group in order.
    KeyTreeModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.setKeptInOrder(true);
    m.clear(":");
    m.addKeys({"w:9", "w:10", "w:11"});
    QVERIFY(m.isInOrder()); // each page in natural order, after the one before
    m.addKeys({"w:1"});
    QVERIFY(!m.isInOrder());
    m.orderNow(100);
    QVERIFY(m.isInOrder());
    QCOMPARE(rowNames(m, m.index(0, 0)), (QByteArrayList{"w:1", "w:9", "w:10", "w:11"}));
    // Too many to sort here: in a background round.
    m.addKeys({"w:0"});
    QSignalSpy ordered(&m, &KeyTreeModel::inOrder);
    m.orderNow(2);
    QVERIFY(ordered.wait(10000));
    QCOMPARE(rowNames(m, m.index(0, 0)), (QByteArrayList{"w:0", "w:1", "w:9", "w:10", "w:11"}));
}

void TestKeyTreeModel::pacedOrderWaitsForTheListing()
{
    // While a listing runs on a fast link (paced), no round starts before its time: groups
    // out of order stay so, then are sorted at once when the pace ends.
    KeyTreeModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.setKeptInOrder(true);
    m.setOrderIntervalMs(0);
    m.clear(":");
    m.setOrderPaced(3600 * 1000);
    m.addKeys({"w:9", "w:10", "w:11"});
    m.addKeys({"w:1"});
    QVERIFY(!m.isInOrder());
    // Unpaced, a round at an interval of 0 sorts four keys within a millisecond or two.
    QTest::qWait(200);
    QVERIFY(!m.isInOrder());
    QCOMPARE(rowNames(m, m.index(0, 0)), (QByteArrayList{"w:9", "w:10", "w:11", "w:1"}));
    QSignalSpy ordered(&m, &KeyTreeModel::inOrder);
    m.setOrderPaced(0);
    QVERIFY(ordered.wait(10000));
    QCOMPARE(rowNames(m, m.index(0, 0)), (QByteArrayList{"w:1", "w:9", "w:10", "w:11"}));
}

void TestKeyTreeModel::bigGroupHoldsItsRowsWhilePaced()
{
    // While a listing runs (paced), a group that shows kHoldFrom rows holds the rows that come
    // to it (and everything below them): a tree view lays out every open row again after each
    // insertion. Its count says them at once; the rows come every kHeldMs, kShowStep at a time,
    // and all of them once the pace ends. Small groups are not held.
    constexpr int kShown = KeyTreeModel::kHoldFrom;
    constexpr int kMore = int(KeyTreeModel::kShowStep) + 20000;
    KeyTreeModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.clear(":");
    m.setOrderPaced(3600 * 1000);
    QSet<QByteArray> all;
    const auto add = [&](int from, int to) {
        QByteArrayList page;
        for (int i = from; i < to; ++i)
            page << "big:k" + QByteArray::number(i);
        for (const QByteArray &k : std::as_const(page))
            all.insert(k);
        m.addKeys(page);
    };
    add(0, kShown - 1);
    m.addKeys({"small:a"});
    all.insert("small:a");
    const QModelIndex big = child(m, {}, QStringLiteral("big"));
    const QModelIndex small = child(m, {}, QStringLiteral("small"));
    QCOMPARE(m.rowCount(big), kShown - 1);
    QVERIFY(!m.isHolding());

    // Past kHoldFrom: held, counted, not shown; a new group below it is held with its keys.
    add(kShown - 1, kShown);
    QCOMPARE(m.rowCount(big), kShown);
    QSignalSpy inserted(&m, &QAbstractItemModel::rowsInserted);
    add(kShown, kShown + kMore);
    m.addKeys({"big:sub:x", "small:b"});
    all += QSet<QByteArray>{"big:sub:x", "small:b"};
    QVERIFY(m.isHolding());
    QCOMPARE(m.rowCount(big), kShown);
    QCOMPARE(big.data(KeyTreeModel::KeyCountRole).toLongLong(), qint64(kShown + kMore + 1));
    QCOMPARE(m.rowCount(small), 2);
    QCOMPARE(m.keyCount(), qint64(all.size()));
    for (const QList<QVariant> &args : std::as_const(inserted))
        QVERIFY(args.at(0).value<QModelIndex>() != big);
    // A held key has no row, and its columns come quietly (the tester checks every signal).
    const quint32 held = m.findKey("big:k" + QByteArray::number(kShown + 10));
    QVERIFY(held != KeyTreeModel::kNoKey);
    QVERIFY(!m.claimStale({held}, 0).empty());
    m.setDetails({held}, {KeyDetails{}});

    // Shown a step at a time: the group below first, then the keys, in the order they came.
    inserted.clear();
    QTRY_VERIFY_WITH_TIMEOUT(m.rowCount(big) == kShown + kMore + 1, 10000);
    QVERIFY(inserted.size() >= 2);
    for (const QList<QVariant> &args : std::as_const(inserted))
        QVERIFY(args.at(2).toInt() - args.at(1).toInt() + 1 <= int(KeyTreeModel::kShowStep));
    QCOMPARE(m.index(0, 0, big).data(KeyTreeModel::KeyRole).toByteArray(), QByteArray("big:sub"));
    QCOMPARE(m.index(kShown + 1, 0, big).data(KeyTreeModel::KeyRole).toByteArray(), "big:k" + QByteArray::number(kShown));
    QVERIFY(m.isHolding()); // still paced: the next rows are held too

    // A removal shows every held row first; the end of the pace shows the rest.
    add(kShown + kMore, kShown + kMore + 10);
    QCOMPARE(m.rowCount(big), kShown + kMore + 1);
    const QByteArray gone = "big:k" + QByteArray::number(kShown + kMore + 9);
    m.removeKeys({m.findKey(gone)});
    all.remove(gone);
    QCOMPARE(m.rowCount(big), kShown + kMore + 1 + 9);
    add(kShown + kMore + 10, kShown + kMore + 20);
    QCOMPARE(m.rowCount(big), kShown + kMore + 1 + 9);
    QSignalSpy shown(&m, &KeyTreeModel::allShown);
    m.setOrderPaced(0);
    QVERIFY(shown.wait(10000));
    QVERIFY(!m.isHolding());
    QCOMPARE(m.rowCount(big), kShown + kMore + 1 + 19);
    QCOMPARE(keysIn(m), all);
    // Unpaced, nothing is held.
    add(kShown + kMore + 20, kShown + kMore + 30);
    QCOMPARE(m.rowCount(big), kShown + kMore + 1 + 29);
    QVERIFY(!m.isHolding());
}

void TestKeyTreeModel::roundReadInSlicesFollowsChanges()
{
    // A round's children are read on the GUI thread a few milliseconds at a time: 400,000 keys
    // take several turns of the event loop. Keys removed from the group and keys added to it
    // between two slices: the group is read again, and comes out whole and in order.
    constexpr int kKeys = 400000;
    KeyTreeModel m;
    m.setKeptInOrder(true);
    m.setOrderIntervalMs(0);
    m.clear(":");
    m.setOrderPaced(3600 * 1000); // nothing sorted while the keys come
    QByteArrayList all;
    for (int i = 0; i < kKeys; ++i)
        all << "g:c" + QByteArray::number(i);
    QRandomGenerator rng(36);
    std::shuffle(all.begin(), all.end(), rng);
    for (qsizetype at = 0; at < all.size(); at += 5000)
        m.addKeys(all.mid(at, 5000));
    QVERIFY(!m.isInOrder());
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.setOrderPaced(0);
    m.orderNow(0); // too many to sort here: a round starts, its first slice read now
    std::vector<quint32> gone;
    for (const char *k : {"g:c7", "g:c100", "g:c399999"})
        gone.push_back(m.findKey(k));
    m.removeKeys(gone);
    m.addKeys({"g:c400001", "g:c400000", "g:a"});
    QTRY_VERIFY_WITH_TIMEOUT(m.isInOrder(), 30000);
    const QByteArrayList keys = rowNames(m, m.index(0, 0));
    QCOMPARE(keys.size(), kKeys - 3 + 3);
    QVERIFY(inNaturalOrder(keys));
    QCOMPARE(keys.first(), QByteArray("g:a"));
    QCOMPARE(keys[8], QByteArray("g:c8")); // c7 left
    QCOMPARE(keys.last(), QByteArray("g:c400001"));
    QCOMPARE(m.findKey("g:c100"), KeyTreeModel::kNoKey);
}

void TestKeyTreeModel::lazyColumns()
{
    KeyTreeModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.clear(":");
    m.addKeys({"api:acme", "api:globex"});
    const QModelIndex api = m.index(0, 0);
    const QModelIndex acme = m.index(0, 0, api);
    const quint32 id = m.keyId(acme);
    QVERIFY(id != KeyTreeModel::kNoKey);
    QCOMPARE(m.keyId(api), KeyTreeModel::kNoKey);
    QCOMPARE(m.indexOfKey(id), acme);
    QCOMPARE(acme.siblingAtColumn(KeyTreeModel::AlgorithmColumn).data().toString(), QStringLiteral("…"));

    // Claimed once: a second look while it is being read asks for nothing.
    QCOMPARE(m.claimStale({id}, 2000), std::vector<quint32>{id});
    QVERIFY(m.claimStale({id}, 2000).empty());

    KeyDetails d;
    d.type = "zset";
    d.kind.format = KeyFormat::SlidingLog;
    d.pttlMs = 61000;
    d.memory = 1536;
    d.policy = QStringLiteral("api");
    d.spec = LimitSpec{Algorithm::SlidingLog, 60, 60000000, 1};
    Usage u;
    u.usedNow = 60;
    u.decision = {false, 60, 60, 0, 4200000, 59000000};
    d.usage = u;
    QSignalSpy changed(&m, &QAbstractItemModel::dataChanged);
    m.setDetails({id}, {d});
    QVERIFY(!changed.isEmpty());
    auto text = [&](int column) { return acme.siblingAtColumn(column).data().toString(); };
    QCOMPARE(text(KeyTreeModel::AlgorithmColumn), QStringLiteral("sliding-log"));
    QCOMPARE(text(KeyTreeModel::UsageColumn), QStringLiteral("60 / 60"));
    QCOMPARE(text(KeyTreeModel::RemainingColumn), QStringLiteral("0 · retry in 4.2 s"));
    QCOMPARE(text(KeyTreeModel::TtlColumn), QStringLiteral("1 m 01 s"));
    QCOMPARE(text(KeyTreeModel::MemoryColumn), QStringLiteral("1.5 KiB"));
    QCOMPARE(acme.siblingAtColumn(KeyTreeModel::UsageColumn).data(KeyTreeModel::UsageFractionRole).toDouble(), 1.0);
    QVERIFY(acme.data(Qt::ToolTipRole).toString().contains(QStringLiteral("policy api")));
    // Fresh now; stale after its age.
    QVERIFY(m.claimStale({id}, 2000).empty());
    QCOMPARE(m.claimStale({id}, 0), std::vector<quint32>{id});
    m.releaseClaims({id});
    QCOMPARE(text(KeyTreeModel::UsageColumn),
             QStringLiteral("60 / 60")); // old values stay until new ones arrive

    // A key that is no limiter, and a limiter without a policy.
    const quint32 globex = m.keyId(m.index(1, 0, api));
    KeyDetails plain;
    plain.type = "string";
    KeyDetails orphan;
    orphan.type = "hash";
    orphan.kind.format = KeyFormat::FixedWindow;
    m.claimStale({globex}, 0);
    m.setDetails({globex}, {plain});
    QCOMPARE(m.index(1, KeyTreeModel::AlgorithmColumn, api).data().toString(), QStringLiteral("string"));
    m.claimStale({globex}, 0);
    m.setDetails({globex}, {orphan});
    QCOMPARE(m.index(1, KeyTreeModel::UsageColumn, api).data().toString(), QStringLiteral("no policy"));
}

// Big figures are never elided in the Used / limit column: where "1,000,000 / 1,000,000" does
// not fit, the delegate draws "1.0M / 1.0M"; the tooltip keeps the exact figures.
void TestKeyTreeModel::usageShortWhereItDoesNotFit()
{
    KeyTreeModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.clear(":");
    m.addKeys({"api:big"});
    const QModelIndex big = m.index(0, 0, m.index(0, 0));
    const quint32 id = m.keyId(big);
    KeyDetails d;
    d.type = "string";
    d.kind.format = KeyFormat::FixedWindow;
    d.policy = QStringLiteral("big");
    d.spec = LimitSpec{Algorithm::FixedWindow, 1000000, 60000000, 1};
    Usage u;
    u.usedNow = 1000000;
    u.decision = {false, 1000000, 1000000, 0, 4200000, 59000000};
    d.usage = u;
    m.claimStale({id}, 0);
    m.setDetails({id}, {d});
    const QModelIndex usage = big.siblingAtColumn(KeyTreeModel::UsageColumn);
    QCOMPARE(usage.data().toString(), QStringLiteral("1,000,000 / 1,000,000"));
    QCOMPARE(usage.data(UsageBarDelegate::ShortTextRole).toString(), QStringLiteral("1.0M / 1.0M"));
    QVERIFY(usage.data(Qt::ToolTipRole).toString().contains(QStringLiteral("used 1,000,000 of 1,000,000")));

    QTreeView view;
    view.setModel(&m);
    UsageBarDelegate delegate(KeyTreeModel::UsageFractionRole);
    QStyleOptionViewItem option;
    option.initFrom(&view);
    const int em = option.fontMetrics.horizontalAdvance(QLatin1Char('m'));
    option.rect = QRect(0, 0, 8 * em, 20);
    QCOMPARE(delegate.shownText(option, usage), QStringLiteral("1.0M / 1.0M"));
    QVERIFY(UsageBarDelegate::fits(option, QStringLiteral("1.0M / 1.0M")));
    option.rect = QRect(0, 0, 30 * em, 20);
    QCOMPARE(delegate.shownText(option, usage), QStringLiteral("1,000,000 / 1,000,000"));
    // A cell without a short form keeps its text (elided by the style, as before).
    option.rect = QRect(0, 0, 2 * em, 20);
    QCOMPARE(delegate.shownText(option, big), QStringLiteral("big"));
}

// A group that holds exactly the shards 0..N-1 of one limiter reads "· N shards", and once
// every shard is read, their used summed against their limits; keys numbered from 1 (ids)
// or of different formats are no shards.
void TestKeyTreeModel::shardGroupRows()
{
    KeyTreeModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.clear(":");
    m.addKeys({"rl:{t}:0", "rl:{t}:1", "rl:{t}:2", "rl:{t}:3", "user:1", "user:2", "user:3"});
    QModelIndex shards, users;
    for (int row = 0; row < m.rowCount(); ++row) {
        const QModelIndex top = m.index(row, 0);
        if (top.data(KeyTreeModel::KeyRole).toByteArray() == "rl")
            shards = m.index(0, 0, top);
        if (top.data(KeyTreeModel::KeyRole).toByteArray() == "user")
            users = top;
    }
    QVERIFY(shards.isValid() && users.isValid());
    QCOMPARE(shards.data().toString(), QStringLiteral("{t} · 4 shards"));
    QCOMPARE(users.data().toString(), QStringLiteral("user (3)"));
    QVERIFY(shards.siblingAtColumn(KeyTreeModel::UsageColumn).data().toString().isEmpty()); // not read yet
    std::vector<quint32> ids;
    std::vector<KeyDetails> details;
    const qint64 used[] = {10, 3, 7, 0};
    for (int i = 0; i < 4; ++i) {
        ids.push_back(m.keyId(m.index(i, 0, shards)));
        KeyDetails d;
        d.type = "hash";
        d.kind.format = KeyFormat::Gcra;
        d.spec = LimitSpec{Algorithm::Gcra, 10, 1000000, 1};
        Usage u;
        u.usedNow = used[m.index(i, 0, shards).data().toString().toInt()];
        u.decision = {u.usedNow < 10, 10, u.usedNow, 10 - u.usedNow, 0, 0};
        d.usage = u;
        details.push_back(d);
    }
    QSignalSpy changed(&m, &QAbstractItemModel::dataChanged);
    m.setDetails(ids, details);
    bool groupChanged = false;
    for (const auto &args : changed)
        groupChanged = groupChanged || args.at(0).value<QModelIndex>() == shards;
    QVERIFY(groupChanged); // the group row is told its sum changed
    QCOMPARE(shards.siblingAtColumn(KeyTreeModel::AlgorithmColumn).data().toString(), QStringLiteral("gcra (sharded)"));
    QCOMPARE(shards.siblingAtColumn(KeyTreeModel::UsageColumn).data().toString(), QStringLiteral("20 / 40"));
    QCOMPARE(shards.siblingAtColumn(KeyTreeModel::RemainingColumn).data().toString(), QStringLiteral("20"));
    QCOMPARE(shards.siblingAtColumn(KeyTreeModel::UsageColumn).data(KeyTreeModel::UsageFractionRole).toDouble(), 0.5);
}

void TestKeyTreeModel::trimDetailsKeepsVisible()
{
    KeyTreeModel m;
    m.clear(":");
    QByteArrayList keys;
    for (int i = 0; i < 100; ++i)
        keys << "k:" + QByteArray::number(i);
    m.addKeys(keys);
    std::vector<quint32> ids;
    for (quint32 i = 0; i < 100; ++i)
        ids.push_back(i);
    m.claimStale(ids, 0);
    m.setDetails(ids, std::vector<KeyDetails>(100));
    QCOMPARE(m.detailsCount(), size_t(100));
    m.trimDetails(10, {3, 4});
    QCOMPARE(m.detailsCount(), size_t(2));
    QVERIFY(m.details(3));
    QVERIFY(!m.details(5));
}

void TestKeyTreeModel::memoryPerKey()
{
    // Names like a limiter keyspace's; the benchmark measures the same at a million keys.
    KeyTreeModel m;
    m.clear(":");
    QByteArrayList page;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
        page << "rl:svc" + QByteArray::number(i % 10) + ":tenant" + QByteArray::number(i % 100) + ":user" + QByteArray::number(i);
        if (page.size() == 5000) {
            m.addKeys(page);
            page.clear();
        }
    }
    QCOMPARE(m.keyCount(), n);
    const double perKey = double(m.treeMemoryUsage()) / n;
    qInfo("tree memory per key: %.1f bytes", perKey);
    QVERIFY2(perKey < 120, qPrintable(QString::number(perKey)));
}

void TestKeyTreeModel::policyTableUnderTester()
{
    PolicyTableModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    Policy p;
    p.name = QStringLiteral("api");
    p.match = "demo:api:*";
    p.spec = {Algorithm::Gcra, 30, 10000000, 1};
    p.version = 3;
    m.setPolicies({p, p});
    QCOMPARE(m.rowCount(), 2);
    QCOMPARE(m.index(0, PolicyTableModel::LimitColumn).data().toString(), QStringLiteral("30 per 10 s"));
    QCOMPARE(m.index(0, PolicyTableModel::AlgorithmColumn).data().toString(), QStringLiteral("gcra"));
    m.setPolicies({});
    QCOMPARE(m.rowCount(), 0);
}

void TestKeyTreeModel::formats_data()
{
    QTest::addColumn<QString>("actual");
    QTest::addColumn<QString>("expected");
    QTest::newRow("count") << formatCount(1234567) << QStringLiteral("1,234,567");
    QTest::newRow("small count") << formatCount(999) << QStringLiteral("999");
    QTest::newRow("short small") << formatCountShort(9999) << QStringLiteral("9,999");
    QTest::newRow("short k") << formatCountShort(12345) << QStringLiteral("12k");
    QTest::newRow("short 100k") << formatCountShort(99999) << QStringLiteral("100k");
    QTest::newRow("short k below M") << formatCountShort(999499) << QStringLiteral("999k");
    QTest::newRow("short rounds up to M") << formatCountShort(999999) << QStringLiteral("1.0M");
    QTest::newRow("short M") << formatCountShort(1000000) << QStringLiteral("1.0M");
    QTest::newRow("short M decimal") << formatCountShort(2500000) << QStringLiteral("2.5M");
    QTest::newRow("short 10M") << formatCountShort(9960000) << QStringLiteral("10M");
    QTest::newRow("short G") << formatCountShort(3000000000) << QStringLiteral("3.0G");
    QTest::newRow("short negative") << formatCountShort(-25000) << QStringLiteral("-25k");
    QTest::newRow("usage") << formatUsage(1000000, 1000000) << QStringLiteral("1,000,000 / 1,000,000");
    QTest::newRow("usage short") << formatUsageShort(1000000, 1000000) << QStringLiteral("1.0M / 1.0M");
    QTest::newRow("bytes") << formatSize(472) << QStringLiteral("472 B");
    QTest::newRow("KiB") << formatSize(1536) << QStringLiteral("1.5 KiB");
    QTest::newRow("MiB") << formatSize(150 * 1024 * 1024) << QStringLiteral("150 MiB");
    QTest::newRow("µs") << formatSpan(250) << QStringLiteral("250 µs");
    QTest::newRow("ms") << formatSpan(850000) << QStringLiteral("850 ms");
    QTest::newRow("s") << formatSpan(4200000) << QStringLiteral("4.2 s");
    QTest::newRow("m") << formatSpan(125000000) << QStringLiteral("2 m 05 s");
    QTest::newRow("h") << formatSpan(3723000000) << QStringLiteral("1 h 02 m");
    QTest::newRow("d") << formatSpan(90000000000) << QStringLiteral("1 d 1 h");
    QTest::newRow("no expiry") << formatTtl(-1) << QStringLiteral("no expiry");
    QTest::newRow("gone") << formatTtl(-2) << QStringLiteral("gone");
    QTest::newRow("not known") << formatTtl(-3) << QStringLiteral("?");
    QTest::newRow("limit") << formatLimit({Algorithm::SlidingLog, 60, 10000000, 1}) << QStringLiteral("60 per 10 s");
    QTest::newRow("limit cost") << formatLimit({Algorithm::Gcra, 1200, 60000000, 2}) << QStringLiteral("1,200 per 1 m (cost 2)");
    QTest::newRow("rtt") << formatRoundTrip(0.214) << QStringLiteral("0.21 ms");
}

void TestKeyTreeModel::formats()
{
    QFETCH(QString, actual);
    QFETCH(QString, expected);
    QCOMPARE(actual, expected);
}

QTEST_MAIN(TestKeyTreeModel)
#include "tst_keytreemodel.moc"
