// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/plan.h>
#include <kforge/revalidate.h>
#include <kforge/runtime_types.h>

#include "verify_verdicts.h"

#include <QAbstractTableModel>

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace kforge::ui {

// The entries of a plan in plan order, one row each, with the validation problems of each entry and the calls its
// provider declined in the last forward, capture or profile with this plan. Edits made through setData() go to the
// edit handler (PlanDocument turns them into undoable commands); the mutators below change the plan directly and
// are what those commands call.
class PlanModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        EnabledColumn, // check box (the entry's number is the vertical header)
        ScopeColumn,
        FunctionColumn,
        ProviderColumn, // the provider type
        DeclinedColumn, // calls the provider declined in the last run with this plan; "" when none
        SettingsColumn, // the provider's settings other than "type", as compact JSON
        NoteColumn,
        ProblemsColumn,
        VerifiedColumn, // the last Verify Plan's verdict on the entry; "" until one ran on this plan
        MeasuredColumn, // the speedup the plan records for the entry, and what re-validation measured here
        ColumnCount
    };
    enum Role {
        ProblemCountRole = Qt::UserRole + 1, // int
        FunctionRole,                        // QString: the row's function, for editors of other columns
        DeclinedCallsRole,                   // qulonglong: calls the row's provider declined in the last run
    };
    Q_ENUM(Column)

    // (row, the entry as the edit would leave it, what the edit is called: "Edit scope") -> accepted
    using EditHandler = std::function<bool(int, const kforge::PlanEntry&, const QString&)>;

    explicit PlanModel(QObject* parent = nullptr);

    const kforge::Plan& plan() const { return m_plan; }
    const kforge::PlanEntry& entry(int row) const { return m_plan.entries.at(size_t(row)); }
    int entryCount() const { return int(m_plan.entries.size()); }

    void setPlan(kforge::Plan plan);
    // Where the plan was made, as saving recorded it: no row changes, so no signal and no undo step.
    void setProvenance(std::optional<kforge::Provenance> provenance) { m_plan.provenance = std::move(provenance); }
    void insertEntry(int row, kforge::PlanEntry entry);
    kforge::PlanEntry takeEntry(int row);
    void moveEntry(int from, int to);
    void replaceEntry(int row, kforge::PlanEntry entry);
    void setEditHandler(EditHandler handler);

    // Problems from validatePlan(); those with entry -1 concern the whole plan.
    void setProblems(std::vector<kforge::PlanProblem> problems);
    const std::vector<kforge::PlanProblem>& problems() const { return m_problems; }
    QStringList problemsOf(int row) const;
    QStringList planProblems() const;

    // Calls the providers declined (KernelProviderRuntime::declines(), ProfileRun::declines) in the last forward,
    // capture or profile that ran this plan, with `entry` a row of this model. Entries that do not match their
    // row (scope and function) are left out. Any change of the plan clears them: they belong to the plan that ran.
    void setDeclines(std::vector<kforge::EntryDeclines> declines);
    void clearDeclines();
    const std::vector<kforge::EntryDeclines>& declines() const { return m_declines; }
    const kforge::EntryDeclines* declinesOf(int row) const; // null when the row's provider declined nothing
    // Each enabled entry's verdict from the last Verify Plan of this plan (entryVerdicts, verify_verdicts.h); any
    // change of the plan clears them, as it clears the declines.
    void setVerdicts(std::vector<EntryVerdict> verdicts);
    const EntryVerdict* verdictOf(int row) const; // null when the row has none
    // What the last re-validation found for each entry it checked (EntryRevalidation::entry a row); set after the
    // revised entries, cleared by any later change of the plan.
    void setRevalidation(std::vector<kforge::EntryRevalidation> entries);
    const kforge::EntryRevalidation* revalidationOf(int row) const; // null when the row was not re-validated
    // Goes up with every change of the plan: whether the plan is still the one a run started with.
    std::uint64_t revision() const { return m_revision; }

    // The settings of an entry's provider without "type", as compact JSON ("" when there are none).
    static QString settingsText(const kforge::PlanEntry& entry);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

Q_SIGNALS:
    void planChanged(); // any change of the entries
    // setData() refused a value; one line, for the status bar.
    void editRejected(const QString& message);

private:
    bool submitEdit(int row, const kforge::PlanEntry& entry, const QString& what);
    void planEdited(); // a new revision: the declines go, planChanged() is emitted
    QString measuredText(int row) const;
    QString measuredToolTip(int row) const;

    kforge::Plan m_plan;
    std::vector<kforge::PlanProblem> m_problems;
    std::vector<kforge::EntryDeclines> m_declines;
    std::vector<EntryVerdict> m_verdicts;
    std::vector<kforge::EntryRevalidation> m_revalidation;
    bool m_haveDeclines = false; // a run's declines were set (possibly none) since the last change
    std::uint64_t m_revision = 0;
    EditHandler m_editHandler;
};

} // namespace kforge::ui
