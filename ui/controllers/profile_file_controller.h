// SPDX-License-Identifier: Apache-2.0
#pragma once
// Profile files for the main window, on the profile side beside ProfileController and the page showing the runs:
// opening saved .kfprof runs (no model needed), saving them, exporting traces, CSV and pictures, and their file
// dialogs. Reading and writing run off the UI thread with a progress dialog and Cancel (FileTask).
#include "controllers/plan_file_controller.h"
#include "controllers/profile_display.h"
#include "item_models/profile_results.h"

#include <QObject>
#include <QString>

#include <functional>
#include <iosfwd>
#include <memory>

class QWidget;

namespace kforge {
struct ProfileRun;
}

namespace kforge::ui {

class ProfileResultsSource;

class ProfileFileController : public QObject {
    Q_OBJECT

public:
    // Opened files replace the results of `results`, which are what is saved and exported.
    ProfileFileController(ProfileResultsSource* results, ProfileDisplay* display, QWidget* dialogParent);

    void setModalErrors(bool modal) { m_modalErrors = modal; }         // off: errors are only signalled (error())
    void setPersistent(bool persistent) { m_persistent = persistent; } // off: the last folder is not remembered

    // Whether a saved run goes to a report of its own (reportOpened) instead of replacing the runs here: a profile
    // of another model than the one loaded. Unset: every file opens here.
    void setOpensAsReport(std::function<bool(const kforge::ProfileRun&)> opensAsReport)
    {
        m_opensAsReport = std::move(opensAsReport);
    }
    // False after an error (signalled, and shown in a dialog when modal) or a cancel (a status message).
    bool open(const QString& path);
    // The run shown here (A, the reference) against a run of another .kfprof (B): the pair opens in a report of its
    // own (reportOpened), its comparison table, module tree Δ and differential flame graph of these two runs.
    // `run` picks B among the file's runs (from 0); -1 asks when the file holds several.
    bool compareWith(const QString& path, int run = -1);
    void chooseToCompareWith(); // asks for the file, then compareWith
    // The pair shown with its sides swapped (B becomes the reference): its comparison and Δ made again, off the UI
    // thread. False when there is no pair.
    bool swapSides();
    // Results read from a file, shown here as saved (nothing to ask about); `origin` names the file in the header.
    void showSavedResults(const ResultsPtr& results, const QString& origin);
    bool save(const QString& path); // the baseline and the plan run, whichever exist
    bool exportChromeTrace(const QString& path);
    bool exportCsv(const QString& path); // the run shown
    bool exportChartPng(const QString& path);
    bool exportTimelinePng(const QString& path);

    // Results a study made and nobody saved: the runs shown are not the ones last saved or opened.
    bool hasUnsavedResults() const;
    // Before something replaces the results (another model, closing the window): true when there is nothing
    // unsaved, or the user saves or discards it; false when they cancel. unsavedResults() answers instead of a
    // dialog where it is not Ask (tests).
    bool keepResults();
    using UnsavedChanges = PlanFileController::UnsavedChanges;
    UnsavedChanges unsavedResults() const { return m_unsavedResults; }
    void setUnsavedResults(UnsavedChanges choice) { m_unsavedResults = choice; }

    // The File menu's dialogs: open, and a file name to save under (suggested from the model's name), "" if none.
    void chooseToOpen();
    QString chooseFileToSave(const QString& title, const QString& suffix, const QString& filter);

Q_SIGNALS:
    void opened(); // runs from a file are shown
    // A file of another model (setOpensAsReport): the window shows its results in a report of their own.
    void reportOpened(const QString& fileName, const kforge::ui::ResultsPtr& results);
    void fileUsed(const QString& path); // a .kfprof opened or saved: for the recent files
    void unsavedResultsPrompted();      // keepResults() found unsaved results and asked (or took unsavedResults())
    void statusMessage(const QString& message);
    void error(const QString& message); // one line

private:
    // A .kfprof from a file dialog titled `title`, in the folder last used (remembered when persistent); "" if none.
    QString chooseFileToOpen(const QString& title);
    // `write` streams the file on a worker thread, atomically and cancellable.
    bool writeOffTheUiThread(const QString& path, const QString& failureTitle,
                             const std::function<void(std::ostream&)>& write);
    bool exportPng(const QString& path, ProfileDisplay::Picture picture, const QString& failureTitle,
                   const QString& noRun);
    void reportFailure(const QString& title, const QString& what, const QString& error);
    void report(const QString& title, const QString& message);

    ProfileResultsSource* m_results;
    ProfileDisplay* m_display;
    QWidget* m_dialogParent;
    bool m_modalErrors = true;
    bool m_persistent = true;
    UnsavedChanges m_unsavedResults = UnsavedChanges::Ask;
    std::function<bool(const kforge::ProfileRun&)> m_opensAsReport;
    // The runs last saved or opened: results are unsaved while the source holds others.
    const void* m_savedBaseline = nullptr;
    const void* m_savedPlan = nullptr;
};

} // namespace kforge::ui
