// SPDX-License-Identifier: Apache-2.0
#include "plugin_settings_page.h"

#include "views/semantic_text.h"
#include "application/app_settings.h"
#include "application/provider_plugins.h"

#include <kforge/op_libraries.h>
#include <kforge/plugins.h>

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace kforge::ui {
namespace {

QString nativePath(const std::string& path) { return QDir::toNativeSeparators(QString::fromStdString(path)); }

QString joined(const std::vector<std::string>& names)
{
    QStringList out;
    for (const std::string& name : names)
        out << QString::fromStdString(name);
    return out.join(QStringLiteral(", "));
}

} // namespace

LibraryKind providerPluginKind()
{
    LibraryKind kind;
    kind.objectPrefix = QStringLiteral("plugin");
    kind.startupLabel =
        PluginSettingsPage::tr("Loaded at every start (with --provider-plugin and KFORGE_PROVIDER_PATH):");
    kind.addTitle = PluginSettingsPage::tr("Add Provider Plugin");
    kind.fileFilter = PluginSettingsPage::tr("Provider plugins (*.so);;All files (*)");
    kind.loadedHeaders = {PluginSettingsPage::tr("Plugin"), PluginSettingsPage::tr("Provider types"),
                          PluginSettingsPage::tr("ABI")};
    kind.noneLoaded = PluginSettingsPage::tr("(none: only the built-in providers)");
    kind.ensureLoaded = ensureProviderPluginLoaded;
    kind.isLoaded = isProviderPluginLoaded;
    kind.loadedRows = [] {
        QList<QStringList> rows;
        for (const kforge::PluginInfo& plugin : kforge::loadedProviderPlugins())
            rows.push_back({nativePath(plugin.path), joined(plugin.providerTypes), QString::fromStdString(plugin.abi)});
        return rows;
    };
    kind.storedPaths = AppSettings::providerPluginPaths;
    kind.setStoredPaths = AppSettings::setProviderPluginPaths;
    return kind;
}

LibraryKind opLibraryKind()
{
    LibraryKind kind;
    kind.objectPrefix = QStringLiteral("opLibrary");
    kind.startupLabel = PluginSettingsPage::tr("Loaded at every start, before any model (with --ops-library and "
                                               "KFORGE_OPS_PATH): a model calling their ops loads only after them.");
    kind.addTitle = PluginSettingsPage::tr("Add Op Library");
    kind.fileFilter = PluginSettingsPage::tr("Op libraries (*.so);;All files (*)");
    kind.loadedHeaders = {PluginSettingsPage::tr("Library"), PluginSettingsPage::tr("Ops")};
    kind.noneLoaded = PluginSettingsPage::tr("(none: only LibTorch's ops)");
    kind.ensureLoaded = ensureOpLibraryLoaded;
    kind.isLoaded = isOpLibraryLoaded;
    kind.loadedRows = [] {
        QList<QStringList> rows;
        for (const kforge::OpLibraryInfo& library : kforge::loadedOpLibraries())
            rows.push_back({nativePath(library.path), joined(library.ops)});
        return rows;
    };
    kind.storedPaths = AppSettings::opLibraryPaths;
    kind.setStoredPaths = AppSettings::setOpLibraryPaths;
    return kind;
}

PluginSettingsPage::PluginSettingsPage(LibraryKind kind, QWidget* parent)
    : QWidget(parent), m_kind(std::move(kind)), m_loaded(new QTreeWidget(this)), m_paths(new QListWidget(this)),
      m_add(new QPushButton(QIcon(QStringLiteral(":/icons/add.svg")), tr("&Add…"), this)),
      m_remove(new QPushButton(QIcon(QStringLiteral(":/icons/remove.svg")), tr("&Remove"), this)),
      m_error(new QLabel(this)), m_note(new QLabel(this))
{
    const QString& prefix = m_kind.objectPrefix;
    setObjectName(prefix + QStringLiteral("SettingsPage"));
    m_loaded->setObjectName(prefix == QStringLiteral("plugin") ? QStringLiteral("loadedPlugins")
                                                               : prefix + QStringLiteral("Loaded"));
    m_loaded->setHeaderLabels(m_kind.loadedHeaders);
    m_loaded->setRootIsDecorated(false);
    m_loaded->header()->setStretchLastSection(true);
    m_paths->setObjectName(prefix == QStringLiteral("plugin") ? QStringLiteral("startupPlugins")
                                                              : prefix + QStringLiteral("Startup"));
    m_error->setObjectName(prefix + QStringLiteral("Error"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    setSemanticText(m_error, Semantic::Error);
    m_error->hide();
    m_note->setObjectName(prefix + QStringLiteral("Note"));
    m_note->setWordWrap(true);
    m_note->hide();

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_add);
    buttons->addWidget(m_remove);
    buttons->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(tr("Loaded in this session:"), this));
    layout->addWidget(m_loaded, 1);
    auto* startupLabel = new QLabel(m_kind.startupLabel, this);
    startupLabel->setWordWrap(true);
    layout->addWidget(startupLabel);
    layout->addWidget(m_paths, 1);
    layout->addLayout(buttons);
    layout->addWidget(m_error);
    layout->addWidget(m_note);

    connect(m_add, &QPushButton::clicked, this, &PluginSettingsPage::chooseAndAdd);
    connect(m_remove, &QPushButton::clicked, this, [this] { removePlugin(m_paths->currentRow()); });
    connect(m_paths, &QListWidget::currentRowChanged, this, [this](int row) { m_remove->setEnabled(row >= 0); });
    refresh();
}

bool PluginSettingsPage::addPlugin(const QString& path)
{
    const QString error = m_kind.ensureLoaded(path);
    m_error->setText(error);
    m_error->setVisible(!error.isEmpty());
    if (!error.isEmpty())
        return false;
    QStringList paths = m_kind.storedPaths();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    if (!paths.contains(absolute))
        paths << absolute;
    m_kind.setStoredPaths(paths);
    refresh();
    Q_EMIT pluginsChanged();
    return true;
}

void PluginSettingsPage::removePlugin(int row)
{
    QStringList paths = m_kind.storedPaths();
    if (row < 0 || row >= paths.size())
        return;
    const QString removed = paths.takeAt(row);
    m_kind.setStoredPaths(paths);
    if (m_kind.isLoaded(removed)) {
        m_note->setText(tr("%1 is no longer loaded at start; it stays loaded until you restart "
                           "(takes effect on restart: a loaded library cannot be unloaded).")
                            .arg(QFileInfo(removed).fileName()));
        m_note->show();
    }
    refresh();
}

QTreeWidget* PluginSettingsPage::loadedPlugins() const { return m_loaded; }

QListWidget* PluginSettingsPage::startupPlugins() const { return m_paths; }

QString PluginSettingsPage::errorText() const { return m_error->isHidden() ? QString() : m_error->text(); }

QString PluginSettingsPage::noteText() const { return m_note->isHidden() ? QString() : m_note->text(); }

void PluginSettingsPage::chooseAndAdd()
{
    const QString file = QFileDialog::getOpenFileName(this, m_kind.addTitle, QString(), m_kind.fileFilter);
    if (!file.isEmpty())
        addPlugin(file);
}

void PluginSettingsPage::refresh()
{
    m_loaded->clear();
    for (const QStringList& row : m_kind.loadedRows()) {
        auto* item = new QTreeWidgetItem(m_loaded, row);
        item->setToolTip(0, row.value(0));
    }
    if (m_loaded->topLevelItemCount() == 0)
        new QTreeWidgetItem(m_loaded, {m_kind.noneLoaded});
    m_loaded->resizeColumnToContents(1);

    m_paths->clear();
    for (const QString& path : m_kind.storedPaths()) {
        auto* item = new QListWidgetItem(QDir::toNativeSeparators(path), m_paths);
        if (!m_kind.isLoaded(path))
            item->setToolTip(tr("Not loaded in this session: it failed at start, or was added elsewhere"));
    }
    m_remove->setEnabled(m_paths->currentRow() >= 0);
}

} // namespace kforge::ui
