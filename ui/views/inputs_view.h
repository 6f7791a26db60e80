// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QStringList>
#include <QWidget>

class QAction;
class QLabel;
class QTableWidget;

namespace kforge::ui {

// The Inputs panel: each argument of the model's forward with the tensor it gets (dtype and shape) and where the
// inputs come from (the model's examples, random tensors from specs, or a torch.save file), with buttons for
// File › Set Inputs and File › Load Inputs.
class InputsView : public QWidget {
    Q_OBJECT
public:
    explicit InputsView(QWidget* parent = nullptr);

    void setActions(QAction* setSpecs, QAction* loadFile);
    // One row per argument; `descriptions` are dtype[shape] per input (ModelSession::describeInputs), `source`
    // says where they come from. Empty lists show the placeholder.
    void setInputs(const QStringList& arguments, const QStringList& descriptions, const QString& source);
    QTableWidget* table() const { return m_table; }
    QString source() const;

private:
    QTableWidget* m_table;
    QLabel* m_source;
    QAction* m_setSpecs = nullptr;
    QAction* m_loadFile = nullptr;
};

} // namespace kforge::ui
