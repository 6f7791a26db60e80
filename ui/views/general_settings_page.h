// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <QWidget>

class QCheckBox;
class QComboBox;
class QSpinBox;

namespace kforge::ui {

// Preferences › General: defaults the window starts with. Changes are saved at once.
class GeneralSettingsPage : public QWidget {
    Q_OBJECT
public:
    explicit GeneralSettingsPage(QWidget* parent = nullptr);

    QCheckBox* keepLeftoversBox() const;
    QSpinBox* captureWarmupBox() const;
    QComboBox* graphExecutorCombo() const { return m_graphExecutor; }
    QSpinBox* intraOpThreadsBox() const { return m_intraOpThreads; }

private:
    QCheckBox* m_keepLeftovers;
    QSpinBox* m_captureWarmup;
    QComboBox* m_graphExecutor;
    QSpinBox* m_intraOpThreads;
};

} // namespace kforge::ui
