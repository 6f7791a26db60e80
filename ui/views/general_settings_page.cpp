#include "general_settings_page.h"

#include "app_settings.h"

#include <QCheckBox>
#include <QFormLayout>
#include <QLabel>
#include <QSpinBox>

namespace kforge::ui {

GeneralSettingsPage::GeneralSettingsPage(QWidget* parent)
    : QWidget(parent), m_keepLeftovers(new QCheckBox(tr("Keep leftovers of failed forwards and captures"), this)),
      m_captureWarmup(new QSpinBox(this))
{
    setObjectName(QStringLiteral("generalSettingsPage"));
    m_keepLeftovers->setObjectName(QStringLiteral("keepLeftoversDefault"));
    m_keepLeftovers->setChecked(AppSettings::keepLeftovers());
    m_keepLeftovers->setToolTip(tr("The state of Run › Keep Leftovers when the window opens: patches a failed "
                                   "forward leaves behind stay in effect, to inspect them in the stacks view"));
    m_captureWarmup->setObjectName(QStringLiteral("captureWarmup"));
    m_captureWarmup->setRange(0, 100);
    m_captureWarmup->setValue(AppSettings::captureWarmupIterations());
    m_captureWarmup->setToolTip(tr("Forwards before a CUDA graph capture, so that lazy initialisation and "
                                   "workspace allocation stay out of the graph"));

    auto* layout = new QFormLayout(this);
    layout->addRow(m_keepLeftovers);
    layout->addRow(tr("Warm-up forwards before a graph capture:"), m_captureWarmup);
    auto* note =
        new QLabel(tr("Changes are saved at once; Keep Leftovers applies to windows opened from now on."), this);
    note->setWordWrap(true);
    note->setEnabled(false); // a hint, drawn like disabled text
    layout->addRow(note);

    connect(m_keepLeftovers, &QCheckBox::toggled, this, [](bool keep) { AppSettings::setKeepLeftovers(keep); });
    connect(m_captureWarmup, &QSpinBox::valueChanged, this,
            [](int count) { AppSettings::setCaptureWarmupIterations(count); });
}

QCheckBox* GeneralSettingsPage::keepLeftoversBox() const { return m_keepLeftovers; }

QSpinBox* GeneralSettingsPage::captureWarmupBox() const { return m_captureWarmup; }

} // namespace kforge::ui
