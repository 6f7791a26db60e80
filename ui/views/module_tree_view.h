// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QTreeView>

namespace kforge::ui {

// The module tree page: a tree view tuned for wide, deep module hierarchies.
class ModuleTreeView : public QTreeView {
    Q_OBJECT
public:
    explicit ModuleTreeView(QWidget* parent = nullptr);

    // Expands `depth` levels below the top (all of them when negative) and widens the name, type and
    // parameter columns to their contents. Depth 1 is what a freshly loaded model should look like: the
    // root's children and grandchildren visible, deep models still readable.
    void expandAndFit(int depth = 1);
};

} // namespace kforge::ui
