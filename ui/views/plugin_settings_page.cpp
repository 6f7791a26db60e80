// SPDX-License-Identifier: Apache-2.0
#include "plugin_settings_page.h"

#include "views/semantic_text.h"
#include "application/app_settings.h"
#include "application/provider_plugins.h"

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

PluginSettingsPage::PluginSettingsPage(QWidget* parent)
    : QWidget(parent), m_loaded(new QTreeWidget(this)), m_paths(new QListWidget(this)),
      m_add(new QPushButton(QIcon(QStringLiteral(":/icons/add.svg")), tr("&Add…"), this)),
      m_remove(new QPushButton(QIcon(QStringLiteral(":/icons/remove.svg")), tr("&Remove"), this)),
      m_error(new QLabel(this)), m_note(new QLabel(this))
{
    setObjectName(QStringLiteral("pluginSettingsPage"));
    m_loaded->setObjectName(QStringLiteral("loadedPlugins"));
    m_loaded->setHeaderLabels({tr("Plugin"), tr("Provider types"), tr("ABI")});
    m_loaded->setRootIsDecorated(false);
    m_loaded->header()->setStretchLastSection(true);
    m_paths->setObjectName(QStringLiteral("startupPlugins"));
    m_error->setObjectName(QStringLiteral("pluginError"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    setSemanticText(m_error, Semantic::Error);
    m_error->hide();
    m_note->setObjectName(QStringLiteral("pluginNote"));
    m_note->setWordWrap(true);
    m_note->hide();

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_add);
    buttons->addWidget(m_remove);
    buttons->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(tr("Loaded in this session:"), this));
    layout->addWidget(m_loaded, 1);
    layout->addWidget(new QLabel(tr("Loaded at every start (with --provider-plugin and KFORGE_PROVIDER_PATH):"), this));
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
    const QString error = ensureProviderPluginLoaded(path);
    m_error->setText(error);
    m_error->setVisible(!error.isEmpty());
    if (!error.isEmpty())
        return false;
    QStringList paths = AppSettings::providerPluginPaths();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    if (!paths.contains(absolute))
        paths << absolute;
    AppSettings::setProviderPluginPaths(paths);
    refresh();
    Q_EMIT pluginsChanged();
    return true;
}

void PluginSettingsPage::removePlugin(int row)
{
    QStringList paths = AppSettings::providerPluginPaths();
    if (row < 0 || row >= paths.size())
        return;
    const QString removed = paths.takeAt(row);
    AppSettings::setProviderPluginPaths(paths);
    if (isProviderPluginLoaded(removed)) {
        m_note->setText(tr("%1 is no longer loaded at start; its providers stay available until you restart "
                           "(takes effect on restart: a loaded plugin cannot be unloaded).")
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
    const QString file = QFileDialog::getOpenFileName(this, tr("Add Provider Plugin"), QString(),
                                                      tr("Provider plugins (*.so);;All files (*)"));
    if (!file.isEmpty())
        addPlugin(file);
}

void PluginSettingsPage::refresh()
{
    m_loaded->clear();
    for (const kforge::PluginInfo& plugin : kforge::loadedProviderPlugins()) {
        QStringList types;
        for (const std::string& type : plugin.providerTypes)
            types << QString::fromStdString(type);
        const QString path = QDir::toNativeSeparators(QString::fromStdString(plugin.path));
        auto* item =
            new QTreeWidgetItem(m_loaded, {path, types.join(QStringLiteral(", ")), QString::fromStdString(plugin.abi)});
        item->setToolTip(0, path);
    }
    if (m_loaded->topLevelItemCount() == 0)
        new QTreeWidgetItem(m_loaded, {tr("(none: only the built-in providers)")});
    m_loaded->resizeColumnToContents(1);

    m_paths->clear();
    for (const QString& path : AppSettings::providerPluginPaths()) {
        auto* item = new QListWidgetItem(QDir::toNativeSeparators(path), m_paths);
        if (!isProviderPluginLoaded(path))
            item->setToolTip(tr("Not loaded in this session: it failed at start, or was added elsewhere"));
    }
    m_remove->setEnabled(m_paths->currentRow() >= 0);
}

} // namespace kforge::ui
