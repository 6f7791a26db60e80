// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QWidget>

class QLabel;
class QMenu;
class QPushButton;
class QTreeView;

namespace kforge::ui {

class FunctionStacksModel;

// Live function stacks: per thread and function, the callable in effect and the save-and-restore entries;
// leftover patches in a warning colour with their reason and an Unwind button.
class FunctionStacksView : public QWidget {
    Q_OBJECT
public:
    explicit FunctionStacksView(FunctionStacksModel* model, QWidget* parent = nullptr);

    QTreeView* view() const;
    QPushButton* unwindButton() const;
    // What the view shows: "Live", "Paused at …", "After the last forward".
    void setCaption(const QString& caption);
    QString caption() const;

    // The menu for a row of the model; the caller owns it.
    QMenu* createContextMenu(const QModelIndex& index, QWidget* parent = nullptr);
    // Every replaceable function with a checkable "break on calls" action (the toolbar button's menu).
    QMenu* breakpointMenu() const;

Q_SIGNALS:
    void unwindRequested();
    void functionBreakpointToggled(const QString& function);

private:
    void modelReset();
    void rebuildBreakpointMenu();
    void showContextMenu(const QPoint& pos);

    FunctionStacksModel* m_model;
    QTreeView* m_view;
    QLabel* m_caption;
    QLabel* m_leftoverLabel;
    QPushButton* m_unwind;
    QMenu* m_breakpointMenu;
};

} // namespace kforge::ui
