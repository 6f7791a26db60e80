// SPDX-License-Identifier: Apache-2.0
#include "plan_document.h"

#include "format.h"
#include "plan_model.h"

#include <kforge/error.h>

#include <QFileInfo>
#include <QUndoCommand>
#include <QUndoStack>

#include <exception>

namespace kforge::ui {
namespace {

QString entryLabel(const kforge::PlanEntry& entry)
{
    return QStringLiteral("%1 in %2").arg(QString::fromStdString(entry.function), formatModulePath(entry.scope));
}

class InsertEntry : public QUndoCommand {
public:
    InsertEntry(PlanModel* model, int row, kforge::PlanEntry entry)
        : m_model(model), m_row(row), m_entry(std::move(entry))
    {
        setText(PlanDocument::tr("Add %1").arg(entryLabel(m_entry)));
    }
    void redo() override { m_model->insertEntry(m_row, m_entry); }
    void undo() override { m_model->takeEntry(m_row); }

private:
    PlanModel* m_model;
    int m_row;
    kforge::PlanEntry m_entry;
};

class RemoveEntry : public QUndoCommand {
public:
    RemoveEntry(PlanModel* model, int row) : m_model(model), m_row(row), m_entry(model->entry(row))
    {
        setText(PlanDocument::tr("Remove %1").arg(entryLabel(m_entry)));
    }
    void redo() override { m_model->takeEntry(m_row); }
    void undo() override { m_model->insertEntry(m_row, m_entry); }

private:
    PlanModel* m_model;
    int m_row;
    kforge::PlanEntry m_entry;
};

class MoveEntry : public QUndoCommand {
public:
    MoveEntry(PlanModel* model, int from, int to) : m_model(model), m_from(from), m_to(to)
    {
        setText(to < from ? PlanDocument::tr("Move entry up") : PlanDocument::tr("Move entry down"));
    }
    void redo() override { m_model->moveEntry(m_from, m_to); }
    void undo() override { m_model->moveEntry(m_to, m_from); }

private:
    PlanModel* m_model;
    int m_from;
    int m_to;
};

class EditEntry : public QUndoCommand {
public:
    EditEntry(PlanModel* model, int row, kforge::PlanEntry after, const QString& description)
        : m_model(model), m_row(row), m_before(model->entry(row)), m_after(std::move(after))
    {
        setText(description);
    }
    void redo() override { m_model->replaceEntry(m_row, m_after); }
    void undo() override { m_model->replaceEntry(m_row, m_before); }

private:
    PlanModel* m_model;
    int m_row;
    kforge::PlanEntry m_before;
    kforge::PlanEntry m_after;
};

class ReplaceEntries : public QUndoCommand {
public:
    ReplaceEntries(PlanModel* model, kforge::Plan after, const QString& description)
        : m_model(model), m_before(model->plan()), m_after(std::move(after))
    {
        setText(description);
    }
    void redo() override { m_model->setPlan(m_after); }
    void undo() override { m_model->setPlan(m_before); }

private:
    PlanModel* m_model;
    kforge::Plan m_before;
    kforge::Plan m_after;
};

bool fail(QString* error, const QString& message)
{
    if (error)
        *error = QString(message).replace(QLatin1Char('\n'), QLatin1Char(' '));
    return false;
}

} // namespace

PlanDocument::PlanDocument(QObject* parent)
    : QObject(parent), m_model(new PlanModel(this)), m_undo(new QUndoStack(this))
{
    m_model->setEditHandler([this](int row, const kforge::PlanEntry& entry, const QString& description) {
        editEntry(row, entry, description);
        return true;
    });
    connect(m_model, &PlanModel::planChanged, this, &PlanDocument::planChanged);
    connect(m_undo, &QUndoStack::cleanChanged, this, [this](bool clean) { Q_EMIT modifiedChanged(!clean); });
}

PlanDocument::~PlanDocument()
{
    // The commands point at the model: clear them while it still exists.
    m_undo->clear();
}

PlanModel* PlanDocument::model() const { return m_model; }

QUndoStack* PlanDocument::undoStack() const { return m_undo; }

const kforge::Plan& PlanDocument::plan() const { return m_model->plan(); }

QString PlanDocument::filePath() const { return m_filePath; }

bool PlanDocument::isModified() const { return !m_undo->isClean(); }

void PlanDocument::newPlan() { setPlan(kforge::Plan{}); }

void PlanDocument::replaceEntries(const kforge::Plan& plan, const QString& description)
{
    kforge::Plan after = m_model->plan();
    after.entries = plan.entries;
    if (plan.provenance) // an optimised plan brings where it was measured
        after.provenance = plan.provenance;
    m_undo->push(new ReplaceEntries(m_model, std::move(after), description));
}

void PlanDocument::setPlan(kforge::Plan plan, const QString& filePath)
{
    m_undo->clear(); // emits cleanChanged(true) when there were unsaved edits
    m_model->setPlan(std::move(plan));
    setFilePath(filePath);
    Q_EMIT planReplaced();
}

bool PlanDocument::load(const QString& path, QString* error)
{
    try {
        kforge::Plan plan = kforge::readPlan(path.toStdString());
        setPlan(std::move(plan), QFileInfo(path).absoluteFilePath());
        return true;
    } catch (const std::exception& e) {
        return fail(error, QString::fromUtf8(e.what()));
    }
}

bool PlanDocument::save(const QString& path, QString* error, const kforge::ModelSession* model)
{
    try {
        kforge::Plan saved = plan();
        if (model)
            kforge::stampModel(saved, *model);
        kforge::ensureProvenance(saved, "cpu", "KernelForge Studio");
        kforge::savePlan(saved, path.toStdString());
        m_model->setProvenance(saved.provenance); // the document is what the file holds
    } catch (const std::exception& e) {
        return fail(error, QString::fromUtf8(e.what()));
    }
    setFilePath(QFileInfo(path).absoluteFilePath());
    m_undo->setClean();
    return true;
}

bool PlanDocument::exportAitune(const QString& path, QString* error) const
{
    try {
        kforge::writeFileAtomically(path.toStdString(), kforge::exportAitune(plan()));
        return true;
    } catch (const std::exception& e) {
        return fail(error, QString::fromUtf8(e.what()));
    }
}

void PlanDocument::addEntry(const kforge::PlanEntry& entry, int row)
{
    if (row < 0 || row > m_model->entryCount())
        row = m_model->entryCount();
    m_undo->push(new InsertEntry(m_model, row, entry));
}

void PlanDocument::removeEntry(int row)
{
    if (row < 0 || row >= m_model->entryCount())
        return;
    m_undo->push(new RemoveEntry(m_model, row));
}

void PlanDocument::moveEntry(int from, int to)
{
    const int count = m_model->entryCount();
    if (from == to || from < 0 || to < 0 || from >= count || to >= count)
        return;
    m_undo->push(new MoveEntry(m_model, from, to));
}

void PlanDocument::editEntry(int row, const kforge::PlanEntry& entry, const QString& description)
{
    if (row < 0 || row >= m_model->entryCount())
        return;
    m_undo->push(new EditEntry(m_model, row, entry, description));
}

void PlanDocument::setEntryEnabled(int row, bool enabled)
{
    if (row < 0 || row >= m_model->entryCount() || m_model->entry(row).enabled == enabled)
        return;
    kforge::PlanEntry entry = m_model->entry(row);
    entry.enabled = enabled;
    editEntry(row, entry, enabled ? tr("Enable entry") : tr("Disable entry"));
}

void PlanDocument::setFilePath(const QString& path)
{
    if (path == m_filePath)
        return;
    m_filePath = path;
    Q_EMIT filePathChanged(path);
}

} // namespace kforge::ui
