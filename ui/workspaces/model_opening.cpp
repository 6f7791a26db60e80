// SPDX-License-Identifier: Apache-2.0
#include "workspaces/model_opening.h"

#include "application/app_icons.h"
#include "application/recent_files.h"
#include "application/status_reporter.h"
#include "controllers/model_loader.h"
#include "item_models/format.h"
#include "window_actions.h"

#include <kforge/model_session.h>

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QMessageBox>
#include <QProgressBar>
#include <QSettings>
#include <QStatusBar>

namespace kforge::ui {
namespace {

const QString kBuiltinPrefix = QStringLiteral("builtin:");
const QString kModelFileFilter =
    QStringLiteral("Models (*.pt *.pth *.ts *.zip *.pt2);;TorchScript models (*.pt *.pth *.ts *.zip);;"
                   "torch.export packages (*.pt2);;All files (*)");

bool isBuiltin(const QString& source) { return source.startsWith(kBuiltinPrefix); }

// Recent files and error messages need one spelling per model, whatever the user typed.
QString normalizedSource(const QString& source)
{
    return isBuiltin(source) ? source : QFileInfo(source).absoluteFilePath();
}

// What a message calls the model: the file name, or the builtin as the user writes it.
QString sourceLabel(const QString& source) { return isBuiltin(source) ? source : QFileInfo(source).fileName(); }

} // namespace

ModelOpening::ModelOpening(const WorkspaceContext& context, RecentFiles* recent)
    : QObject(context.window), m_context(context), m_recent(recent), m_loader(new ModelLoader(this)),
      m_chooseProgram(programDialog(context.window))
{
    connect(m_loader, &ModelLoader::busyChanged, this, &ModelOpening::setBusy);
    connect(m_loader, &ModelLoader::loaded, this, &ModelOpening::loaded);
    connect(m_loader, &ModelLoader::failed, this, &ModelOpening::reportFailure);
    // Queued: the menu's own "Clear" action must not be deleted while it is being triggered.
    connect(m_recent, &RecentFiles::changed, this, &ModelOpening::rebuildRecentMenu, Qt::QueuedConnection);
}

void ModelOpening::addFileActions(QMenu* menu)
{
    WindowActions& a = *m_context.actions;
    a.open = menu->addAction(icon("open"), tr("&Open Model…"), this, &ModelOpening::chooseFile);
    a.open->setShortcut(QKeySequence::Open);
    a.open->setStatusTip(tr("Open a TorchScript model file"));
    a.openBuiltin = menu->addMenu(tr("Open &Built-in"));
    a.openBuiltin->setObjectName(QStringLiteral("openBuiltinMenu"));
    for (const std::string& name : kforge::ModelSession::builtinModels()) {
        const QString source = QString::fromStdString(name);
        const QString label = isBuiltin(source) ? source.mid(kBuiltinPrefix.size()) : source;
        a.openBuiltin->addAction(label, this, [this, source] { openSource(source); })->setData(source);
    }
    a.openBuiltin->setEnabled(!a.openBuiltin->isEmpty());
    a.openRecent = menu->addMenu(tr("Open &Recent"));
    a.openRecent->setObjectName(QStringLiteral("openRecentMenu"));
    rebuildRecentMenu();
}

void ModelOpening::addStatusWidgets(QStatusBar* bar)
{
    m_busyLabel = new QLabel(bar);
    m_busyBar = new QProgressBar(bar);
    m_busyBar->setRange(0, 0); // indeterminate: torch::jit::load reports no progress
    m_busyBar->setMaximumWidth(120);
    m_busyBar->setTextVisible(false);
    bar->addWidget(m_busyLabel);
    bar->addWidget(m_busyBar);
    m_busyLabel->hide();
    m_busyBar->hide();
}

void ModelOpening::openSource(const QString& source, const std::optional<ProgramChoice>& choice)
{
    if (m_mayReplace && !m_mayReplace())
        return;
    const QString normalized = normalizedSource(source);
    const std::optional<ProgramChoice> chosen = choice ? choice : programToOpen(normalized, m_chooseProgram);
    if (chosen)
        m_loader->load(normalized, *chosen);
}

void ModelOpening::chooseFile()
{
    QSettings settings;
    const QString key = QStringLiteral("lastOpenDirectory");
    const QString file = QFileDialog::getOpenFileName(m_context.window, tr("Open TorchScript Model"),
                                                      settings.value(key).toString(), kModelFileFilter);
    if (file.isEmpty())
        return;
    if (m_context.status->isPersistent())
        settings.setValue(key, QFileInfo(file).absolutePath());
    openSource(file);
}

bool ModelOpening::isLoading() const { return m_loader->isBusy(); }

void ModelOpening::remember(const QString& source)
{
    if (m_context.status->isPersistent())
        m_recent->add(source);
}

void ModelOpening::rebuildRecentMenu()
{
    QMenu* menu = m_context.actions->openRecent;
    if (!menu)
        return;
    menu->clear();
    const QStringList entries = m_recent->entries();
    for (int i = 0; i < entries.size(); ++i) {
        const QString source = entries[i];
        QString label = QDir::toNativeSeparators(source).replace(QLatin1Char('&'), QStringLiteral("&&"));
        if (i < 9)
            label = QStringLiteral("&%1  %2").arg(i + 1).arg(label);
        menu->addAction(label, this, [this, source] { openSource(source); })->setData(source);
    }
    // Plans and profiles follow the models, by file name (the full path in the status tip).
    const QStringList documents = m_recent->documents();
    if (!documents.isEmpty())
        menu->addSection(tr("Plans and profiles"));
    for (const QString& path : documents) {
        QAction* action = menu->addAction(QFileInfo(path).fileName().replace(QLatin1Char('&'), QStringLiteral("&&")),
                                          this, [this, path] { Q_EMIT documentRequested(path); });
        action->setData(path);
        action->setStatusTip(QDir::toNativeSeparators(path));
    }
    menu->addSeparator();
    m_context.actions->clearRecent = menu->addAction(tr("&Clear Recent Files"), m_recent, &RecentFiles::clear);
    menu->setEnabled(!entries.isEmpty() || !documents.isEmpty());
}

void ModelOpening::setBusy(bool busy)
{
    if (busy) {
        m_busyLabel->setText(tr("Loading %1…").arg(sourceLabel(m_loader->pendingSource())));
        m_context.status->clear();
    }
    m_busyLabel->setVisible(busy);
    m_busyBar->setVisible(busy);
    Q_EMIT loadingChanged(busy);
}

void ModelOpening::reportFailure(const QString& source, const QString& error)
{
    QString message = oneLine(error);
    const QString label = sourceLabel(source);
    if (!message.contains(label))
        message = QStringLiteral("%1: %2").arg(label, message);

    const bool wasRecent = m_context.status->isPersistent() && m_recent->contains(source);
    if (wasRecent)
        m_recent->remove(source);
    m_context.status->show(tr("Could not open %1").arg(label));
    Q_EMIT loadFailed(message);

    if (m_context.status->modalErrors()) {
        QMessageBox box(QMessageBox::Critical, tr("Cannot Open Model"), message, QMessageBox::Ok, m_context.window);
        if (wasRecent)
            box.setInformativeText(tr("It has been removed from the recent files."));
        box.exec();
    }
}

} // namespace kforge::ui
