// SPDX-License-Identifier: Apache-2.0
// PlanFileController on its own, without a main window: the unsaved-changes answer decides whether a plan may be
// replaced, and every file operation says what happened (statusMessage) or what went wrong (error), naming the file.
#include "item_models/plan_document.h"
#include "controllers/plan_file_controller.h"

#include <kforge/plan.h>

#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QWidget>

using kforge::ui::PlanDocument;
using kforge::ui::PlanFileController;

class TestPlanFileController : public QObject {
    Q_OBJECT

private:
    static kforge::PlanEntry geluEntry()
    {
        kforge::PlanEntry entry;
        entry.function = "gelu";
        entry.provider = nlohmann::json{{"type", "AtenGeluProvider"}};
        return entry;
    }

private Q_SLOTS:
    void unsavedEditsAreKeptOrDiscardedAsAnswered()
    {
        QTemporaryDir dir;
        QWidget parent;
        PlanDocument document;
        PlanFileController files(&document, &parent, [] { return nullptr; }); // no model loaded
        files.setModalErrors(false);
        files.setPersistent(false);
        const QString saved = dir.filePath(QStringLiteral("one.kfplan.json"));
        document.addEntry(geluEntry());
        QVERIFY(files.saveAs(saved));
        QVERIFY(!document.isModified());

        document.addEntry(geluEntry()); // an edit not saved
        QSignalSpy prompted(&files, &PlanFileController::unsavedChangesPrompted);
        files.setUnsavedChanges(PlanFileController::UnsavedChanges::Cancel);
        QVERIFY(!files.newPlan());
        QCOMPARE(prompted.count(), 1);
        QCOMPARE(int(document.plan().entries.size()), 2); // kept

        files.setUnsavedChanges(PlanFileController::UnsavedChanges::Save); // saves to the plan's own file
        QVERIFY(files.open(saved));
        QCOMPARE(int(document.plan().entries.size()), 2);
        QCOMPARE(int(kforge::readPlan(saved.toStdString()).entries.size()), 2);

        document.addEntry(geluEntry());
        files.setUnsavedChanges(PlanFileController::UnsavedChanges::Discard);
        QSignalSpy status(&files, &PlanFileController::statusMessage);
        QVERIFY(files.open(saved));
        QCOMPARE(int(document.plan().entries.size()), 2); // the edit is gone
        QVERIFY(status.count() == 1 && status.at(0).at(0).toString().contains(QStringLiteral("one.kfplan.json")));
    }

    void failuresNameTheFileAndLeaveThePlan()
    {
        QTemporaryDir dir;
        QWidget parent;
        PlanDocument document;
        PlanFileController files(&document, &parent, {});
        files.setModalErrors(false);
        document.addEntry(geluEntry());
        QSignalSpy errors(&files, &PlanFileController::error);
        const QString missing = dir.filePath(QStringLiteral("missing.kfplan.json"));
        files.setUnsavedChanges(PlanFileController::UnsavedChanges::Discard);
        QVERIFY(!files.open(missing));
        QCOMPARE(errors.count(), 1);
        QVERIFY2(errors.at(0).at(0).toString().contains(missing), qPrintable(errors.at(0).at(0).toString()));
        QCOMPARE(int(document.plan().entries.size()), 1);

        QVERIFY(!files.saveAs(dir.filePath(QStringLiteral("no/such/folder/p.kfplan.json"))));
        QCOMPARE(errors.count(), 2);
        QVERIFY(!files.exportAitune(dir.filePath(QStringLiteral("no/such/folder/a.json"))));
        QCOMPARE(errors.count(), 3);
        const QString aitune = dir.filePath(QStringLiteral("a.json"));
        QVERIFY(files.exportAitune(aitune));
        QVERIFY(QFile::exists(aitune));
    }
};

QTEST_MAIN(TestPlanFileController)
#include "tst_plan_file_controller.moc"
