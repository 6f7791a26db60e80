// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QTreeView>

namespace kforge::ui {

class PathElisionDelegate;

// The module tree page: a tree view tuned for wide, deep module hierarchies.
class ModuleTreeView : public QTreeView {
    Q_OBJECT
public:
    explicit ModuleTreeView(QWidget* parent = nullptr);

    // Expands `depth` levels below the top (all of them when negative) and sizes the columns up to Functions to
    // their contents in every row, collapsed ones included (a row expanded later is readable at any depth), each at
    // most kMaxFittedWidth; then the widths the user set by hand, which are remembered across models and restarts.
    // Depth 1 is what a freshly loaded model should look like: the root's children and grandchildren visible, deep
    // models still readable.
    void expandAndFit(int depth = 1);
    // How a cell too narrow for its text cuts it: a module's name keeps its end ("…self_attn"), every other cell its
    // beginning, which says what it is ("scaled_dot_product_attention (321.7 µs)" read "…on (321.7 µs)").
    Qt::TextElideMode cellElision(int column) const;
    static constexpr int kMaxFittedWidth = 480;

    // Whether widths the user sets are saved and applied (QSettings); off for runs that must leave no settings behind
    // (screenshots, tests: MainWindow::setPersistent).
    void setRemembering(bool remembering) { m_remembering = remembering; }

    // The width every row's cell of `column` needs: indentation, decoration and text (a row's own size hint).
    int contentWidth(int column) const;
    int widestHookStateWidth() const; // the Hook column's icon and longest state text

private:
    void rememberWidth(int column, int width);
    PathElisionDelegate* m_elision = nullptr; // module names keep their end, other cells their beginning
    bool m_fitting = false;                   // widths set by expandAndFit are not the user's
    bool m_remembering = true;
};

} // namespace kforge::ui
