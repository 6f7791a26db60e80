// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/module_info.h>
#include <kforge/provider_catalog.h>

#include <QWidget>

#include <vector>

class QAction;
class QLabel;
class QTableView;

namespace kforge {
class ModelSession;
}

namespace kforge::ui {

class PlanDocument;
class ProviderCatalogView;
class ProviderSettingsForm;

// The plan editor: the entries in plan order (enable box, scope, function, provider, the calls the provider
// declined in the last run with the plan, settings, note, the problems validation found), add/remove/move, and a
// settings form for the selected entry. Every edit goes through the document's undo stack.
class PlanEditorView : public QWidget {
    Q_OBJECT
public:
    struct Actions {
        QAction* add = nullptr;
        QAction* remove = nullptr;
        QAction* moveUp = nullptr;
        QAction* moveDown = nullptr;
    };

    explicit PlanEditorView(PlanDocument* document, QWidget* parent = nullptr);

    QTableView* view() const;
    ProviderSettingsForm* settingsForm() const;
    ProviderCatalogView* catalogView() const; // the drag source of providers for the module tree
    const Actions& actions() const;

    void setCatalog(std::vector<kforge::ProviderCatalogEntry> catalog);
    const std::vector<kforge::ProviderCatalogEntry>& catalog() const { return m_catalog; }
    // The model the plan is validated against (validatePlan); null: no validation.
    void setSession(const kforge::ModelSession* session, const QString& device = QStringLiteral("cpu"));
    // Where "Add" puts a new entry: the module the user is looking at.
    void setDefaultScope(const QString& path);

    int currentRow() const;
    void selectRow(int row);
    void validate();

    // The catalog entry of a provider type, or null.
    const kforge::ProviderCatalogEntry* catalogEntry(const std::string& type) const;
    QStringList providersFor(const QString& function) const;
    QStringList modulePaths() const;

private:
    void addEntry();
    void removeEntry();
    void moveEntry(int delta);
    void updateActions();
    void updateSettingsForm();

    PlanDocument* m_document;
    QTableView* m_view;
    ProviderSettingsForm* m_form;
    ProviderCatalogView* m_catalogView;
    QLabel* m_planProblems;
    Actions m_actions;
    std::vector<kforge::ProviderCatalogEntry> m_catalog;
    const kforge::ModelSession* m_session = nullptr;
    QString m_device = QStringLiteral("cpu");
    QString m_defaultScope;
};

} // namespace kforge::ui
