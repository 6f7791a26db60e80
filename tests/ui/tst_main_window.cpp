// SPDX-License-Identifier: Apache-2.0
#include "build_path.h"
#include "application/application_identity.h"
#include "test_window.h"
#include "window_parts.h"
#include "item_models/event_log_model.h"
#include "item_models/plan_model.h"
#include "views/path_elision.h"
#include "main_window.h"
#include "item_models/module_tree_model.h"
#include "item_models/plan_document.h"
#include "views/start_page.h"
#include "application/recent_files.h"

#include <kforge/model_session.h>

#include <optional>

#include <QAbstractItemView>
#include <QDir>
#include <QMap>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileInfo>
#include <QMenu>
#include <QMimeData>
#include <QRandomGenerator>
#include <QSettings>
#include <QTableWidget>
#include <QLabel>
#include <QToolButton>
#include <QTabBar>
#include <QMenuBar>
#include <QGroupBox>
#include <QApplication>
#include <QInputDialog>
#include <QTimer>
#include <QAbstractButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTemporaryFile>
#include <QTest>
#include <QUrl>

#include <functional>
#include <memory>

using kforge::ui::MainWindow;
using kforge::ui::ModuleTreeModel;
using kforge::ui::RecentFiles;
using namespace kforge::ui::test; // part(), and the parts tests use most by name

namespace {

constexpr int kLoadTimeoutMs = 60'000;
const QString kTinyGpt = QStringLiteral("builtin:tiny-gpt");
const QString kTinyMlp = QString::fromUtf8(KFORGE_UI_TEST_DATA) + QStringLiteral("/tiny_mlp.pt");
const QString kExportedBlock =
    QString::fromUtf8(KFORGE_UI_TEST_DATA) + QStringLiteral("/../../data/models/exported_block.pt2");
const QString kSavedBlock =
    QString::fromUtf8(KFORGE_UI_TEST_DATA) + QStringLiteral("/../../data/models/saved_block.pt2");
const QString kTwoPrograms =
    QString::fromUtf8(KFORGE_UI_TEST_DATA) + QStringLiteral("/../../data/models/two_programs.pt2");

std::unique_ptr<MainWindow> makeWindow()
{
    auto window = std::make_unique<MainWindow>();
    window->setModalErrors(false);
    window->show();
    return window;
}

QStringList storedRecentFiles() { return QSettings().value(QStringLiteral("recentFiles")).toStringList(); }

QStringList topLevelModules(const MainWindow& window)
{
    const ModuleTreeModel& model = *part<kforge::ui::ModuleTreeModel>(window, "moduleModel");
    QStringList names;
    const QModelIndex root = model.index(0, 0);
    for (int row = 0; row < model.rowCount(root); ++row)
        names << model.index(row, 0, root).data().toString();
    return names;
}

QAction* menuEntry(QMenu* menu, const QString& source)
{
    for (QAction* action : menu->actions()) {
        if (action->data().toString() == source)
            return action;
    }
    return nullptr;
}

// Sends what a real drag of `mime` onto the window delivers; returns whether the drop was accepted.
bool drop(MainWindow& window, const QMimeData& mime)
{
    const QPoint center = window.rect().center();
    QDragEnterEvent enter(center, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&window, &enter);
    if (!enter.isAccepted())
        return false;
    QDropEvent dropEvent(QPointF(center), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&window, &dropEvent);
    return dropEvent.isAccepted();
}

} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        kforge::ui::test::useTestSettings();
        QVERIFY2(kforge::ui::test::settingsAreTestSettings(), qPrintable(QSettings().fileName()));
        QVERIFY2(QFileInfo::exists(kTinyMlp), qPrintable(kTinyMlp));
    }

    void init() { QSettings().clear(); }

    void openBuiltin()
    {
        const auto window = makeWindow();
        QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
        QSignalSpy failed(window.get(), &MainWindow::loadFailed);
        window->openSource(kTinyGpt);
        QVERIFY(window->isLoading()); // the load runs on the thread pool, not in openSource()
        QTRY_VERIFY_WITH_TIMEOUT(!window->isLoading(), kLoadTimeoutMs);

        QCOMPARE(failed.count(), 0);
        QCOMPARE(loaded.count(), 1);
        QCOMPARE(loaded.first().first().toString(), kTinyGpt);
        QVERIFY(window->session());
        QCOMPARE(window->source(), kTinyGpt);
        QCOMPARE(part<kforge::ui::ModuleTreeModel>(*window, "moduleModel")->rowCount(), 1);
        const QStringList top = topLevelModules(*window);
        QVERIFY2(top.startsWith(QStringLiteral("embed")) && top.contains(QStringLiteral("blocks")),
                 qPrintable(top.join(',')));
        QVERIFY(window->windowTitle().contains(QStringLiteral("tiny-gpt")));
        QCOMPARE(storedRecentFiles(), QStringList{kTinyGpt});
    }

    void openBuiltinFromMenu()
    {
        const auto window = makeWindow();
        QAction* action = menuEntry(window->actions().openBuiltin, kTinyGpt);
        QVERIFY(action);
        QCOMPARE(action->text(), QStringLiteral("tiny-gpt"));
        QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
        action->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kLoadTimeoutMs);
        QCOMPARE(window->source(), kTinyGpt);
    }

    // File › Load Inputs (a torch.save file) gives a model real inputs; the Inputs panel lists each argument's
    // tensor and where it comes from; the model gets the same inputs when it is opened again. A bad file is an error
    // that keeps the inputs as they were.
    void loadInputsFileShowsAndRemembersThem()
    {
        const QString inputs = QString::fromUtf8(KFORGE_UI_TEST_DATA) + QStringLiteral("/tiny_mlp_inputs.pt");
        {
            const auto window = makeWindow();
            QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
            window->openSource(kTinyMlp);
            QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kLoadTimeoutMs);
            QVERIFY(!window->session()->hasInputs());
            QVERIFY(window->actions().loadInputs->isEnabled());
            QCOMPARE(window->actions().loadInputs->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_I));
            QString error;
            QVERIFY2(window->loadInputsFile(inputs, &error), qPrintable(error));
            QCOMPARE(window->session()->describeInputs(), std::vector<std::string>{"float32[3,8]"});
            auto* panel = window->findChild<QTableWidget*>(QStringLiteral("inputsTable"));
            QVERIFY(panel);
            QCOMPARE(panel->rowCount(), 1);
            QCOMPARE(panel->item(0, 0)->text(), QStringLiteral("x"));
            QCOMPARE(panel->item(0, 1)->text(), QStringLiteral("float32[3,8]"));
            auto* source = window->findChild<QLabel*>(QStringLiteral("inputsSource"));
            QVERIFY(source && source->text().contains(QStringLiteral("tiny_mlp_inputs.pt")));

            QVERIFY(!window->loadInputsFile(
                QString::fromUtf8(KFORGE_UI_TEST_DATA) + QStringLiteral("/no_such_inputs.pt"), &error));
            QVERIFY2(error.contains(QStringLiteral("no_such_inputs.pt")), qPrintable(error));
            QCOMPARE(window->session()->describeInputs(), std::vector<std::string>{"float32[3,8]"});
        }
        const auto again = makeWindow();
        QSignalSpy loaded(again.get(), &MainWindow::modelLoaded);
        again->openSource(kTinyMlp);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kLoadTimeoutMs);
        QCOMPARE(again->session()->describeInputs(), std::vector<std::string>{"float32[3,8]"});
    }

    // File › Set Inputs: a spec the session refuses (an oversized tensor) is explained inside the dialog, which stays
    // open with what was typed; a corrected spec then applies.
    void refusedInputSpecKeepsTheDialogAndTheText()
    {
        const auto window = makeWindow();
        QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
        window->openSource(kTinyMlp);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kLoadTimeoutMs);
        const QString oversized = QStringLiteral("float32[100000,100000,100000]");
        QStringList labels, texts; // what each showing of the dialog said and held
        int shown = 0;
        std::function<void()> answer = [&] {
            auto* dialog = qobject_cast<QInputDialog*>(QApplication::activeModalWidget());
            if (!dialog) {
                QTimer::singleShot(20, answer);
                return;
            }
            labels << dialog->labelText();
            texts << dialog->textValue();
            dialog->setTextValue(++shown == 1 ? oversized : QStringLiteral("float32[2,8]"));
            dialog->accept();
            if (shown < 2)
                QTimer::singleShot(20, answer);
        };
        QTimer::singleShot(0, answer);
        window->actions().setInputs->trigger(); // returns when the dialog closes for good
        QCOMPARE(shown, 2);
        QVERIFY2(!labels[0].contains(QStringLiteral("Not applied")), qPrintable(labels[0]));
        QVERIFY2(labels[1].contains(QStringLiteral("Not applied")), qPrintable(labels[1]));
        QCOMPARE(texts[1], oversized);
        QCOMPARE(window->session()->describeInputs(), std::vector<std::string>{"float32[2,8]"});
        QVERIFY(!QApplication::activeModalWidget());
    }

    void recentFilesKeepTheNewestTen()
    {
        RecentFiles recent;
        for (int i = 0; i < 12; ++i)
            recent.add(QStringLiteral("/models/m%1.pt").arg(i));
        recent.add(QStringLiteral("/models/m5.pt"));
        const QStringList entries = storedRecentFiles();
        QCOMPARE(entries.size(), RecentFiles::kMaxEntries);
        QCOMPARE(entries.first(), QStringLiteral("/models/m5.pt"));
        QCOMPARE(entries.at(1), QStringLiteral("/models/m11.pt"));
        QVERIFY(!entries.contains(QStringLiteral("/models/m1.pt")));
        QCOMPARE(entries.count(QStringLiteral("/models/m5.pt")), 1);
    }

    void failingRecentEntryIsRemoved()
    {
        const QString gone = QDir::temp().absoluteFilePath(
            QStringLiteral("kforge-gone-%1.pt").arg(QRandomGenerator::global()->generate()));
        QSettings().setValue(QStringLiteral("recentFiles"), QStringList{gone, kTinyGpt});
        const auto window = makeWindow();
        QMenu* menu = window->actions().openRecent;
        QVERIFY(menu->isEnabled());
        QAction* entry = menuEntry(menu, gone);
        QVERIFY(entry);
        QVERIFY(menuEntry(menu, kTinyGpt));

        QSignalSpy failed(window.get(), &MainWindow::loadFailed);
        entry->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, kLoadTimeoutMs);
        const QString message = failed.first().first().toString();
        QVERIFY2(message.contains(QFileInfo(gone).fileName()), qPrintable(message));
        QVERIFY2(!message.contains(QLatin1Char('\n')), qPrintable(message));
        QCOMPARE(storedRecentFiles(), QStringList{kTinyGpt});
        QTRY_VERIFY(!menuEntry(menu, gone));
        QVERIFY(menuEntry(menu, kTinyGpt));
    }

    // Open Recent lists the plans and profiles opened or saved too, below the models; choosing one opens it where it
    // belongs; one that is gone leaves the list with a word in the status bar.
    void recentPlansAndProfiles()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString planPath = dir.filePath(QStringLiteral("tiny.kfplan.json"));
        {
            const auto window = makeWindow();
            QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
            window->openSource(kTinyGpt);
            QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kLoadTimeoutMs);
            window->addPlanEntry(QStringLiteral("blocks.0.mlp"), QStringLiteral("gelu"),
                                 QStringLiteral("AtenGeluProvider"));
            QVERIFY(window->savePlanAs(planPath));
        }
        QCOMPARE(QSettings().value(QStringLiteral("recentDocuments")).toStringList(),
                 QStringList{QFileInfo(planPath).absoluteFilePath()});

        const auto window = makeWindow();
        QMenu* menu = window->actions().openRecent;
        QVERIFY(menu->isEnabled());
        QAction* entry = menuEntry(menu, QFileInfo(planPath).absoluteFilePath());
        QVERIFY(entry);
        QCOMPARE(entry->text(), QStringLiteral("tiny.kfplan.json"));
        entry->trigger();
        QCOMPARE(planDocument(*window)->plan().entries.size(), size_t(1));

        QVERIFY(QFile::remove(planPath));
        QTRY_VERIFY(menuEntry(menu, QFileInfo(planPath).absoluteFilePath()));
        menuEntry(menu, QFileInfo(planPath).absoluteFilePath())->trigger();
        QVERIFY(QSettings().value(QStringLiteral("recentDocuments")).toStringList().isEmpty());
        QTRY_VERIFY(!menuEntry(menu, QFileInfo(planPath).absoluteFilePath()));
    }

    // Before a model is open the window shows a start page: the built-in models and the recent models, plans and
    // profiles as links that open them.
    void startPageOpensBuiltinsAndRecentFiles()
    {
        QSettings().setValue(QStringLiteral("recentFiles"), QStringList{kTinyMlp});
        const auto window = makeWindow();
        window->show();
        auto* start = window->findChild<kforge::ui::StartPage*>(QStringLiteral("startPage"));
        QVERIFY(start);
        QVERIFY(start->isVisible());
        QVERIFY2(start->builtinsLabel()->text().contains(QStringLiteral(">tiny-gpt<")),
                 qPrintable(start->builtinsLabel()->text()));
        QVERIFY2(start->recentLabel()->text().contains(QFileInfo(kTinyMlp).fileName()),
                 qPrintable(start->recentLabel()->text()));

        QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
        Q_EMIT start->builtinsLabel()->linkActivated(QStringLiteral("model:builtin%3Atiny-gpt"));
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kLoadTimeoutMs);
        QCOMPARE(window->source(), kTinyGpt);
        QVERIFY(!start->isVisible()); // the module tree replaces it
    }

    void dropFileLoadsIt()
    {
        const auto window = makeWindow();
        QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
        QSignalSpy failed(window.get(), &MainWindow::loadFailed);
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(kTinyMlp)});
        QVERIFY(drop(*window, mime));
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() + failed.count() > 0, kLoadTimeoutMs);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
        const QString expected = QFileInfo(kTinyMlp).absoluteFilePath();
        QCOMPARE(window->source(), expected);
        QCOMPARE(topLevelModules(*window), (QStringList{"norm", "mlp", "head"}));
        QCOMPARE(storedRecentFiles(), QStringList{expected});
    }

    // A torch.export package opens like a TorchScript file: its module tree from the serialized graph, with the
    // package's sample input as the model's input.
    void dropExportedPackageLoadsIt()
    {
        const auto window = makeWindow();
        QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
        QSignalSpy failed(window.get(), &MainWindow::loadFailed);
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(kExportedBlock)});
        QVERIFY(drop(*window, mime));
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() + failed.count() > 0, kLoadTimeoutMs);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
        QCOMPARE(topLevelModules(*window), (QStringList{"blocks", "shared"}));
        QCOMPARE(window->session()->describeInputs(), std::vector<std::string>{"float32[2,16]"});
    }

    // torch.export.save's package opens as it is; a package with several programs asks which (a dialog in the
    // app, a chooser here), and opens nothing when that is cancelled.
    void packageWithSeveralProgramsAsksWhich()
    {
        const auto window = makeWindow();
        QList<kforge::ui::ProgramChoice> offered;
        std::optional<kforge::ui::ProgramChoice> answer = kforge::ui::ProgramChoice{QStringLiteral("decode")};
        window->setProgramChooser([&](const QString&, const QList<kforge::ui::ProgramChoice>& choices) {
            offered = choices;
            return answer;
        });
        QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
        QSignalSpy failed(window.get(), &MainWindow::loadFailed);
        window->openSource(kSavedBlock);
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() + failed.count() > 0, kLoadTimeoutMs);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
        QVERIFY2(offered.isEmpty(), "a package with one program opens without asking");

        window->openSource(kTwoPrograms);
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() + failed.count() > 1, kLoadTimeoutMs);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
        // Each program, run node by node: the package holds no compiled code to offer.
        QCOMPARE(offered, (QList<kforge::ui::ProgramChoice>{{"encode"}, {"decode"}}));
        QCOMPARE(window->session()->describeInputs(), std::vector<std::string>{"float32[2,4]"}); // decode's

        answer.reset(); // cancelled: nothing is opened, the model on screen stays
        window->openSource(kTwoPrograms);
        QVERIFY(!window->isLoading());
        QCOMPARE(window->session()->describeInputs(), std::vector<std::string>{"float32[2,4]"});
    }

    // A package holding an exported program and its AOTInductor compiled code (package_pt2) offers both ways to run
    // it, the program first; the compiled code, chosen, runs with the program's module tree. Compiling takes a C++
    // compiler and half a minute, so the corpus test aoti_package makes the package and runs this with it.
    void aPackageWithCompiledCodeOffersToRunIt()
    {
        const QString both = qEnvironmentVariable("KFORGE_TEST_COMPILED_BESIDE_PT2");
        if (both.isEmpty())
            QSKIP("run by the corpus test aoti_package, which compiles the package (KFORGE_TEST_COMPILED_BESIDE_PT2)");
        const auto window = makeWindow();
        QList<kforge::ui::ProgramChoice> offered;
        window->setProgramChooser([&](const QString&, const QList<kforge::ui::ProgramChoice>& choices) {
            offered = choices;
            return std::optional(choices.last());
        });
        QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
        QSignalSpy failed(window.get(), &MainWindow::loadFailed);
        window->openSource(both);
        QTRY_VERIFY_WITH_TIMEOUT(loaded.count() + failed.count() > 0, kLoadTimeoutMs);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
        QCOMPARE(offered, (QList<kforge::ui::ProgramChoice>{{"model", false}, {"model", true}}));
        const std::vector<std::string>& warnings = window->session()->warnings();
        QVERIFY(!warnings.empty() && warnings.front().find("running the AOTInductor compiled code") == 0);
        QVERIFY2(topLevelModules(*window).contains("proj"), "the exported program's module tree");
    }

    // A module path too long for its cell keeps its end in every table that shows one ("…layers.1.mlp.act_fn"; the
    // plan table and the event log cut "m.model.layers.…"), other cells their beginning ("scaled_dot_p…").
    void modulePathsKeepTheirEndsInEveryTable()
    {
        const auto window = makeWindow();
        const auto elision = [&](const char* table, int column) {
            const auto* delegate = dynamic_cast<const kforge::ui::PathElisionDelegate*>(
                part<QAbstractItemView>(*window, table)->itemDelegate());
            return delegate ? delegate->elisionOf(column) : Qt::ElideNone;
        };
        QCOMPARE(elision("planTable", kforge::ui::PlanModel::ScopeColumn), Qt::ElideLeft);
        QCOMPARE(elision("planTable", kforge::ui::PlanModel::ProviderColumn), Qt::ElideRight);
        QCOMPARE(elision("eventLogTable", kforge::ui::EventLogModel::ModuleColumn), Qt::ElideLeft);
        QCOMPARE(elision("eventLogTable", kforge::ui::EventLogModel::FunctionColumn), Qt::ElideRight);
        QCOMPARE(elision("moduleTreeView", kforge::ui::ModuleTreeModel::ModuleColumn), Qt::ElideLeft);
    }

    // No two actions of the window share a key: Qt calls such a shortcut ambiguous and runs neither (Open Plan and
    // Optimize both had Ctrl+Shift+O). A view's own actions (WidgetWithChildrenShortcut: Delete in the plan editor)
    // act only where they are and are left out.
    void noTwoActionsShareAShortcut()
    {
        const auto window = makeWindow();
        QMap<QString, QString> owner; // key sequence -> the action that has it
        for (const QAction* action : window->findChildren<QAction*>()) {
            if (action->shortcutContext() == Qt::WidgetShortcut ||
                action->shortcutContext() == Qt::WidgetWithChildrenShortcut)
                continue;
            for (const QKeySequence& key : action->shortcuts()) {
                const QString text = key.toString(QKeySequence::PortableText);
                const QString name = action->text().remove(QLatin1Char('&'));
                QVERIFY2(!owner.contains(text) || owner.value(text) == name,
                         qPrintable(text + QStringLiteral(": ") + owner.value(text) + QStringLiteral(" and ") + name));
                owner.insert(text, name);
            }
        }
        QVERIFY(owner.size() > 20);
        QCOMPARE(window->actions().optimize->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
        QCOMPARE(window->actions().openPlan->shortcut(), QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_P));
    }

    // Alt+letter opens a menu of the menu bar; a widget's mnemonic with the same letter (a tab "&Flame Graph", a
    // label "Com&pare by:") takes the key instead while its page is shown, and an action's Alt+letter shortcut
    // shadows the menu. No widget of any page, no tab and no action may use a menu bar mnemonic.
    void noMnemonicOrShortcutCollidesWithTheMenuBar()
    {
        const auto window = makeWindow();
        const auto mnemonicOf = [](const QString& text) -> QChar {
            for (qsizetype i = 0; i + 1 < text.size(); ++i) {
                if (text[i] != QLatin1Char('&'))
                    continue;
                if (text[i + 1] == QLatin1Char('&')) {
                    ++i; // "&&" is a literal ampersand
                    continue;
                }
                return text[i + 1].toUpper();
            }
            return {};
        };
        QMap<QChar, QString> menus; // mnemonic -> menu title
        for (const QAction* action : window->menuBar()->actions())
            if (const QChar key = mnemonicOf(action->text()); !key.isNull())
                menus.insert(key, action->text());
        QVERIFY2(menus.size() >= 4, qPrintable(QStringList(menus.values()).join(QLatin1Char(' '))));

        QStringList collisions;
        const auto check = [&](const QString& what, const QString& text) {
            const QChar key = mnemonicOf(text);
            if (!key.isNull() && menus.contains(key))
                collisions << QStringLiteral("%1 \"%2\" takes Alt+%3 from the menu \"%4\"")
                                  .arg(what, text, QString(key), menus.value(key));
        };
        for (const QAbstractButton* button : window->findChildren<QAbstractButton*>())
            if (!qobject_cast<const QToolButton*>(button) || !button->text().isEmpty())
                check(QStringLiteral("button"), button->text());
        for (const QLabel* label : window->findChildren<QLabel*>())
            if (label->buddy())
                check(QStringLiteral("label"), label->text());
        for (const QGroupBox* box : window->findChildren<QGroupBox*>())
            check(QStringLiteral("group"), box->title());
        for (const QTabBar* tabs : window->findChildren<QTabBar*>())
            for (int i = 0; i < tabs->count(); ++i)
                check(QStringLiteral("tab"), tabs->tabText(i));
        for (const QAction* action : window->findChildren<QAction*>())
            for (const QKeySequence& key : action->shortcuts())
                for (const auto& [letter, menu] : menus.asKeyValueRange())
                    if (key == QKeySequence(Qt::ALT | Qt::Key(letter.unicode())))
                        collisions << QStringLiteral("action \"%1\" has Alt+%2, the menu \"%3\"'s key")
                                          .arg(action->text(), QString(letter), menu);
        QVERIFY2(collisions.isEmpty(), qPrintable(collisions.join(QLatin1Char('\n'))));
    }

    void dropWithoutFileIsRefused()
    {
        const auto window = makeWindow();
        QMimeData mime;
        mime.setText(QStringLiteral("builtin:tiny-gpt"));
        QVERIFY(!drop(*window, mime));
        mime.setUrls({QUrl(QStringLiteral("https://example.com/model.pt"))});
        QVERIFY(!drop(*window, mime));
        QVERIFY(!window->isLoading());
    }

    void invalidFileReportsFailure()
    {
        QTemporaryFile file(QDir::temp().absoluteFilePath(QStringLiteral("kforge-garbage-XXXXXX.pt")));
        QVERIFY(file.open());
        QByteArray noise(4096, Qt::Uninitialized);
        QRandomGenerator(42).fillRange(reinterpret_cast<quint32*>(noise.data()), noise.size() / 4);
        file.write(noise);
        file.flush();

        const auto window = makeWindow();
        QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
        QSignalSpy failed(window.get(), &MainWindow::loadFailed);
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(file.fileName())});
        QVERIFY(drop(*window, mime));
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, kLoadTimeoutMs);
        const QString message = failed.first().first().toString();
        QVERIFY2(message.contains(QFileInfo(file.fileName()).fileName()), qPrintable(message));
        QCOMPARE(loaded.count(), 0);
        QVERIFY(!window->session());
        QVERIFY(storedRecentFiles().isEmpty());

        // The window stays usable after a failure.
        window->openSource(kTinyGpt);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kLoadTimeoutMs);
        QCOMPARE(failed.count(), 1);
    }

    void latestRequestWins()
    {
        const auto window = makeWindow();
        QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
        QSignalSpy failed(window.get(), &MainWindow::loadFailed);
        QSignalSpy loading(window.get(), &MainWindow::loadingChanged);
        window->openSource(QDir::temp().absoluteFilePath(QStringLiteral("kforge-never-there.pt")));
        window->openSource(kTinyGpt);
        QTRY_VERIFY_WITH_TIMEOUT(!window->isLoading(), kLoadTimeoutMs);
        QCOMPARE(failed.count(), 0);
        QCOMPARE(loaded.count(), 1);
        QCOMPARE(window->source(), kTinyGpt);
        QCOMPARE(loading.count(), 2); // one busy period: true, then false
    }

    void closingWhileLoadingIsSafe()
    {
        auto window = makeWindow();
        window->openSource(kTinyGpt);
        QVERIFY(window->isLoading());
        window.reset(); // must wait for the worker rather than crash
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
