// SPDX-License-Identifier: Apache-2.0
// Edit › Preferences and Help › About: the provider-plugin page (the example plugin listed once loaded, a bad
// plugin's error inline, the start-up list kept in QSettings, removal taking effect on restart), the General
// page's defaults, and the About report with every version it promises.
#include "build_path.h"
#include "application/app_settings.h"
#include "test_window.h"
#include "window_parts.h"
#include "application/application_identity.h"
#include "main_window.h"
#include "application/provider_plugins.h"
#include "application/system_info.h"
#include "views/about_dialog.h"
#include "item_models/provider_catalog_model.h"
#include "views/general_settings_page.h"
#include "views/plan_editor_view.h"
#include "views/plugin_settings_page.h"
#include "views/profile_page.h"
#include "controllers/profile_controller.h"
#include "views/provider_catalog_view.h"
#include "views/settings_dialog.h"

#include <kforge/model_session.h>
#include <kforge/provider_catalog.h>
#include <kforge/version.h>

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QClipboard>
#include <QFileInfo>
#include <QGuiApplication>
#include <QListWidget>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTest>
#include <QTabWidget>
#include <QTimer>
#include <QTreeWidget>

using kforge::ui::PluginSettingsPage;
using kforge::ui::ProviderCatalogModel;
using kforge::ui::SettingsDialog;
using namespace kforge::ui::test; // part(), and the parts tests use most by name
using namespace kforge::ui::test;

namespace {

const QString kExamplePlugin = QString::fromUtf8(KFORGE_EXAMPLE_PLUGIN);

QStringList column(const QTreeWidget* tree, int c)
{
    QStringList out;
    for (int i = 0; i < tree->topLevelItemCount(); ++i)
        out << tree->topLevelItem(i)->text(c);
    return out;
}

QStringList rows(const QListWidget* list)
{
    QStringList out;
    for (int i = 0; i < list->count(); ++i)
        out << list->item(i)->text();
    return out;
}

bool catalogHas(const std::string& type)
{
    for (const kforge::ProviderCatalogEntry& entry : kforge::providerCatalog())
        if (entry.typeName == type)
            return true;
    return false;
}

} // namespace

class TestPreferences : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        useTestSettings();
        QVERIFY2(settingsAreTestSettings(), qPrintable(QSettings().fileName()));
        QVERIFY2(QFileInfo::exists(kExamplePlugin), qPrintable(kExamplePlugin));
    }

    void badPluginShowsItsErrorInline()
    {
        SettingsDialog dialog;
        PluginSettingsPage* page = dialog.pluginPage();
        const QString bad = QStringLiteral("/nonexistent/libno_such_plugin.so");
        QVERIFY(!page->addPlugin(bad));
        QVERIFY2(page->errorText().contains(QStringLiteral("libno_such_plugin.so")), qPrintable(page->errorText()));
        QVERIFY(kforge::ui::AppSettings::providerPluginPaths().isEmpty()); // a refused plugin is not kept
        QCOMPARE(page->startupPlugins()->count(), 0);

        // Not a plugin at all: a shared library without the plugin's entry point.
        QVERIFY(!page->addPlugin(QString::fromUtf8(KFORGE_NOT_A_PLUGIN)));
        QVERIFY(!page->errorText().isEmpty());
    }

    void examplePluginListedAndPersisted()
    {
        QVERIFY(!catalogHas("ExampleReluProvider"));
        // Through the window's Edit › Preferences: the plugin's provider joins the plan editor's catalog.
        kforge::ui::MainWindow window;
        const auto windowCatalogHas = [&window](const QString& type) {
            const ProviderCatalogModel* catalog =
                part<kforge::ui::PlanEditorView>(window, "planEditorView")->catalogView()->model();
            for (int row = 0; row < catalog->rowCount(); ++row)
                if (catalog->index(row, ProviderCatalogModel::ProviderColumn).data().toString() == type)
                    return true;
            return false;
        };
        QVERIFY(!windowCatalogHas(QStringLiteral("ExampleReluProvider")));
        int changes = 0;
        QString error;
        QTimer::singleShot(0, &window, [&] {
            auto* dialog = window.findChild<SettingsDialog*>();
            if (!dialog)
                return;
            connect(dialog, &SettingsDialog::pluginsChanged, dialog, [&changes] { ++changes; });
            if (!dialog->pluginPage()->addPlugin(kExamplePlugin))
                error = dialog->pluginPage()->errorText();
            dialog->reject();
        });
        window.actions().preferences->trigger(); // modal until the timer closes it
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(changes, 1);
        QVERIFY(catalogHas("ExampleReluProvider"));
        QVERIFY(windowCatalogHas(QStringLiteral("ExampleReluProvider")));

        SettingsDialog dialog;
        PluginSettingsPage* page = dialog.pluginPage();

        // Listed among the loaded plugins with its provider types and ABI.
        const QStringList paths = column(page->loadedPlugins(), 0);
        const int row = int(paths.indexOf(QFileInfo(kExamplePlugin).absoluteFilePath()));
        QVERIFY2(row >= 0, qPrintable(paths.join(',')));
        QCOMPARE(column(page->loadedPlugins(), 1).at(row), QStringLiteral("ExampleReluProvider"));
        QVERIFY(column(page->loadedPlugins(), 2).at(row).startsWith(QStringLiteral("kforge-provider-abi-")));

        // Kept for the next start, and shown by a new dialog.
        QCOMPARE(kforge::ui::AppSettings::providerPluginPaths(),
                 QStringList{QFileInfo(kExamplePlugin).absoluteFilePath()});
        SettingsDialog again;
        QCOMPARE(rows(again.pluginPage()->startupPlugins()), QStringList{QFileInfo(kExamplePlugin).absoluteFilePath()});

        // At the next start: loaded already here, so nothing fails; adding it twice keeps one entry.
        QCOMPARE(kforge::ui::loadStoredProviderPlugins(), QStringList());
        QVERIFY(again.pluginPage()->addPlugin(kExamplePlugin));
        QCOMPARE(kforge::ui::AppSettings::providerPluginPaths().size(), 1);
    }

    // Preferences › Op Libraries: a library of custom ops is loaded at once, listed with the ops it registered, kept
    // for the next start; one that is not a library says why inline and is not kept.
    void opLibraryListedWithItsOpsAndPersisted()
    {
        SettingsDialog dialog;
        PluginSettingsPage* page = dialog.opLibraryPage();
        QVERIFY(dialog.pages()->indexOf(page) >= 0);
        QVERIFY(!page->addPlugin(QStringLiteral("/nonexistent/libno_such_ops.so")));
        QVERIFY2(page->errorText().contains(QStringLiteral("file not found")), qPrintable(page->errorText()));
        QVERIFY(kforge::ui::AppSettings::opLibraryPaths().isEmpty());

        const QString library = QFileInfo(QString::fromUtf8(KFORGE_TEST_CUSTOM_OPS)).absoluteFilePath();
        QVERIFY2(page->addPlugin(library), qPrintable(page->errorText()));
        const int row = int(column(page->loadedPlugins(), 0).indexOf(QFileInfo(library).canonicalFilePath()));
        QVERIFY2(row >= 0, qPrintable(column(page->loadedPlugins(), 0).join(',')));
        QCOMPARE(column(page->loadedPlugins(), 1).at(row), QStringLiteral("kforge_test::scale"));
        QCOMPARE(kforge::ui::AppSettings::opLibraryPaths(), QStringList{library});
        QVERIFY(kforge::ui::AppSettings::providerPluginPaths().isEmpty() ||
                !kforge::ui::AppSettings::providerPluginPaths().contains(library)); // a list of its own
        SettingsDialog again;
        QCOMPARE(rows(again.opLibraryPage()->startupPlugins()), QStringList{library});
        QCOMPARE(kforge::ui::loadStoredOpLibraries(), QStringList());
    }

    void removalTakesEffectOnRestart()
    {
        kforge::ui::AppSettings::setProviderPluginPaths({QFileInfo(kExamplePlugin).absoluteFilePath()});
        QVERIFY(kforge::ui::ensureProviderPluginLoaded(kExamplePlugin).isEmpty());
        SettingsDialog dialog;
        PluginSettingsPage* page = dialog.pluginPage();
        QCOMPARE(page->startupPlugins()->count(), 1);
        page->removePlugin(0);
        QCOMPARE(page->startupPlugins()->count(), 0);
        QVERIFY(kforge::ui::AppSettings::providerPluginPaths().isEmpty());
        QVERIFY2(page->noteText().contains(QStringLiteral("takes effect on restart")), qPrintable(page->noteText()));
        QVERIFY(catalogHas("ExampleReluProvider")); // still loaded: plugins cannot be unloaded
    }

    void storedBadPluginIsReportedAtStart()
    {
        kforge::ui::AppSettings::setProviderPluginPaths({QStringLiteral("/nonexistent/libgone.so")});
        const QStringList errors = kforge::ui::loadStoredProviderPlugins();
        QCOMPARE(errors.size(), 1);
        QVERIFY2(errors.first().contains(QStringLiteral("libgone.so")), qPrintable(errors.first()));
        kforge::ui::AppSettings::setProviderPluginPaths({});
    }

    void generalPageDefaults()
    {
        {
            SettingsDialog dialog;
            kforge::ui::GeneralSettingsPage* general = dialog.generalPage();
            QVERIFY(!general->keepLeftoversBox()->isChecked());
            general->keepLeftoversBox()->setChecked(true);
            general->captureWarmupBox()->setValue(5);
        }
        QVERIFY(kforge::ui::AppSettings::keepLeftovers());
        QCOMPARE(kforge::ui::AppSettings::captureWarmupIterations(), 5);
        // A window opened from now on starts with Keep Leftovers on.
        kforge::ui::MainWindow window;
        QVERIFY(window.actions().keepLeftovers->isChecked());
        QCOMPARE(window.actions().preferences->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_Comma));
        kforge::ui::AppSettings::setKeepLeftovers(false);
        kforge::ui::MainWindow later;
        QVERIFY(!later.actions().keepLeftovers->isChecked());
    }

    // The graph executor defaults to Direct (first result at once); the choice persists and models opened
    // afterwards run with it.
    void graphExecutorPreference()
    {
        {
            SettingsDialog dialog;
            QComboBox* combo = dialog.generalPage()->graphExecutorCombo();
            QCOMPARE(combo->currentData().toInt(), int(kforge::GraphExecutor::Direct));
            combo->setCurrentIndex(combo->findData(int(kforge::GraphExecutor::Optimized)));
        }
        QCOMPARE(kforge::ui::AppSettings::graphExecutor(), kforge::GraphExecutor::Optimized);
        kforge::ui::MainWindow window;
        window.setModalErrors(false);
        QSignalSpy loaded(&window, &kforge::ui::MainWindow::modelLoaded);
        window.openSource(QStringLiteral("builtin:tiny-gpt"));
        QVERIFY(QTest::qWaitFor([&] { return loaded.count() > 0; }, 120'000));
        QCOMPARE(window.session()->options().executor, kforge::GraphExecutor::Optimized);
        kforge::ui::AppSettings::setGraphExecutor(kforge::GraphExecutor::Direct);
    }

    // Intra-op threads (kforge --threads) for models opened from now on: one makes CPU timings steadiest; 0 brings
    // LibTorch's own count back for the next model. The profile header says how many ran.
    void intraOpThreadsPreference()
    {
        const int libtorchDefault = kforge::intraOpThreadCount();
        {
            SettingsDialog dialog;
            QSpinBox* box = dialog.generalPage()->intraOpThreadsBox();
            QCOMPARE(box->value(), 0);
            QVERIFY(box->specialValueText().contains(QStringLiteral("default")));
            box->setValue(1);
        }
        QCOMPARE(kforge::ui::AppSettings::intraOpThreads(), 1);
        // What a profile of a model opened then ran with, on the window's worker thread (OpenMP's count is each
        // thread's own: set where the model opened only, the forwards kept the worker's).
        const auto threadsProfiled = [] {
            kforge::ui::MainWindow window;
            window.setModalErrors(false);
            QSignalSpy loaded(&window, &kforge::ui::MainWindow::modelLoaded);
            window.openSource(QStringLiteral("builtin:tiny-gpt"));
            if (!QTest::qWaitFor([&] { return loaded.count() > 0; }, 120'000))
                return -1;
            QSignalSpy profiled(&window, &kforge::ui::MainWindow::profileFinished);
            profilePage(window)->setDevice(QStringLiteral("cpu"));
            if (!window.profileBaseline() || !QTest::qWaitFor([&] { return profiled.count() > 0; }, 120'000))
                return -2;
            return profileResults(window)->baseline.run->intraOpThreads;
        };
        QCOMPARE(threadsProfiled(), 1);
        kforge::ui::AppSettings::setIntraOpThreads(0);
        QCOMPARE(threadsProfiled(), libtorchDefault);
    }

    void aboutListsTheVersions()
    {
        kforge::ui::AboutDialog dialog;
        const QString text = dialog.text();
        const kforge::SystemReport& report = kforge::ui::cachedSystemReport();
        QVERIFY2(text.contains(QStringLiteral("KForge " KFORGE_VERSION_STRING)), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("Qt %1").arg(QString::fromLatin1(qVersion()))), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("LibTorch %1").arg(QString::fromStdString(report.torchVersion))),
                 qPrintable(text));
        QVERIFY(!report.torchVersion.empty());
        if (report.torchCudaBuild)
            QVERIFY2(text.contains(QStringLiteral("CUDA %1").arg(QString::fromStdString(report.torchCudaVersion))),
                     qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("CUPTI")), qPrintable(text));
        if (report.cuptiLinked)
            QVERIFY(text.contains(QString::fromStdString(report.cuptiVersion)));
        for (const std::string& device : report.cudaDevices)
            QVERIFY2(text.contains(QString::fromStdString(device)), qPrintable(text));
        if (report.cudaDevices.empty())
            QVERIFY(text.contains(QStringLiteral("CUDA devices: none visible")));

        QGuiApplication::clipboard()->clear();
        QTest::mouseClick(dialog.copyButton(), Qt::LeftButton);
        QCOMPARE(QGuiApplication::clipboard()->text(), text);
    }
};

QTEST_MAIN(TestPreferences)
#include "tst_preferences.moc"
