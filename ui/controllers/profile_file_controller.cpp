// SPDX-License-Identifier: Apache-2.0
#include "controllers/profile_file_controller.h"

#include "controllers/file_task.h"
#include "controllers/profile_results_source.h"
#include "item_models/format.h"

#include <kforge/atomic_file.h>
#include <kforge/profile_export.h>
#include <kforge/study.h>

#include <QDir>
#include <QFileDialog>
#include <QInputDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QSettings>

#include <memory>
#include <vector>

namespace kforge::ui {
namespace {

const QString kProfileDirectoryKey = QStringLiteral("lastProfileDirectory");
const QString kProfileFileFilter = QStringLiteral("KForge profiles (*.kfprof);;All files (*)");

// "builtin:tiny-gpt" and "/models/net.pt" suggest "tiny-gpt" and "net" as file names.
QString baseNameOf(const std::string& model)
{
    const QString name = QString::fromStdString(model).section(QLatin1Char(':'), -1).section(QLatin1Char('/'), -1);
    const QString base = QFileInfo(name).completeBaseName();
    return base.isEmpty() ? QStringLiteral("profile") : base;
}

// Writes the runs in `format` through the exporter registry, as the CLI writes them; the runs are shared with the
// worker, which may outlive a cancelled wait.
std::function<void(std::ostream&)> exportWriter(const char* format, std::shared_ptr<const kforge::ProfileRun> baseline,
                                                std::shared_ptr<const kforge::ProfileRun> plan)
{
    const kforge::ProfileExporter& exporter = kforge::profileExporter(format);
    return [&exporter, baseline = std::move(baseline), plan = std::move(plan)](std::ostream& out) {
        exporter.write(kforge::studyRuns(baseline.get(), plan.get()), out);
    };
}

} // namespace

ProfileFileController::ProfileFileController(ProfileResultsSource* results, ProfileDisplay* display,
                                             QWidget* dialogParent)
    : QObject(dialogParent), m_results(results), m_display(display), m_dialogParent(dialogParent)
{
}

void ProfileFileController::report(const QString& title, const QString& message)
{
    Q_EMIT statusMessage(message);
    Q_EMIT error(message);
    if (m_modalErrors)
        QMessageBox::critical(m_dialogParent, title, message);
}

bool ProfileFileController::writeOffTheUiThread(const QString& path, const QString& failureTitle,
                                                const std::function<void(std::ostream&)>& write)
{
    QString error;
    const auto written = FileTask::run<bool>(
        m_dialogParent, tr("Writing %1…").arg(QFileInfo(path).fileName()),
        [file = path.toStdString(), write](const std::atomic<bool>& cancelled) {
            kforge::writeFileStreaming(file, [&](std::ostream& out) {
                CancellableOutput stoppable(out, cancelled);
                write(stoppable);
                stoppable.flush();
            });
            return true;
        },
        &error);
    if (!written)
        reportFailure(failureTitle, tr("Writing %1").arg(QFileInfo(path).fileName()), error);
    return written.has_value();
}

void ProfileFileController::reportFailure(const QString& title, const QString& what, const QString& error)
{
    if (error == QLatin1String("cancelled")) // the user's choice: no error dialog
        Q_EMIT statusMessage(tr("%1 cancelled").arg(what));
    else
        report(title, oneLine(error));
}

bool ProfileFileController::open(const QString& path)
{
    const QString name = QFileInfo(path).fileName();
    // Read, paired as `kforge report` pairs them (by label, else by whether a run used a plan, else in file order),
    // and every view's data made on the reader's thread.
    struct Opened {
        ResultsPtr results;
        std::string treeMismatch;
    };
    QString error;
    auto loaded = FileTask::run<Opened>(
        m_dialogParent, tr("Opening %1…").arg(name),
        [file = QDir::toNativeSeparators(path).toStdString(),
         tables = tablesToCompute(false, m_results->shownTable())](const std::atomic<bool>&) {
            const std::vector<kforge::SavedRun> saved = kforge::loadProfiles(file);
            const kforge::PairedRuns pair = kforge::pairSavedRuns(saved);
            const auto shared = [](const kforge::SavedRun* run) {
                return run ? std::make_shared<const kforge::ProfileRun>(run->run) : nullptr;
            };
            return Opened{makeProfileResults(shared(pair.baseline), shared(pair.plan), tables), pair.treeMismatch};
        },
        &error);
    if (!loaded) {
        reportFailure(tr("Cannot Open Profile"), tr("Opening %1").arg(name), error);
        return false;
    }
    const ProfileResults& results = *loaded->results;
    if (results.empty()) {
        report(tr("Cannot Open Profile"), tr("%1 holds no profile run").arg(name));
        return false;
    }
    const kforge::ProfileRun& any = results.baseline ? *results.baseline.run : *results.plan.run;
    const QString what = results.both()     ? tr("baseline and plan runs")
                         : results.baseline ? tr("a baseline run")
                                            : tr("a run with a plan");
    if (m_opensAsReport && m_opensAsReport(any)) { // of another model: its own report, nothing here replaced
        Q_EMIT fileUsed(QFileInfo(path).absoluteFilePath());
        Q_EMIT reportOpened(name, loaded->results);
        Q_EMIT statusMessage(
            tr("Opened %1 in its own report: %2 of %3").arg(name, what, QString::fromStdString(any.model)));
        return true;
    }
    if (m_results->isMeasuring()) {
        report(tr("Cannot Open Profile"), tr("Cannot open %1: a profile is running").arg(name));
        return false;
    }
    if (!keepResults()) // asked once the file proved readable: unsaved results on screen are about to go
        return false;
    showSavedResults(loaded->results, name);
    Q_EMIT fileUsed(QFileInfo(path).absoluteFilePath());
    Q_EMIT opened();
    Q_EMIT statusMessage(tr("Opened %1: %2 of %3").arg(name, what, QString::fromStdString(any.model)) +
                         (loaded->treeMismatch.empty()
                              ? QString()
                              : QStringLiteral("; ") + QString::fromStdString(loaded->treeMismatch)));
    return true;
}

bool ProfileFileController::compareWith(const QString& path, int run)
{
    const QString name = QFileInfo(path).fileName();
    const std::shared_ptr<const kforge::ProfileRun> reference = m_display->shownRun();
    if (!reference) {
        report(tr("Cannot Compare"), tr("There is no run shown to compare %1 with").arg(name));
        return false;
    }
    QString error;
    auto saved = FileTask::run<std::vector<kforge::SavedRun>>(
        m_dialogParent, tr("Opening %1…").arg(name),
        [file = QDir::toNativeSeparators(path).toStdString()](const std::atomic<bool>&) {
            return kforge::loadProfiles(file);
        },
        &error);
    if (!saved) {
        reportFailure(tr("Cannot Compare"), tr("Opening %1").arg(name), error);
        return false;
    }
    if (saved->empty()) {
        report(tr("Cannot Compare"), tr("%1 holds no profile run").arg(name));
        return false;
    }
    if (run < 0 && saved->size() > 1) { // which of the file's runs
        QStringList labels;
        for (size_t i = 0; i < saved->size(); ++i)
            labels << tr("Run %1%2")
                          .arg(i + 1)
                          .arg((*saved)[i].label.empty()
                                   ? QString()
                                   : QStringLiteral(": ") + QString::fromStdString((*saved)[i].label));
        bool chosen = false;
        const QString label = QInputDialog::getItem(m_dialogParent, tr("Compare With"),
                                                    tr("%1 holds %2 runs; compare with:").arg(name).arg(labels.size()),
                                                    labels, 0, false, &chosen);
        if (!chosen)
            return false;
        run = int(labels.indexOf(label));
    }
    run = std::max(run, 0);
    if (size_t(run) >= saved->size()) {
        report(tr("Cannot Compare"), tr("%1 holds %2 run(s), no run %3").arg(name).arg(saved->size()).arg(run + 1));
        return false;
    }
    auto candidate = std::make_shared<const kforge::ProfileRun>(std::move((*saved)[size_t(run)].run));
    auto pair = FileTask::run<ResultsPtr>(
        m_dialogParent, tr("Comparing with %1…").arg(name),
        [reference, candidate, tables = tablesToCompute(false, m_results->shownTable())](const std::atomic<bool>&) {
            return makeProfileResults(reference, candidate, tables);
        },
        &error);
    if (!pair) {
        reportFailure(tr("Cannot Compare"), tr("Comparing with %1").arg(name), error);
        return false;
    }
    Q_EMIT fileUsed(QFileInfo(path).absoluteFilePath());
    Q_EMIT reportOpened(tr("%1 vs %2").arg(baseNameOf(reference->model), name), *pair);
    Q_EMIT statusMessage(tr("Comparing the run shown (A) with run %1 of %2 (B)").arg(run + 1).arg(name));
    return true;
}

bool ProfileFileController::swapSides()
{
    const ResultsPtr shown = m_results->results();
    if (!shown->both() || m_results->isMeasuring())
        return false;
    QString error;
    auto swapped = FileTask::run<ResultsPtr>(
        m_dialogParent, tr("Swapping sides…"),
        [shown, tables = tablesToCompute(false, m_results->shownTable())](const std::atomic<bool>&) {
            return makeProfileResults(shown->plan.run, shown->baseline.run, tables, shown.get());
        },
        &error);
    if (!swapped) {
        reportFailure(tr("Cannot Swap Sides"), tr("Swapping sides"), error);
        return false;
    }
    m_results->setResults(*swapped);
    Q_EMIT statusMessage(tr("Sides swapped: the reference is now the other run"));
    return true;
}

void ProfileFileController::chooseToCompareWith()
{
    if (const QString file = chooseFileToOpen(tr("Compare With")); !file.isEmpty())
        compareWith(file);
}

void ProfileFileController::showSavedResults(const ResultsPtr& results, const QString& origin)
{
    m_results->setResults(results);
    m_savedBaseline = results->baseline.run.get();
    m_savedPlan = results->plan.run.get();
    m_display->setOrigin(origin);
}

bool ProfileFileController::save(const QString& path)
{
    const auto& baseline = m_results->results()->baseline.run;
    const auto& plan = m_results->results()->plan.run;
    if (!baseline && !plan) {
        report(tr("Cannot Save Profile"), tr("There is no profile to save: run one first."));
        return false;
    }
    if (!writeOffTheUiThread(path, tr("Cannot Save Profile"), exportWriter("kfprof", baseline, plan)))
        return false;
    m_savedBaseline = baseline.get();
    m_savedPlan = plan.get();
    Q_EMIT statusMessage(tr("Saved %1").arg(QDir::toNativeSeparators(path)));
    Q_EMIT fileUsed(QFileInfo(path).absoluteFilePath());
    return true;
}

bool ProfileFileController::hasUnsavedResults() const
{
    const auto& baseline = m_results->results()->baseline.run;
    const auto& plan = m_results->results()->plan.run;
    return (baseline || plan) && (baseline.get() != m_savedBaseline || plan.get() != m_savedPlan);
}

bool ProfileFileController::keepResults()
{
    if (!hasUnsavedResults())
        return true;
    Q_EMIT unsavedResultsPrompted();
    UnsavedChanges choice = m_unsavedResults;
    if (choice == UnsavedChanges::Ask) {
        const auto answer =
            QMessageBox::warning(m_dialogParent, tr("Unsaved Profile"),
                                 tr("The profile results on screen (%1) are not saved and will be lost.")
                                     .arg(m_results->results()->both() ? tr("baseline and plan") : tr("one run")),
                                 QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
        choice = answer == QMessageBox::Save      ? UnsavedChanges::Save
                 : answer == QMessageBox::Discard ? UnsavedChanges::Discard
                                                  : UnsavedChanges::Cancel;
    }
    switch (choice) {
    case UnsavedChanges::Save: {
        const QString path = chooseFileToSave(tr("Save Profile"), QStringLiteral(".kfprof"), kProfileFileFilter);
        return !path.isEmpty() && save(path);
    }
    case UnsavedChanges::Discard:
        return true;
    default:
        return false;
    }
}

bool ProfileFileController::exportChromeTrace(const QString& path)
{
    const auto& baseline = m_results->results()->baseline.run;
    const auto& plan = m_results->results()->plan.run;
    if (!baseline && !plan) {
        report(tr("Cannot Export Trace"), tr("There is no profile to export: run one first."));
        return false;
    }
    // The exporter names the lanes as `kforge compare --trace` does: "host" for one run, "host (plan)" beside both.
    const auto write = exportWriter("chrome-trace", baseline, plan);
    if (!writeOffTheUiThread(path, tr("Cannot Export Trace"), write))
        return false;
    Q_EMIT statusMessage(tr("Exported %1").arg(QDir::toNativeSeparators(path)));
    return true;
}

bool ProfileFileController::exportCsv(const QString& path)
{
    const auto run = m_display->shownRun();
    if (!run) {
        report(tr("Cannot Export CSV"), tr("There is no profile to export: run one first."));
        return false;
    }
    if (!writeOffTheUiThread(path, tr("Cannot Export CSV"), exportWriter("csv", run, nullptr)))
        return false;
    Q_EMIT statusMessage(tr("Exported %1").arg(QDir::toNativeSeparators(path)));
    return true;
}

bool ProfileFileController::exportChartPng(const QString& path)
{
    return exportPng(path, ProfileDisplay::Picture::Chart, tr("Cannot Export Chart"),
                     tr("There is no profile to chart: run one first."));
}

bool ProfileFileController::exportTimelinePng(const QString& path)
{
    return exportPng(path, ProfileDisplay::Picture::Timeline, tr("Cannot Export Timeline"),
                     tr("There is no profile to draw: run one first."));
}

bool ProfileFileController::exportPng(const QString& path, ProfileDisplay::Picture picture, const QString& failureTitle,
                                      const QString& noRun)
{
    QString error;
    if (!m_display->shownRun())
        error = noRun;
    else if (!m_display->savePicture(picture, path, &error) && error.isEmpty())
        error = tr("Cannot write %1").arg(QDir::toNativeSeparators(path));
    if (!error.isEmpty()) {
        report(failureTitle, error);
        return false;
    }
    Q_EMIT statusMessage(tr("Exported %1").arg(QDir::toNativeSeparators(path)));
    return true;
}

QString ProfileFileController::chooseFileToOpen(const QString& title)
{
    QSettings settings;
    const QString file = QFileDialog::getOpenFileName(
        m_dialogParent, title, settings.value(kProfileDirectoryKey).toString(), kProfileFileFilter);
    if (!file.isEmpty() && m_persistent)
        settings.setValue(kProfileDirectoryKey, QFileInfo(file).absolutePath());
    return file;
}

void ProfileFileController::chooseToOpen()
{
    if (const QString file = chooseFileToOpen(tr("Open Profile")); !file.isEmpty())
        open(file);
}

QString ProfileFileController::chooseFileToSave(const QString& title, const QString& suffix, const QString& filter)
{
    QSettings settings;
    const auto run = m_display->shownRun();
    const QString suggestion = QDir(settings.value(kProfileDirectoryKey).toString())
                                   .filePath(baseNameOf(run ? run->model : std::string()) + suffix);
    const QString file = QFileDialog::getSaveFileName(m_dialogParent, title, suggestion, filter);
    if (!file.isEmpty() && m_persistent)
        settings.setValue(kProfileDirectoryKey, QFileInfo(file).absolutePath());
    return file;
}

} // namespace kforge::ui
