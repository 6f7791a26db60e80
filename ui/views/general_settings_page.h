#pragma once
#include <QWidget>

class QCheckBox;
class QSpinBox;

namespace kforge::ui {

// Preferences › General: defaults the window starts with. Changes are saved at once.
class GeneralSettingsPage : public QWidget {
    Q_OBJECT
public:
    explicit GeneralSettingsPage(QWidget* parent = nullptr);

    QCheckBox* keepLeftoversBox() const;
    QSpinBox* captureWarmupBox() const;

private:
    QCheckBox* m_keepLeftovers;
    QSpinBox* m_captureWarmup;
};

} // namespace kforge::ui
