// SPDX-License-Identifier: Apache-2.0
#include "general_settings_page.h"

#include "application/app_settings.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QSpinBox>

namespace kforge::ui {

GeneralSettingsPage::GeneralSettingsPage(QWidget* parent)
    : QWidget(parent), m_keepLeftovers(new QCheckBox(tr("Keep leftovers of failed forwards and captures"), this)),
      m_captureWarmup(new QSpinBox(this)), m_graphExecutor(new QComboBox(this)), m_intraOpThreads(new QSpinBox(this))
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

    m_graphExecutor->setObjectName(QStringLiteral("graphExecutor"));
    m_graphExecutor->addItem(tr("Direct (as scripted, first result at once)"),
                             QVariant::fromValue(int(kforge::GraphExecutor::Direct)));
    m_graphExecutor->addItem(tr("Optimized (LibTorch's profiling executor)"),
                             QVariant::fromValue(int(kforge::GraphExecutor::Optimized)));
    m_graphExecutor->setCurrentIndex(m_graphExecutor->findData(int(AppSettings::graphExecutor())));
    m_graphExecutor->setToolTip(
        tr("How TorchScript runs forwards of models opened from now on. Direct runs the graph as scripted: the "
           "first forward is as fast as the next, nothing is fused. Optimized is what a LibTorch deployment runs: "
           "the first forwards profile and optimise the graph (seconds on very large models) and CUDA fuses "
           "elementwise ops (off while a plan is active). Profiles record which ran."));

    m_intraOpThreads->setObjectName(QStringLiteral("intraOpThreads"));
    m_intraOpThreads->setRange(0, AppSettings::kMaxIntraOpThreads);
    m_intraOpThreads->setSpecialValueText(tr("LibTorch's default (one per core)"));
    m_intraOpThreads->setValue(AppSettings::intraOpThreads());
    m_intraOpThreads->setToolTip(
        tr("LibTorch's intra-op threads for models opened from now on (kforge --threads). Fewer threads give steadier "
           "CPU timings: with one, a compare's baseline and plan no longer wait on the thread pool's wake-ups. The "
           "profile header says how many ran."));

    auto* layout = new QFormLayout(this);
    layout->addRow(m_keepLeftovers);
    layout->addRow(tr("Warm-up forwards before a graph capture:"), m_captureWarmup);
    layout->addRow(tr("TorchScript graph executor:"), m_graphExecutor);
    layout->addRow(tr("Intra-op threads:"), m_intraOpThreads);
    auto* note =
        new QLabel(tr("Changes are saved at once; Keep Leftovers applies to windows opened from now on, the graph "
                      "executor and the threads to models opened from now on."),
                   this);
    note->setWordWrap(true);
    note->setEnabled(false); // a hint, drawn like disabled text
    layout->addRow(note);

    connect(m_keepLeftovers, &QCheckBox::toggled, this, [](bool keep) { AppSettings::setKeepLeftovers(keep); });
    connect(m_graphExecutor, &QComboBox::currentIndexChanged, this,
            [this] { AppSettings::setGraphExecutor(kforge::GraphExecutor(m_graphExecutor->currentData().toInt())); });
    connect(m_intraOpThreads, &QSpinBox::valueChanged, this,
            [](int threads) { AppSettings::setIntraOpThreads(threads); });
    connect(m_captureWarmup, &QSpinBox::valueChanged, this,
            [](int count) { AppSettings::setCaptureWarmupIterations(count); });
}

QCheckBox* GeneralSettingsPage::keepLeftoversBox() const { return m_keepLeftovers; }

QSpinBox* GeneralSettingsPage::captureWarmupBox() const { return m_captureWarmup; }

} // namespace kforge::ui
