#pragma once
#include <kforge/plan.h>

#include <QAbstractTableModel>

#include <functional>
#include <vector>

namespace kforge::ui {

// The entries of a plan in plan order, one row each, with the validation problems of each entry. Edits made
// through setData() go to the edit handler (PlanDocument turns them into undoable commands); the mutators
// below change the plan directly and are what those commands call.
class PlanModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        EnabledColumn, // check box (the entry's number is the vertical header)
        ScopeColumn,
        FunctionColumn,
        ProviderColumn, // the provider type
        SettingsColumn, // the provider's settings other than "type", as compact JSON
        NoteColumn,
        ProblemsColumn,
        ColumnCount
    };
    enum Role {
        ProblemCountRole = Qt::UserRole + 1, // int
        FunctionRole,                        // QString: the row's function, for editors of other columns
    };
    Q_ENUM(Column)

    // (row, the entry as the edit would leave it, what the edit is called: "Edit scope") -> accepted
    using EditHandler = std::function<bool(int, const kforge::PlanEntry&, const QString&)>;

    explicit PlanModel(QObject* parent = nullptr);

    const kforge::Plan& plan() const { return m_plan; }
    const kforge::PlanEntry& entry(int row) const { return m_plan.entries.at(size_t(row)); }
    int entryCount() const { return int(m_plan.entries.size()); }

    void setPlan(kforge::Plan plan);
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

    kforge::Plan m_plan;
    std::vector<kforge::PlanProblem> m_problems;
    EditHandler m_editHandler;
};

} // namespace kforge::ui
