#include "main_window.h"

#include "model_loader.h"
#include "models/format.h"
#include "models/module_tree_model.h"
#include "recent_files.h"
#include "views/module_tree_view.h"

#include <kforge/model_session.h>
#include <kforge/module_info.h>
#include <kforge/version.h>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPainter>
#include <QProgressBar>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QSvgRenderer>
#include <QToolBar>

// Q_INIT_RESOURCE must be used outside any namespace; the explicit call keeps the linker from dropping the
// resources object of this static library.
static void initKForgeResources()
{
    static const bool done = [] {
        Q_INIT_RESOURCE(resources);
        return true;
    }();
    Q_UNUSED(done);
}

namespace kforge::ui {
namespace {

const QString kBuiltinPrefix = QStringLiteral("builtin:");
const QString kModelFileFilter = QStringLiteral("TorchScript models (*.pt *.pth *.ts *.zip);;All files (*)");

bool isBuiltin(const QString& source) { return source.startsWith(kBuiltinPrefix); }

// Recent files and error messages need one spelling per model, whatever the user typed.
QString normalizedSource(const QString& source)
{
    return isBuiltin(source) ? source : QFileInfo(source).absoluteFilePath();
}

// What a message calls the model: the file name, or the builtin as the user writes it.
QString sourceLabel(const QString& source) { return isBuiltin(source) ? source : QFileInfo(source).fileName(); }

QString droppedFile(const QMimeData* mime)
{
    if (!mime || !mime->hasUrls())
        return {};
    for (const QUrl& url : mime->urls()) {
        if (url.isLocalFile())
            return url.toLocalFile();
    }
    return {};
}

QPixmap renderSvg(const QString& resource, int size, qreal devicePixelRatio)
{
    QPixmap pixmap(QSize(size, size) * devicePixelRatio);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    QSvgRenderer(resource).render(&painter);
    painter.end();
    pixmap.setDevicePixelRatio(devicePixelRatio);
    return pixmap;
}

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_loader(new ModelLoader(this)), m_recent(new RecentFiles(this)),
      m_model(new ModuleTreeModel(this))
{
    initKForgeResources();
    setObjectName(QStringLiteral("mainWindow"));
    setWindowTitle(tr("KForge Studio"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/kforge.svg")));
    setAcceptDrops(true);

    m_view = new ModuleTreeView(this);
    m_view->setModel(m_model);
    m_placeholder = new QLabel(tr("Open a TorchScript model (Ctrl+O) or drop a file here."), this);
    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setEnabled(false);
    m_pages = new QStackedWidget(this);
    m_pages->addWidget(m_placeholder);
    m_pages->addWidget(m_view);
    setCentralWidget(m_pages);

    createActions();
    createStatusBar();

    connect(m_loader, &ModelLoader::busyChanged, this, &MainWindow::setBusy);
    connect(m_loader, &ModelLoader::loaded, this, &MainWindow::showSession);
    connect(m_loader, &ModelLoader::failed, this, &MainWindow::reportFailure);
    // Queued: the menu's own "Clear" action must not be deleted while it is being triggered.
    connect(m_recent, &RecentFiles::changed, this, &MainWindow::rebuildRecentMenu, Qt::QueuedConnection);
    rebuildRecentMenu();
    resize(1100, 700);
}

MainWindow::~MainWindow() = default;

void MainWindow::createActions()
{
    QMenu* fileMenu = menuBar()->addMenu(tr("&File"));
    m_actions.open =
        fileMenu->addAction(QIcon(QStringLiteral(":/icons/open.svg")), tr("&Open…"), this, &MainWindow::chooseFile);
    m_actions.open->setShortcut(QKeySequence::Open);
    m_actions.open->setStatusTip(tr("Open a TorchScript model file"));

    m_actions.openBuiltin = fileMenu->addMenu(tr("Open &Built-in"));
    m_actions.openBuiltin->setObjectName(QStringLiteral("openBuiltinMenu"));
    for (const std::string& name : kforge::ModelSession::builtinModels()) {
        const QString source = QString::fromStdString(name);
        const QString label = isBuiltin(source) ? source.mid(kBuiltinPrefix.size()) : source;
        QAction* action = m_actions.openBuiltin->addAction(label, this, [this, source] { openSource(source); });
        action->setData(source);
    }
    m_actions.openBuiltin->setEnabled(!m_actions.openBuiltin->isEmpty());

    m_actions.openRecent = fileMenu->addMenu(tr("Open &Recent"));
    m_actions.openRecent->setObjectName(QStringLiteral("openRecentMenu"));

    fileMenu->addSeparator();
    m_actions.quit = fileMenu->addAction(tr("&Quit"), this, &QWidget::close);
    m_actions.quit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));
    m_actions.quit->setMenuRole(QAction::QuitRole);

    QMenu* helpMenu = menuBar()->addMenu(tr("&Help"));
    m_actions.about = helpMenu->addAction(tr("&About KForge Studio"), this, &MainWindow::showAbout);
    m_actions.about->setMenuRole(QAction::AboutRole);

    QToolBar* toolBar = addToolBar(tr("Main"));
    toolBar->setObjectName(QStringLiteral("mainToolBar")); // saveState() needs it
    toolBar->addAction(m_actions.open);
}

void MainWindow::createStatusBar()
{
    m_busyLabel = new QLabel(this);
    m_busyBar = new QProgressBar(this);
    m_busyBar->setRange(0, 0); // indeterminate: torch::jit::load reports no progress
    m_busyBar->setMaximumWidth(120);
    m_busyBar->setTextVisible(false);
    m_modelLabel = new QLabel(tr("No model loaded"), this);
    statusBar()->addWidget(m_busyLabel);
    statusBar()->addWidget(m_busyBar);
    statusBar()->addPermanentWidget(m_modelLabel);
    m_busyLabel->hide();
    m_busyBar->hide();
}

void MainWindow::restoreSettings()
{
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("mainWindow/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("mainWindow/state")).toByteArray());
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (m_persistent) {
        QSettings settings;
        settings.setValue(QStringLiteral("mainWindow/geometry"), saveGeometry());
        settings.setValue(QStringLiteral("mainWindow/state"), saveState());
    }
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (!droppedFile(event->mimeData()).isEmpty())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const QString file = droppedFile(event->mimeData());
    if (file.isEmpty()) {
        event->ignore();
        return;
    }
    event->acceptProposedAction();
    openSource(file);
}

void MainWindow::openSource(const QString& source) { m_loader->load(normalizedSource(source)); }

void MainWindow::chooseFile()
{
    QSettings settings;
    const QString key = QStringLiteral("lastOpenDirectory");
    const QString file = QFileDialog::getOpenFileName(this, tr("Open TorchScript Model"),
                                                      settings.value(key).toString(), kModelFileFilter);
    if (file.isEmpty())
        return;
    if (m_persistent)
        settings.setValue(key, QFileInfo(file).absolutePath());
    openSource(file);
}

void MainWindow::rebuildRecentMenu()
{
    QMenu* menu = m_actions.openRecent;
    menu->clear();
    const QStringList entries = m_recent->entries();
    for (int i = 0; i < entries.size(); ++i) {
        const QString source = entries[i];
        QString label = QDir::toNativeSeparators(source).replace(QLatin1Char('&'), QStringLiteral("&&"));
        if (i < 9)
            label = QStringLiteral("&%1  %2").arg(i + 1).arg(label);
        QAction* action = menu->addAction(label, this, [this, source] { openSource(source); });
        action->setData(source);
    }
    menu->addSeparator();
    m_actions.clearRecent = menu->addAction(tr("&Clear Recent Files"), m_recent, &RecentFiles::clear);
    menu->setEnabled(!entries.isEmpty());
}

void MainWindow::setBusy(bool busy)
{
    if (busy) {
        m_busyLabel->setText(tr("Loading %1…").arg(sourceLabel(m_loader->pendingSource())));
        statusBar()->clearMessage();
    }
    m_busyLabel->setVisible(busy);
    m_busyBar->setVisible(busy);
    Q_EMIT loadingChanged(busy);
}

void MainWindow::showSession(const QString& source, std::shared_ptr<kforge::ModelSession> session)
{
    m_session = std::move(session);
    m_source = source;
    const QString name = QString::fromStdString(m_session->displayName());
    m_model->setModules(m_session->modules(), name);
    m_view->expandAndFit();
    m_pages->setCurrentWidget(m_view);
    setWindowTitle(tr("%1 — KForge Studio").arg(name));
    updateModelStatus();
    if (m_persistent)
        m_recent->add(source);

    QStringList warnings;
    for (const std::string& warning : m_session->warnings())
        warnings << QString::fromStdString(warning);
    if (!warnings.isEmpty())
        statusBar()->showMessage(warnings.join(QStringLiteral("; ")));
    Q_EMIT modelLoaded(source);
}

void MainWindow::reportFailure(const QString& source, const QString& error)
{
    QString message = error;
    message.replace(QLatin1Char('\n'), QLatin1Char(' '));
    const QString label = sourceLabel(source);
    if (!message.contains(label))
        message = QStringLiteral("%1: %2").arg(label, message);

    const bool wasRecent = m_persistent && m_recent->contains(source);
    if (wasRecent)
        m_recent->remove(source);
    statusBar()->showMessage(tr("Could not open %1").arg(label), 10000);
    Q_EMIT loadFailed(message);

    if (m_modalErrors) {
        QMessageBox box(QMessageBox::Critical, tr("Cannot Open Model"), message, QMessageBox::Ok, this);
        if (wasRecent)
            box.setInformativeText(tr("It has been removed from the recent files."));
        box.exec();
    }
}

void MainWindow::updateModelStatus()
{
    const std::vector<kforge::ModuleInfo>& modules = m_session->modules();
    const std::int64_t parameters = modules.empty() ? 0 : modules.front().subtreeParameterCount;
    const std::int64_t bytes = modules.empty() ? 0 : modules.front().subtreeParameterBytes;
    m_modelLabel->setText(tr("%1 · %2 modules · %3 parameters")
                              .arg(QString::fromStdString(m_session->displayName()))
                              .arg(modules.size())
                              .arg(formatCompactCount(parameters)));
    m_modelLabel->setToolTip(tr("%1\n%2 parameters, %3")
                                 .arg(QDir::toNativeSeparators(m_source), formatCount(parameters), formatBytes(bytes)));
}

void MainWindow::showAbout()
{
    QMessageBox box(this);
    box.setWindowTitle(tr("About KForge Studio"));
    box.setIconPixmap(renderSvg(QStringLiteral(":/icons/kforge.svg"), 64, devicePixelRatioF()));
    box.setText(tr("<h3>KForge Studio %1</h3>").arg(QStringLiteral(KFORGE_VERSION_STRING)));
    box.setInformativeText(tr("Kernel providers for LibTorch models: see, plan and measure them.<br><br>"
                              "KForge %1<br>Qt %2 (built against %3)")
                               .arg(QStringLiteral(KFORGE_VERSION_STRING), QString::fromLatin1(qVersion()),
                                    QStringLiteral(QT_VERSION_STR)));
    box.exec();
}

bool MainWindow::isLoading() const { return m_loader->isBusy(); }

const kforge::ModelSession* MainWindow::session() const { return m_session.get(); }

QString MainWindow::source() const { return m_source; }

ModuleTreeModel* MainWindow::moduleModel() const { return m_model; }

ModuleTreeView* MainWindow::moduleView() const { return m_view; }

RecentFiles* MainWindow::recentFiles() const { return m_recent; }

const MainWindow::Actions& MainWindow::actions() const { return m_actions; }

bool MainWindow::modalErrors() const { return m_modalErrors; }

void MainWindow::setModalErrors(bool modal) { m_modalErrors = modal; }

bool MainWindow::isPersistent() const { return m_persistent; }

void MainWindow::setPersistent(bool persistent) { m_persistent = persistent; }

} // namespace kforge::ui
