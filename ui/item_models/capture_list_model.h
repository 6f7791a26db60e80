// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <kforge/capture.h>
#include <kforge/plan.h>
#include <kforge/runtime_types.h>

#include <QAbstractItemModel>

#include <vector>

namespace kforge::ui {

// The CUDA graph captures of a session (ModelSession::captures()), one row each, with two kinds of children:
// the providers the capture baked in (scope, function, provider) and the patches a failed capture left
// behind. A capture is "stale" when the current plan would install other providers (kforge::captureIsStale):
// its replays still run what was captured. Leftovers are "in effect" while the runtime still reports them.
class CaptureListModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { CaptureColumn, StateColumn, ScopeColumn, FunctionColumn, ProviderColumn, DetailColumn, ColumnCount };
    enum class RowKind { Capture, Provider, Leftover };
    enum Role {
        KindRole = Qt::UserRole + 1, // int (RowKind)
        CaptureIdRole,               // QString: the capture the row belongs to
        StaleRole,                   // bool, capture rows: the plan changed what it would install
        InEffectRole,                // bool, leftover rows: the patch is still installed
    };
    Q_ENUM(Column)

    explicit CaptureListModel(QObject* parent = nullptr);

    void setCaptures(std::vector<kforge::CaptureRecord> captures);
    const std::vector<kforge::CaptureRecord>& captures() const { return m_captures; }
    // Recomputes the stale marks against `plan`.
    void setPlan(const kforge::Plan& plan);
    // The leftovers the runtime reports now (RunController::leftovers()): a capture's leftover that is among
    // them is in effect, the others were unwound.
    void setLiveLeftovers(std::vector<kforge::LeftoverPatch> live);

    bool isStale(int captureRow) const;
    int leftoversInEffect() const; // over all captures
    RowKind kindOf(const QModelIndex& index) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Mark {
        bool stale = false;
        QString staleReason; // why the plan could not be compared, when it could not
    };

    void recomputeStale();
    bool inEffect(const kforge::LeftoverPatch& patch) const;
    QVariant captureData(int row, int column, int role) const;
    QVariant childData(int captureRow, int row, int column, int role) const;

    std::vector<kforge::CaptureRecord> m_captures;
    std::vector<Mark> m_marks; // parallel to m_captures
    kforge::Plan m_plan;
    std::vector<kforge::LeftoverPatch> m_live;
};

} // namespace kforge::ui
