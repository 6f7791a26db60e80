// SPDX-License-Identifier: Apache-2.0
#include "plan_editor_view.h"

#include "views/path_elision.h"

#include "views/semantic_text.h"
#include "item_models/plan_document.h"
#include "item_models/plan_model.h"
#include "views/provider_catalog_view.h"
#include "views/provider_settings_form.h"

#include <kforge/functions.h>
#include <kforge/model_session.h>

#include <QAction>
#include <QComboBox>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QSplitter>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QToolBar>
#include <QUndoStack>
#include <QVBoxLayout>

#include <exception>

namespace kforge::ui {
namespace {

QString qs(std::string_view s) { return QString::fromUtf8(s.data(), qsizetype(s.size())); }

// Combo boxes for the columns whose values come from a list: scope (the model's module paths, editable),
// function (the replaceable functions), provider (the catalog's providers of the row's function).
class PlanItemDelegate : public PathElisionDelegate {
public:
    PlanItemDelegate(PlanEditorView* editor, QObject* parent)
        : PathElisionDelegate({PlanModel::ScopeColumn}, parent), m_editor(editor)
    {
    }

    QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem& option, const QModelIndex& index) const override
    {
        QStringList items;
        bool editable = false;
        switch (index.column()) {
        case PlanModel::ScopeColumn:
            items = m_editor->modulePaths();
            editable = true;
            break;
        case PlanModel::FunctionColumn:
            for (const kforge::Function f : kforge::allFunctions())
                items << qs(kforge::functionName(f));
            break;
        case PlanModel::ProviderColumn:
            items = m_editor->providersFor(index.data(PlanModel::FunctionRole).toString());
            editable = items.isEmpty();
            break;
        default:
            return QStyledItemDelegate::createEditor(parent, option, index);
        }
        auto* combo = new QComboBox(parent);
        combo->setEditable(editable);
        combo->addItems(items);
        return combo;
    }

    void setEditorData(QWidget* editor, const QModelIndex& index) const override
    {
        auto* combo = qobject_cast<QComboBox*>(editor);
        if (!combo) {
            QStyledItemDelegate::setEditorData(editor, index);
            return;
        }
        const QString value = index.data(Qt::EditRole).toString();
        int at = combo->findText(value);
        if (at < 0) {
            combo->addItem(value);
            at = combo->count() - 1;
        }
        combo->setCurrentIndex(at);
    }

    void setModelData(QWidget* editor, QAbstractItemModel* model, const QModelIndex& index) const override
    {
        if (auto* combo = qobject_cast<QComboBox*>(editor))
            model->setData(index, combo->currentText(), Qt::EditRole);
        else
            QStyledItemDelegate::setModelData(editor, model, index);
    }

private:
    PlanEditorView* m_editor;
};

} // namespace

PlanEditorView::PlanEditorView(PlanDocument* document, QWidget* parent)
    : QWidget(parent), m_document(document), m_view(new QTableView(this)), m_form(new ProviderSettingsForm(this)),
      m_catalogView(new ProviderCatalogView(this)), m_planProblems(new QLabel(this))
{
    setObjectName(QStringLiteral("planEditorView"));
    PlanModel* model = document->model();
    m_view->setObjectName(QStringLiteral("planTable"));
    m_view->setModel(model);
    m_view->setItemDelegate(new PlanItemDelegate(this, m_view));
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                            QAbstractItemView::SelectedClicked);
    m_view->setAlternatingRowColors(true);
    m_view->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 8);
    m_view->horizontalHeader()->setStretchLastSection(true);
    const int em = m_view->fontMetrics().horizontalAdvance(QLatin1Char('m'));
    m_view->setColumnWidth(PlanModel::EnabledColumn, 3 * em);
    m_view->setColumnWidth(PlanModel::ScopeColumn, 16 * em);
    m_view->setColumnWidth(PlanModel::FunctionColumn, 15 * em);
    m_view->setColumnWidth(PlanModel::ProviderColumn, 15 * em);
    m_view->setColumnWidth(PlanModel::DeclinedColumn, 6 * em); // next to the provider: in sight after a run
    m_view->setColumnWidth(PlanModel::SettingsColumn, 11 * em);
    m_view->setColumnWidth(PlanModel::NoteColumn, 9 * em);

    auto* toolBar = new QToolBar(this);
    toolBar->setIconSize(QSize(16, 16));
    toolBar->setToolButtonStyle(Qt::ToolButtonIconOnly);
    m_actions.add =
        toolBar->addAction(QIcon(QStringLiteral(":/icons/add.svg")), tr("Add Entry"), this, &PlanEditorView::addEntry);
    m_actions.add->setToolTip(tr("Add an entry for the module selected in the tree"));
    m_actions.remove = toolBar->addAction(QIcon(QStringLiteral(":/icons/remove.svg")), tr("Remove Entry"), this,
                                          &PlanEditorView::removeEntry);
    m_actions.remove->setShortcut(QKeySequence::Delete);
    m_actions.remove->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_actions.moveUp =
        toolBar->addAction(QIcon(QStringLiteral(":/icons/up.svg")), tr("Move Up"), this, [this] { moveEntry(-1); });
    m_actions.moveUp->setToolTip(tr("Move up: earlier entries' pre-hooks run first (R3)"));
    m_actions.moveDown =
        toolBar->addAction(QIcon(QStringLiteral(":/icons/down.svg")), tr("Move Down"), this, [this] { moveEntry(+1); });
    toolBar->addSeparator();
    QAction* undo = document->undoStack()->createUndoAction(this, tr("Undo"));
    undo->setIcon(QIcon(QStringLiteral(":/icons/undo.svg")));
    QAction* redo = document->undoStack()->createRedoAction(this, tr("Redo"));
    redo->setIcon(QIcon(QStringLiteral(":/icons/redo.svg")));
    toolBar->addAction(undo);
    toolBar->addAction(redo);
    addAction(m_actions.remove);

    m_planProblems->setObjectName(QStringLiteral("planProblems"));
    m_planProblems->setWordWrap(true);
    setSemanticText(m_planProblems, Semantic::Error);
    m_planProblems->hide();

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(m_view);
    splitter->addWidget(m_form);
    splitter->addWidget(m_catalogView);
    splitter->setStretchFactor(0, 4);
    splitter->setStretchFactor(1, 1);
    splitter->setStretchFactor(2, 1);
    splitter->setSizes({700, 240, 260});
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(toolBar);
    layout->addWidget(m_planProblems);
    layout->addWidget(splitter, 1);

    connect(document, &PlanDocument::planChanged, this, [this] {
        validate();
        updateActions();
        updateSettingsForm();
    });
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this] {
        updateActions();
        updateSettingsForm();
    });
    connect(m_form, &ProviderSettingsForm::settingsEdited, this, [this](int row, const nlohmann::json& provider) {
        if (row < 0 || row >= m_document->model()->entryCount())
            return;
        kforge::PlanEntry entry = m_document->model()->entry(row);
        entry.provider = provider;
        m_document->editEntry(row, entry, tr("Edit provider settings"));
    });
    // Undo and redo of an insert or a move: follow the entry, so the form shows what changed.
    connect(model, &QAbstractItemModel::rowsInserted, this,
            [this](const QModelIndex&, int first) { selectRow(first); });
    // A plan just opened shows its first entry's settings.
    connect(model, &QAbstractItemModel::modelReset, this, [this] { selectRow(0); });
    connect(model, &QAbstractItemModel::rowsMoved, this,
            [this](const QModelIndex&, int start, int, const QModelIndex&, int row) {
                selectRow(row > start ? row - 1 : row);
            });
    updateActions();
    updateSettingsForm();
}

QTableView* PlanEditorView::view() const { return m_view; }

ProviderSettingsForm* PlanEditorView::settingsForm() const { return m_form; }

ProviderCatalogView* PlanEditorView::catalogView() const { return m_catalogView; }

const PlanEditorView::Actions& PlanEditorView::actions() const { return m_actions; }

void PlanEditorView::setCatalog(std::vector<kforge::ProviderCatalogEntry> catalog)
{
    m_catalog = std::move(catalog);
    m_catalogView->setCatalog(m_catalog);
    updateSettingsForm();
}

void PlanEditorView::setSession(const kforge::ModelSession* session, const QString& device)
{
    m_session = session;
    m_device = device;
    m_catalogView->setDevice(device);
    validate();
}

void PlanEditorView::setDefaultScope(const QString& path) { m_defaultScope = path; }

int PlanEditorView::currentRow() const
{
    const QModelIndex current = m_view->currentIndex();
    return current.isValid() ? current.row() : -1;
}

void PlanEditorView::selectRow(int row)
{
    if (row < 0 || row >= m_document->model()->entryCount())
        return;
    m_view->setCurrentIndex(m_document->model()->index(row, PlanModel::ScopeColumn));
    m_view->scrollTo(m_view->currentIndex());
}

void PlanEditorView::validate()
{
    PlanModel* model = m_document->model();
    if (!m_session) {
        model->setProblems({});
        m_planProblems->hide();
        return;
    }
    std::vector<kforge::PlanProblem> problems;
    try {
        problems = kforge::validatePlan(m_document->plan(), *m_session, m_device.toStdString());
    } catch (const std::exception& e) {
        problems.push_back({-1, "", "validation", e.what(), ""});
    }
    model->setProblems(std::move(problems));
    const QStringList planWide = model->planProblems();
    m_planProblems->setText(planWide.join(QLatin1Char('\n')));
    m_planProblems->setVisible(!planWide.isEmpty());
}

const kforge::ProviderCatalogEntry* PlanEditorView::catalogEntry(const std::string& type) const
{
    for (const kforge::ProviderCatalogEntry& entry : m_catalog) {
        if (entry.typeName == type)
            return &entry;
    }
    return nullptr;
}

QStringList PlanEditorView::providersFor(const QString& function) const
{
    QStringList out;
    const std::string name = function.toStdString();
    for (const kforge::ProviderCatalogEntry& entry : m_catalog) {
        if (entry.function == name)
            out << QString::fromStdString(entry.typeName);
    }
    return out;
}

QStringList PlanEditorView::modulePaths() const
{
    QStringList paths;
    if (m_session) {
        for (const kforge::ModuleInfo& module : m_session->modules())
            paths << QString::fromStdString(module.path);
    }
    return paths;
}

void PlanEditorView::addEntry()
{
    kforge::PlanEntry entry;
    entry.scope = m_defaultScope.toStdString();
    // The first function called under the scope that some provider replaces; else the catalog's first.
    const kforge::ModuleInfo* module = m_session ? m_session->findModule(entry.scope) : nullptr;
    if (module) {
        for (const auto& [function, calls] : module->subtreeFunctions) {
            const QStringList providers = providersFor(QString::fromStdString(function));
            if (calls > 0 && !providers.isEmpty()) {
                entry.function = function;
                entry.provider = {{"type", providers.first().toStdString()}};
                break;
            }
        }
    }
    if (entry.function.empty() && !m_catalog.empty()) {
        entry.function = m_catalog.front().function;
        entry.provider = {{"type", m_catalog.front().typeName}};
    }
    if (entry.function.empty())
        entry.function = std::string(kforge::functionName(kforge::Function::Gelu));
    const int row = currentRow() < 0 ? -1 : currentRow() + 1;
    m_document->addEntry(entry, row);
}

void PlanEditorView::removeEntry()
{
    const int row = currentRow();
    if (row < 0)
        return;
    m_document->removeEntry(row);
    selectRow(std::min(row, m_document->model()->entryCount() - 1));
}

void PlanEditorView::moveEntry(int delta)
{
    const int row = currentRow();
    const int to = row + delta;
    if (row < 0 || to < 0 || to >= m_document->model()->entryCount())
        return;
    m_document->moveEntry(row, to);
    selectRow(to);
}

void PlanEditorView::updateActions()
{
    const int row = currentRow();
    const int count = m_document->model()->entryCount();
    m_actions.remove->setEnabled(row >= 0);
    m_actions.moveUp->setEnabled(row > 0);
    m_actions.moveDown->setEnabled(row >= 0 && row + 1 < count);
}

void PlanEditorView::updateSettingsForm()
{
    const int row = currentRow();
    const PlanModel* model = m_document->model();
    if (row < 0 || row >= model->entryCount()) {
        m_form->setEntry(-1, nullptr, nullptr);
        return;
    }
    const kforge::PlanEntry& entry = model->entry(row);
    m_form->setEntry(row, &entry, catalogEntry(entry.providerType()));
}

} // namespace kforge::ui
